use super::scalar::unorm16;
use crate::format;

#[test]
fn unorm16_matches_float_to_unorm_on_zero_one() {
    let mut rng = penumbra_testkit::Rng::xorshift32(0x1234_5678);
    let check = |d: f32| assert_eq!(u32::from(unorm16(d)), format::float_to_unorm(d, 16), "{d}");
    for code in 0..=65535u32 {
        let d = code as f32 / 65535.0;
        check(d);
        check(f32::from_bits(d.to_bits().saturating_sub(1)));
        check(f32::from_bits(d.to_bits() + 1).min(1.0));
        // Half-way points between codes.
        check(((f64::from(code) + 0.5) / 65535.0).min(1.0) as f32);
    }
    for _ in 0..1_000_000 {
        let bits = rng.next_u32();
        check((bits >> 8) as f32 / (1u32 << 24) as f32);
    }
    check(0.0);
    check(1.0);
    check(f32::MIN_POSITIVE);
}

/// `groups_of` (used by both SIMD kernels): the groups cover the part's columns, stay inside
/// the buffer's row and inside what `Area::fits_groups` checked, and are never more than the
/// aligned ones.
#[test]
fn groups_cover_the_columns_inside_the_checked_row() {
    let mut rng = penumbra_testkit::Rng::xorshift64(0x6772_6f75_7073);
    let mut shifted = 0;
    for _ in 0..200_000 {
        let lanes = if rng.below_mod(2) == 0 { 8 } else { 16 };
        let stride = lanes * (1 + rng.below_mod(8) as i32);
        let origin = [rng.below_mod(300) as i32, rng.below_mod(300) as i32];
        let x0 = origin[0] + rng.below_mod(stride as u64) as i32;
        let x1 = x0 + rng.below_mod((origin[0] + stride - x0) as u64) as i32;
        let area = super::Area {
            origin,
            stride: stride as usize,
            clip: [x0, origin[1], x1, origin[1]],
        };
        assert!(area.fits_groups(stride as usize, lanes as usize));
        let xs = x0 + rng.below_mod((x1 - x0 + 1) as u64) as i32;
        // Mostly narrow parts, as most triangles are.
        let reach = (x1 - xs + 1).min(if rng.below_mod(4) == 0 {
            stride
        } else {
            lanes + 4
        });
        let xe = xs + rng.below_mod(reach as u64) as i32;
        let (xa, groups) = super::groups_of(&area, xs, xe, lanes);
        let aligned = origin[0] + ((xs - origin[0]) & !(lanes - 1));
        let aligned_groups = (xe - aligned) / lanes + 1;
        let end = xa + lanes * groups - 1;
        let what = format!("{area:?} xs {xs} xe {xe} lanes {lanes}: {xa}, {groups}");
        assert!(xa >= origin[0] && xa <= xs && end >= xe, "{what}");
        assert!(end < origin[0] + stride, "{what}: past the row");
        assert!(
            end < aligned + lanes * aligned_groups,
            "{what}: past the checked group"
        );
        assert!(
            groups <= aligned_groups && groups == (xe - xs) / lanes + 1,
            "{what}"
        );
        shifted += usize::from(groups < aligned_groups);
    }
    assert!(shifted > 10_000, "{shifted} parts took fewer groups");
}

/// `Tri::compact`'s promise, which lets the SIMD kernels skip their per-tile range check: every
/// edge function at the pixel centres of a compact triangle's bounds, widened by 15 pixels left
/// and right (the most a kernel's groups reach past a part), fits in 32 bits. The edges are
/// linear, so the corners of that rectangle bound them. Triangles up to and just past the span
/// limit, partly off the target, at random sub-pixel positions.
#[test]
fn compact_triangles_have_edges_in_32_bits_over_their_widened_bounds() {
    use crate::format::Format;
    use crate::raster::RasterState;
    use crate::raster::setup::{COMPACT_SPAN, Context, SUB_BITS};
    let (w, h) = (2048u32, 2048u32);
    let ctx = Context::new(w, h, Format::D32Float, &RasterState::default());
    let mut rng = penumbra_testkit::Rng::xorshift64(0x636f_6d70_6163);
    let mut tris = Vec::new();
    let (mut compact, mut at_limit) = (0, 0);
    for _ in 0..50_000 {
        let span = f64::from(COMPACT_SPAN) * rng.f64_in(0.0, 1.05);
        let base = [rng.f64_in(-40.0, 2088.0), rng.f64_in(-40.0, 2088.0)];
        let v: [super::super::setup::Vertex; 3] = std::array::from_fn(|_| {
            // Often on the span's ends, to reach its limit.
            let mut at = || match rng.below_mod(3) {
                0 => 0.0,
                1 => span,
                _ => span * rng.f64_in(0.0, 1.0),
            };
            let (x, y) = (base[0] + at(), base[1] + at());
            let clip = glam::Vec4::new(
                (2.0 * x / f64::from(w) - 1.0) as f32,
                (1.0 - 2.0 * y / f64::from(h)) as f32,
                0.5,
                1.0,
            );
            ctx.vertex(clip)
        });
        tris.clear();
        ctx.triangle(
            [&v[0], &v[1], &v[2]],
            Some(crate::raster::CullMode::None),
            &mut tris,
        );
        for t in tris.iter().filter(|t| t.compact) {
            compact += 1;
            let spread = |c: [i32; 3]| c.iter().max().unwrap() - c.iter().min().unwrap();
            at_limit += usize::from(spread(t.x).max(spread(t.y)) > (COMPACT_SPAN - 2) << SUB_BITS);
            let [x0, y0, x1, y1] = t.bbox.map(i32::from);
            for i in 0..3 {
                for (x, y) in [(x0 - 15, y0), (x1 + 15, y0), (x0 - 15, y1), (x1 + 15, y1)] {
                    let (e, _, _) = super::edge_at(t, i, x, y);
                    assert!(
                        e.unsigned_abs() <= i32::MAX as u64,
                        "{t:?}: edge {i} at ({x}, {y}): {e}"
                    );
                }
            }
        }
    }
    assert!(
        compact > 30_000 && at_limit > 500,
        "{compact} compact, {at_limit} near the limit"
    );
}
