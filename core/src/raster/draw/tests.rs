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
