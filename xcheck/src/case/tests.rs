//! Unit tests of the case generator.

use penumbra_core::{AddressMode, ComparisonFunc, Filter};

use super::*;

#[test]
fn lavapipe_unorm_is_off_for_the_documented_code_counts() {
    // SCHEMA.md: 126 of 256 R8 codes and 512 of 65536 D16 codes are 1 ulp off R1.
    let off = |bits: u32| {
        let max = (1u32 << bits) - 1;
        (0..=max)
            .filter(|&k| lavapipe_unorm(k, bits) != k as f32 / max as f32)
            .count()
    };
    assert_eq!(off(8), 126);
    assert_eq!(off(16), 512);
}

#[test]
fn sampler_maps_to_the_d3d12_equivalent() {
    let s = SamplerSpec {
        address: [
            wgpu::AddressMode::Repeat,
            wgpu::AddressMode::MirrorRepeat,
            wgpu::AddressMode::ClampToBorder,
        ],
        mag: wgpu::FilterMode::Linear,
        min: wgpu::FilterMode::Nearest,
        mip: wgpu::MipmapFilterMode::Linear,
        lod_min: 0.25,
        lod_max: 3.0,
        compare: Some(wgpu::CompareFunction::GreaterEqual),
        border: Some(wgpu::SamplerBorderColor::OpaqueBlack),
    };
    let d = s.d3d();
    assert_eq!(d.filter, Filter::ComparisonMinPointMagMipLinear);
    assert_eq!(
        [d.address_u, d.address_v, d.address_w],
        [AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border]
    );
    assert_eq!(d.border_color, [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(d.comparison_func, ComparisonFunc::GreaterEqual);
    assert_eq!((d.min_lod, d.max_lod, d.mip_lod_bias), (0.25, 3.0, 0.0));
    assert_eq!(d.max_anisotropy, 1);
    let plain = SamplerSpec {
        compare: None,
        address: [wgpu::AddressMode::ClampToEdge; 3],
        ..s
    };
    assert_eq!(plain.d3d().filter, Filter::MinPointMagMipLinear);
    assert_eq!(plain.d3d().address_u, AddressMode::Clamp);
}

#[test]
fn guard_bands_reject_texel_edges_and_centres() {
    assert!(clear_position(2.25));
    assert!(!clear_position(3.0)); // point-sampling boundary
    assert!(!clear_position(2.999)); // within 2/256 below it
    assert!(!clear_position(2.5)); // texel centre: zero linear weight
    assert!(!clear_position(2.503));
}

#[test]
fn cube_face_follows_r99() {
    // SPEC R99's example: (1, 0.5, −0.25) → +X, (s, t) = (0.625, 0.25).
    assert_eq!(cube_face([1.0, 0.5, -0.25]), (0, 0.625, 0.25));
}

#[test]
fn generation_is_deterministic_and_large_enough() {
    let a = generate(7, &Config::default());
    let b = generate(7, &Config::default());
    assert!(a.lookup_count() >= 5000);
    assert_eq!(a.groups.len(), b.groups.len());
    for (ga, gb) in a.groups.iter().zip(&b.groups) {
        assert_eq!(ga.lookups, gb.lookups);
        assert_eq!(ga.sampler, gb.sampler);
    }
}
