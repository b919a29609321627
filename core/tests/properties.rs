//! Property tests of the filtering invariants (SPEC §2.11 R69, R75 for anisotropic filtering,
//! R96 for min/max), filter encode∘decode, and reference quantization.

use penumbra_core::desc::filter::raw;
use penumbra_core::format::{CompareRef, float_to_unorm};
use penumbra_core::texture::MipFilter;
use penumbra_core::{
    AddressMode, ComparisonFunc, Filter, Format, Sampler, SamplerDesc, Texture, TextureDesc,
};
use proptest::prelude::*;

/// Every address mode (the index strategies below are `0..5`).
const MODES: [AddressMode; 5] = AddressMode::ALL;

fn texture(values: &[f32], size: u32) -> Texture {
    let desc = TextureDesc::new_2d(Format::R32Float, size, size)
        .with_mip_levels(32 - size.leading_zeros());
    Texture::from_level0_f32(desc, values, MipFilter::Average).unwrap()
}

fn coord() -> impl Strategy<Value = f32> {
    prop_oneof![-2.0f32..3.0, Just(0.0), Just(0.5), Just(1.0), -1e6f32..1e6]
}

prop_compose! {
    fn scene()(size in prop::sample::select(vec![1u32, 2, 4, 8]))
        (values in prop::collection::vec(-4.0f32..4.0, (size * size) as usize), size in Just(size),
         mode_u in 0usize..5, mode_v in 0usize..5, border in -2.0f32..2.0)
        -> (Texture, Vec<f32>, AddressMode, AddressMode, f32) {
        (texture(&values, size), values, MODES[mode_u], MODES[mode_v], border)
    }
}

fn desc(filter: Filter, u: AddressMode, v: AddressMode, border: f32) -> SamplerDesc {
    let mut d = SamplerDesc::new(filter);
    d.address_u = u;
    d.address_v = v;
    d.border_color = [border, border, border, 1.0];
    d.max_anisotropy = 8;
    d
}

/// Every texel value that can enter a footprint: all levels' texels and the border.
fn range(tex: &Texture, border: f32) -> (f32, f32) {
    let desc = tex.desc();
    let mut lo = border;
    let mut hi = border;
    for mip in 0..desc.mip_levels {
        let [w, h, _] = desc.level_size(mip);
        for y in 0..h {
            for x in 0..w {
                let v = tex.load(mip, 0, [x, y, 0])[0];
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    (lo, hi)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn filtered_result_lies_within_the_taps_r69((tex, _, u, v, border) in scene(), cu in coord(), cv in coord(), lod in -1.0f32..5.0,
                                                filter in prop::sample::select(vec![Filter::MinMagMipLinear, Filter::MinMagMipPoint, Filter::MinLinearMagPointMipLinear, Filter::Anisotropic])) {
        let s = Sampler::new(desc(filter, u, v, border)).unwrap();
        let (lo, hi) = range(&tex, border);
        let r = s.sample_level(Some(&tex), [cu, cv], lod, ()).unwrap()[0];
        prop_assert!(r >= lo && r <= hi, "{} not in [{}, {}]", r, lo, hi);
    }

    #[test]
    fn constant_texture_gives_constant_result_r69(c in -4.0f32..4.0, size in prop::sample::select(vec![1u32, 2, 4, 8]), cu in coord(), cv in coord(),
                                                  gx in -1.0f32..1.0, gy in -1.0f32..1.0, mode in 0usize..5) {
        let tex = texture(&vec![c; (size * size) as usize], size);
        for filter in [Filter::MinMagMipLinear, Filter::Anisotropic, Filter::MinimumAnisotropic, Filter::MaximumMinMagMipLinear] {
            let s = Sampler::new(desc(filter, MODES[mode], MODES[mode], c)).unwrap();
            let r = s.sample_grad(Some(&tex), [cu, cv], [gx, gy * 0.25, 0.0], [gy, gx * 0.5, 0.0], ()).unwrap()[0];
            prop_assert_eq!(r.to_bits(), c.to_bits(), "{}", filter);
        }
    }

    #[test]
    fn linear_result_is_monotonic_in_the_weights_r69(a in -4.0f32..4.0, b in -4.0f32..4.0, u1 in 0.25f32..0.75, u2 in 0.25f32..0.75) {
        // Two texels a, b: moving the sample towards b moves the result towards b.
        let tex = Texture::from_f32(TextureDesc::new_2d(Format::R32Float, 2, 1), &[a, b]).unwrap();
        let s = Sampler::new(SamplerDesc::new(Filter::MinMagMipLinear)).unwrap();
        let (lo, hi) = if u1 <= u2 { (u1, u2) } else { (u2, u1) };
        let r_lo = s.sample_level(Some(&tex), [lo, 0.5], 0.0, ()).unwrap()[0];
        let r_hi = s.sample_level(Some(&tex), [hi, 0.5], 0.0, ()).unwrap()[0];
        if b >= a { prop_assert!(r_lo <= r_hi) } else { prop_assert!(r_lo >= r_hi) }
    }

    #[test]
    fn anisotropic_invariants_r75((tex, _, u, v, border) in scene(), cu in coord(), cv in coord(), g in 0.001f32..0.5, stretch in 1.0f32..16.0, angle in 0.0f32..6.3) {
        let (dx, dy) = ([g * stretch * angle.cos(), g * stretch * angle.sin(), 0.0], [-g * angle.sin(), g * angle.cos(), 0.0]);
        let aniso = Sampler::new(desc(Filter::Anisotropic, u, v, border)).unwrap();
        let (lo, hi) = range(&tex, border);
        let r = aniso.sample_grad(Some(&tex), [cu, cv], dx, dy, ()).unwrap()[0];
        prop_assert!(r >= lo && r <= hi);
        // MaxAnisotropy 1: identical to trilinear at the same LOD.
        let mut d1 = desc(Filter::Anisotropic, u, v, border);
        d1.max_anisotropy = 1;
        let tri = Sampler::new(desc(Filter::MinMagMipLinear, u, v, border)).unwrap();
        let one = Sampler::new(d1).unwrap();
        prop_assert_eq!(one.sample_grad(Some(&tex), [cu, cv], dx, dy, ()).unwrap(), tri.sample_grad(Some(&tex), [cu, cv], dx, dy, ()).unwrap());
    }

    #[test]
    fn min_max_return_a_fetched_value_r96((tex, values, u, v, border) in scene(), cu in coord(), cv in coord(), lod in -1.0f32..4.0) {
        for filter in [Filter::MinimumMinMagMipLinear, Filter::MaximumMinMagMipLinear, Filter::MinimumAnisotropic] {
            let s = Sampler::new(desc(filter, u, v, border)).unwrap();
            let r = s.sample_level(Some(&tex), [cu, cv], lod, ()).unwrap()[0];
            let fetched = values.contains(&r) || r == border || {
                let d = tex.desc();
                (1..d.mip_levels).any(|m| { let [w, h, _] = d.level_size(m); (0..w).any(|x| (0..h).any(|y| tex.load(m, 0, [x, y, 0])[0] == r)) })
            };
            prop_assert!(fetched, "{} returned {} which no tap holds", filter, r);
        }
    }

    #[test]
    fn reference_quantization_is_monotonic_r82(a in -0.5f32..1.5, b in -0.5f32..1.5, bits in prop::sample::select(vec![8u32, 16, 24])) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(float_to_unorm(lo, bits) <= float_to_unorm(hi, bits));
        let q = |r: f32| match Format::D16Unorm.quantize_reference(r) { CompareRef::Unorm(q) => q, CompareRef::Float(_) => unreachable!() };
        prop_assert!(q(lo) <= q(hi));
    }

    #[test]
    fn pcf_result_is_the_passing_weight_fraction_r80(depths in prop::collection::vec(0.0f32..1.0, 16), cu in -0.2f32..1.2, cv in -0.2f32..1.2, r in 0.0f32..1.0) {
        let tex = Texture::from_f32(TextureDesc::new_2d(Format::R32Float, 4, 4), &depths).unwrap();
        let s = Sampler::new(SamplerDesc::comparison(Filter::ComparisonMinMagLinearMipPoint, ComparisonFunc::LessEqual)).unwrap();
        let lit = s.sample_cmp_level_zero(Some(&tex), [cu, cv], r, ()).unwrap();
        prop_assert!((0.0..=1.0).contains(&lit));
        // A multiple of 2^-16: sums of 8-bit × 8-bit weights.
        prop_assert_eq!((lit * 65536.0).fract(), 0.0);
    }
}

#[test]
fn encode_decode_is_the_identity_for_every_filter_r19() {
    for f in Filter::ALL {
        let v = f.raw();
        let re = if f.is_anisotropic() {
            if raw::decode_mip_filter(v) == 1 {
                raw::encode_anisotropic_filter(raw::decode_filter_reduction(v))
            } else {
                raw::encode_min_mag_anisotropic_mip_point_filter(raw::decode_filter_reduction(v))
            }
        } else {
            raw::encode_basic_filter(
                raw::decode_min_filter(v),
                raw::decode_mag_filter(v),
                raw::decode_mip_filter(v),
                raw::decode_filter_reduction(v),
            )
        };
        assert_eq!(re, v, "{f}");
        assert_eq!(Filter::from_raw(re).unwrap(), f);
    }
}
