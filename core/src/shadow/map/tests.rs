//! Unit tests of the map's private helpers.

use super::batched::first_texel;
use crate::sample::address::linear_fixed;

#[test]
fn first_texel_is_linear_fixed_shifted() {
    // Every 1/1024 step (ties of the ×256 rounding included) over a 4096-texel face, the
    // edges of the fast range, and values that take the reference way.
    let steps = (-2048..4096 * 1024 + 2048).map(|k| k as f32 / 1024.0 - 0.5);
    let edges = [
        4_194_303.5f32,
        4_194_304.0,
        -4_194_304.0,
        1e9,
        -1e9,
        f32::NAN,
        f32::INFINITY,
    ];
    for v in steps.chain(edges) {
        assert_eq!(first_texel(v), linear_fixed(v) >> 8, "{v}");
    }
}
