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
