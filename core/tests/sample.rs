//! Sampling rules, one test per behaviour, each citing the SPEC rule it pins.

use penumbra_core::sample::quad::Quad;
use penumbra_core::texture::MipFilter;
use penumbra_core::{
    AddressMode, ComparisonFunc, Coord, Dimension, Filter, Format, LodMode, SampleArgs,
    SampleError, Sampler, SamplerDesc, SamplerFlags, SamplerOptions, Texture, TextureDesc,
    TextureView,
};
use penumbra_testkit::Rng;

fn r32(w: u32, h: u32, values: &[f32]) -> Texture {
    Texture::from_f32(TextureDesc::new_2d(Format::R32Float, w, h), values).unwrap()
}

fn sampler(filter: Filter) -> Sampler {
    Sampler::new(SamplerDesc::new(filter)).unwrap()
}

fn cmp_sampler(filter: Filter, func: ComparisonFunc) -> Sampler {
    Sampler::new(SamplerDesc::comparison(filter, func)).unwrap()
}

/// A 2D texture with a full mip chain whose level L is filled with the constant L.
fn levels_texture(size: u32) -> Texture {
    let desc = TextureDesc::new_2d(Format::R32Float, size, size)
        .with_mip_levels(32 - size.leading_zeros());
    let mut values = Vec::new();
    for mip in 0..desc.mip_levels {
        let [w, h, _] = desc.level_size(mip);
        values.extend(std::iter::repeat_n(mip as f32, (w * h) as usize));
    }
    Texture::from_f32(desc, &values).unwrap()
}

#[test]
fn pcf_worked_example_r80() {
    let tex = r32(2, 2, &[0.3, 0.6, 0.6, 0.9]);
    let s = cmp_sampler(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::LessEqual,
    );
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, ())
            .unwrap(),
        0.75
    );
}

#[test]
fn linear_weights_worked_example_n4_u03_r27() {
    // N = 4, U = 0.3 → taps 0 and 1 with w1 = 179/256.
    let tex = r32(4, 1, &[0.0, 1.0, 0.0, 0.0]);
    let s = sampler(Filter::MinMagMipLinear);
    let v = s.sample_level(Some(&tex), [0.3, 0.5], 0.0, ()).unwrap()[0];
    assert_eq!(v, 179.0 / 256.0);
}

#[test]
fn d16_reference_quantization_consequences_r84() {
    let desc = TextureDesc::new_2d(Format::D16Unorm, 1, 1);
    let tex = Texture::new(desc, 32768u16.to_le_bytes().to_vec()).unwrap();
    let eq = cmp_sampler(Filter::ComparisonMinMagMipPoint, ComparisonFunc::Equal);
    assert_eq!(
        eq.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, ())
            .unwrap(),
        1.0
    );
    let le = cmp_sampler(Filter::ComparisonMinMagMipPoint, ComparisonFunc::LessEqual);
    assert_eq!(
        le.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], f32::NAN, ())
            .unwrap(),
        1.0
    );
    assert_eq!(
        le.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], -3.0, ())
            .unwrap(),
        1.0
    );
    assert_eq!(
        le.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 7.0, ())
            .unwrap(),
        0.0
    );
    // On R32_FLOAT a NaN reference fails everything except NOT_EQUAL and ALWAYS.
    let f = r32(1, 1, &[0.5]);
    assert_eq!(
        le.sample_cmp_level_zero(Some(&f), [0.5, 0.5], f32::NAN, ())
            .unwrap(),
        0.0
    );
    let ne = cmp_sampler(Filter::ComparisonMinMagMipPoint, ComparisonFunc::NotEqual);
    assert_eq!(
        ne.sample_cmp_level_zero(Some(&f), [0.5, 0.5], f32::NAN, ())
            .unwrap(),
        1.0
    );
}

#[test]
fn float_reference_is_not_clamped_r82() {
    let f = r32(1, 1, &[1.2]);
    let less = cmp_sampler(Filter::ComparisonMinMagMipPoint, ComparisonFunc::Less);
    assert_eq!(
        less.sample_cmp_level_zero(Some(&f), [0.5, 0.5], 1.1, ())
            .unwrap(),
        1.0
    );
    assert_eq!(
        less.sample_cmp_level_zero(Some(&f), [0.5, 0.5], 1.3, ())
            .unwrap(),
        0.0
    );
}

#[test]
fn comparison_result_is_replicated_and_every_func_follows_the_table_r78_r79() {
    let f = r32(1, 1, &[0.5]);
    let table = [
        (ComparisonFunc::Never, [0.0, 0.0, 0.0]),
        (ComparisonFunc::Less, [1.0, 0.0, 0.0]),
        (ComparisonFunc::Equal, [0.0, 1.0, 0.0]),
        (ComparisonFunc::LessEqual, [1.0, 1.0, 0.0]),
        (ComparisonFunc::Greater, [0.0, 0.0, 1.0]),
        (ComparisonFunc::NotEqual, [1.0, 0.0, 1.0]),
        (ComparisonFunc::GreaterEqual, [0.0, 1.0, 1.0]),
        (ComparisonFunc::Always, [1.0, 1.0, 1.0]),
    ];
    for (func, expected) in table {
        let s = cmp_sampler(Filter::ComparisonMinMagMipPoint, func);
        for (r, e) in [0.25, 0.5, 0.75].into_iter().zip(expected) {
            let args = SampleArgs {
                coord: Coord([0.5, 0.5, 0.0, 0.0]),
                lod: LodMode::Zero,
                offset: Default::default(),
                clamp: None,
            };
            assert_eq!(
                s.sample_cmp(Some(&f), &args, r).unwrap(),
                e,
                "{func} ref {r}"
            );
        }
    }
}

#[test]
fn border_takes_only_present_components_r34() {
    let tex = r32(2, 2, &[0.5; 4]);
    let mut desc = SamplerDesc::new(Filter::MinMagMipPoint);
    desc.address_u = AddressMode::Border;
    desc.border_color = [1.0, 1.0, 1.0, 1.0];
    let s = Sampler::new(desc).unwrap();
    assert_eq!(
        s.sample_level(Some(&tex), [1.5, 0.5], 0.0, ()).unwrap(),
        [1.0, 0.0, 0.0, 1.0]
    );
}

#[test]
fn unorm_border_is_clamped_and_quantized_r35() {
    let tex = Texture::from_f32(TextureDesc::new_2d(Format::R8Unorm, 1, 1), &[0.0]).unwrap();
    let mut desc = SamplerDesc::new(Filter::MinMagMipPoint);
    desc.address_u = AddressMode::Border;
    desc.border_color = [0.3, 0.0, 0.0, 0.0];
    let s = Sampler::new(desc).unwrap();
    // 0.3·255 + 0.5 = 77.0 → code 77.
    assert_eq!(
        s.sample_level(Some(&tex), [-0.5, 0.5], 0.0, ()).unwrap()[0],
        77.0 / 255.0
    );
    desc.border_color = [7.0, 0.0, 0.0, 0.0];
    let s = Sampler::new(desc).unwrap();
    assert_eq!(
        s.sample_level(Some(&tex), [-0.5, 0.5], 0.0, ()).unwrap()[0],
        1.0
    );
}

#[test]
fn comparison_uses_border_red_as_depth_r37() {
    let tex = r32(2, 2, &[0.0; 4]);
    let mut desc =
        SamplerDesc::comparison(Filter::ComparisonMinMagMipPoint, ComparisonFunc::LessEqual);
    desc.address_u = AddressMode::Border;
    desc.address_v = AddressMode::Border;
    desc.border_color = [1.0, 1.0, 1.0, 1.0]; // OPAQUE_WHITE: outside the map is lit.
    let s = Sampler::new(desc).unwrap();
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [1.5, 0.5], 0.9, ())
            .unwrap(),
        1.0
    );
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.9, ())
            .unwrap(),
        0.0
    );
    desc.border_color = [0.0; 4]; // TRANSPARENT_BLACK: outside is shadowed for ref > 0.
    let s = Sampler::new(desc).unwrap();
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [1.5, 0.5], 0.9, ())
            .unwrap(),
        0.0
    );
}

#[test]
fn border_tap_can_come_from_v_alone_r32() {
    let tex = r32(2, 2, &[0.25; 4]);
    let mut desc = SamplerDesc::new(Filter::MinMagMipPoint);
    desc.address_u = AddressMode::Wrap;
    desc.address_v = AddressMode::Border;
    desc.border_color = [0.75, 0.0, 0.0, 1.0];
    let s = Sampler::new(desc).unwrap();
    assert_eq!(
        s.sample_level(Some(&tex), [0.25, 1.25], 0.0, ()).unwrap()[0],
        0.75
    );
    assert_eq!(
        s.sample_level(Some(&tex), [1.25, 0.25], 0.0, ()).unwrap()[0],
        0.25
    );
}

#[test]
fn offsets_are_texels_of_the_accessed_level_r39() {
    let tex = levels_texture(8);
    let tex = tex
        .with_texel(0, 0, [3, 0, 0], [9.0, 0.0, 0.0, 1.0])
        .unwrap();
    let s = sampler(Filter::MinMagMipPoint);
    assert_eq!(
        s.sample_level(Some(&tex), [0.0625, 0.0625], 0.0, [3, 0])
            .unwrap()[0],
        9.0
    );
    assert!(matches!(
        s.sample_level(Some(&tex), [0.0, 0.0], 0.0, [8, 0]),
        Err(SampleError::OffsetRange { axis: 0, value: 8 })
    ));
    let lenient = Sampler::with_options(
        SamplerDesc::new(Filter::MinMagMipPoint),
        SamplerOptions {
            lenient_offsets: true,
            ..Default::default()
        },
    )
    .unwrap();
    // R41: only the low 4 bits count: 19 = 0b1_0011 → 3.
    assert_eq!(
        lenient
            .sample_level(Some(&tex), [0.0625, 0.0625], 0.0, [19, 0])
            .unwrap()[0],
        9.0
    );
}

#[test]
fn offsets_on_cubes_are_an_error_r40() {
    let tex = Texture::zeroed(TextureDesc::new(
        Dimension::TextureCube,
        Format::R32Float,
        [2, 2, 1],
        6,
    ))
    .unwrap();
    let s = sampler(Filter::MinMagMipLinear);
    assert!(matches!(
        s.sample_level(Some(&tex), [1.0, 0.0, 0.0], 0.0, [1, 0]),
        Err(SampleError::OffsetOnCube { .. })
    ));
}

#[test]
fn array_slice_rounds_half_to_even_and_clamps_r43() {
    let desc = TextureDesc::new(Dimension::Texture2DArray, Format::R32Float, [1, 1, 1], 5);
    let tex = Texture::from_f32(desc, &[0.0, 1.0, 2.0, 3.0, 4.0]).unwrap();
    let s = sampler(Filter::MinMagMipPoint);
    let at = |a: f32| s.sample_level(Some(&tex), [0.5, 0.5, a], 0.0, ()).unwrap()[0];
    assert_eq!(at(2.5), 2.0);
    assert_eq!(at(3.5), 4.0);
    assert_eq!(at(-0.5), 0.0);
    assert_eq!(at(f32::NAN), 0.0);
    assert_eq!(at(f32::INFINITY), 4.0);
    assert_eq!(at(-1e30), 0.0);
    // The view's slice range (R43 is in view space).
    let view = tex
        .with_view(TextureView {
            first_array_slice: 1,
            array_size: Some(2),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        s.sample_level(Some(&view), [0.5, 0.5, 9.0], 0.0, ())
            .unwrap()[0],
        2.0
    );
}

#[test]
fn lod_zero_comparison_magnifies_worked_cases_r63() {
    let tex = levels_texture(4);
    // MIN_LINEAR_MAG_MIP_POINT at LOD 0 magnifies: point sampling on level 0.
    let s = cmp_sampler(Filter::ComparisonMinLinearMagMipPoint, ComparisonFunc::Less);
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, ())
            .unwrap(),
        0.0
    );
    // MipLODBias 0.5: minification; MIP_LINEAR blends levels 0 and 1 50/50.
    let mut d = SamplerDesc::comparison(Filter::ComparisonMinMagMipLinear, ComparisonFunc::Less);
    d.mip_lod_bias = 0.5;
    let s = Sampler::new(d).unwrap();
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, ())
            .unwrap(),
        0.5
    );
    // MIP_POINT picks level 1.
    d.filter = Filter::ComparisonMinMagLinearMipPoint;
    let s = Sampler::new(d).unwrap();
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, ())
            .unwrap(),
        1.0
    );
    // MinLOD 1: level 1 with the MIN filter.
    let mut d = SamplerDesc::comparison(Filter::ComparisonMinMagMipPoint, ComparisonFunc::Less);
    d.min_lod = 1.0;
    let s = Sampler::new(d).unwrap();
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, ())
            .unwrap(),
        1.0
    );
}

#[test]
fn sample_level_honours_bias_and_clamps_r56_r57() {
    let tex = levels_texture(16);
    let mut d = SamplerDesc::new(Filter::MinMagMipPoint);
    d.mip_lod_bias = 1.0;
    d.max_lod = 2.0;
    let s = Sampler::new(d).unwrap();
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 0.75, ()).unwrap()[0],
        2.0
    );
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 3.0, ()).unwrap()[0],
        2.0
    );
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], f32::NAN, ())
            .unwrap()[0],
        2.0
    );
}

#[test]
fn resource_clamp_and_most_detailed_mip_r58_r64() {
    let tex = levels_texture(16);
    let s = sampler(Filter::MinMagMipPoint);
    let view = tex
        .with_view(TextureView {
            most_detailed_mip: 1,
            resource_min_lod_clamp: 3.0,
            ..Default::default()
        })
        .unwrap();
    // View LOD 0 is resource mip 1; the clamp of 3 (resource space) is view LOD 2 → resource mip 3.
    assert_eq!(
        s.sample_level(Some(&view), [0.5, 0.5], 0.0, ()).unwrap()[0],
        3.0
    );
    let view = tex
        .with_view(TextureView {
            most_detailed_mip: 2,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        s.sample_level(Some(&view), [0.5, 0.5], 0.0, ()).unwrap()[0],
        2.0
    );
}

#[test]
fn clamp_past_the_view_is_the_empty_set_r62_r108() {
    let tex = levels_texture(4);
    let view = tex
        .with_view(TextureView {
            resource_min_lod_clamp: 2.5,
            ..Default::default()
        })
        .unwrap();
    let s = sampler(Filter::MinMagMipLinear);
    assert_eq!(
        s.sample_level(Some(&view), [0.5, 0.5], 0.0, ()).unwrap(),
        [0.0, 0.0, 0.0, 1.0]
    );
    let args = SampleArgs {
        coord: Coord([0.5, 0.5, 0.0, 0.0]),
        lod: LodMode::Level(0.0),
        offset: Default::default(),
        clamp: Some(2.1),
    };
    assert_eq!(s.sample(Some(&tex), &args).unwrap(), [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(
        s.calculate_lod(Some(&view), [0.5, 0.5], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
            .unwrap()[0],
        0.0
    );
}

#[test]
fn unbound_slot_reads_zero_in_every_component_r107() {
    let s = sampler(Filter::MinMagMipLinear);
    assert_eq!(s.sample_level(None, [0.5, 0.5], 0.0, ()).unwrap(), [0.0; 4]);
    let c = cmp_sampler(Filter::ComparisonMinMagMipLinear, ComparisonFunc::Always);
    assert_eq!(
        c.sample_cmp_level_zero(None, [0.5, 0.5], 0.0, ()).unwrap(),
        0.0
    );
    assert_eq!(c.gather_cmp(None, [0.5, 0.5], 0.0, ()).unwrap(), [0.0; 4]);
    assert_eq!(
        s.calculate_lod(None, [0.5, 0.5], [1.0; 3], [1.0; 3])
            .unwrap(),
        [0.0; 2]
    );
}

#[test]
fn sampler_and_op_must_pair_r17() {
    let tex = r32(1, 1, &[0.5]);
    let s = sampler(Filter::MinMagMipLinear);
    assert!(matches!(
        s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, ()),
        Err(SampleError::SamplerKind { .. })
    ));
    let c = cmp_sampler(Filter::ComparisonMinMagMipLinear, ComparisonFunc::Less);
    let err = c.sample_level(Some(&tex), [0.5, 0.5], 0.0, ()).unwrap_err();
    assert!(err.to_string().contains("R17"), "{err}");
    assert!(c.gather(Some(&tex), [0.5, 0.5], 0, ()).is_err());
}

#[test]
fn comparison_on_3d_and_unrequired_formats_r77() {
    let t3 = Texture::zeroed(TextureDesc::new(
        Dimension::Texture3D,
        Format::R32Float,
        [2, 2, 2],
        1,
    ))
    .unwrap();
    let c = cmp_sampler(Filter::ComparisonMinMagMipPoint, ComparisonFunc::Less);
    assert!(matches!(
        c.sample_cmp_level_zero(Some(&t3), [0.5, 0.5, 0.5], 0.5, ()),
        Err(SampleError::Dimension { .. })
    ));
    let r8 = Texture::from_f32(TextureDesc::new_2d(Format::R8Unorm, 1, 1), &[0.5]).unwrap();
    assert!(matches!(
        c.sample_cmp_level_zero(Some(&r8), [0.5, 0.5], 0.5, ()),
        Err(SampleError::ComparisonFormat { .. })
    ));
    // R86 [EXT]: opt in, and R8 quantizes the reference with 8 bits (0.5 → 128 > 128? no: equal).
    let ext = Sampler::with_options(
        SamplerDesc::comparison(Filter::ComparisonMinMagMipPoint, ComparisonFunc::Equal),
        SamplerOptions {
            extended_comparison_formats: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        ext.sample_cmp_level_zero(Some(&r8), [0.5, 0.5], 0.5, ())
            .unwrap(),
        1.0
    );
}

#[test]
fn min_max_reduce_over_nonzero_weight_taps_r93_r94_r96() {
    let tex = r32(2, 2, &[0.1, 0.9, 0.4, 0.6]);
    let min = sampler(Filter::MinimumMinMagMipLinear);
    let max = sampler(Filter::MaximumMinMagMipLinear);
    assert_eq!(
        min.sample_level(Some(&tex), [0.5, 0.5], 0.0, ()).unwrap()[0],
        0.1
    );
    assert_eq!(
        max.sample_level(Some(&tex), [0.5, 0.5], 0.0, ()).unwrap()[0],
        0.9
    );
    // Exactly on texel (1,1)'s centre only that texel has weight.
    assert_eq!(
        min.sample_level(Some(&tex), [0.75, 0.75], 0.0, ()).unwrap()[0],
        0.6
    );
    // On a vertical texel-centre line only one column participates.
    assert_eq!(
        max.sample_level(Some(&tex), [0.25, 0.5], 0.0, ()).unwrap()[0],
        0.4
    );
}

#[test]
fn min_max_ignore_nan_and_order_signed_zeros_r95() {
    let tex = r32(2, 1, &[f32::NAN, 0.5]);
    let min = sampler(Filter::MinimumMinMagMipLinear);
    assert_eq!(
        min.sample_level(Some(&tex), [0.5, 0.5], 0.0, ()).unwrap()[0],
        0.5
    );
    let zeros = r32(2, 1, &[0.0, -0.0]);
    assert!(min.sample_level(Some(&zeros), [0.5, 0.5], 0.0, ()).unwrap()[0].is_sign_negative());
    let max = sampler(Filter::MaximumMinMagMipLinear);
    assert!(max.sample_level(Some(&zeros), [0.5, 0.5], 0.0, ()).unwrap()[0].is_sign_positive());
}

#[test]
fn zero_weight_taps_are_skipped_r68() {
    // Sampling exactly on texel 0's centre: texel 1 (NaN) has weight 0 and is not fetched.
    let tex = r32(2, 1, &[0.25, f32::NAN]);
    let s = sampler(Filter::MinMagMipLinear);
    assert_eq!(
        s.sample_level(Some(&tex), [0.25, 0.5], 0.0, ()).unwrap()[0],
        0.25
    );
    assert!(s.sample_level(Some(&tex), [0.5, 0.5], 0.0, ()).unwrap()[0].is_nan());
}

#[test]
fn filtering_invariants_hold_r69() {
    let values: Vec<f32> = (0..64)
        .map(|i| ((i * 37) % 64) as f32 / 7.0 - 3.0)
        .collect();
    let desc = TextureDesc::new_2d(Format::R32Float, 8, 8).with_mip_levels(4);
    let tex = Texture::from_level0_f32(desc, &values, MipFilter::Average).unwrap();
    let constant = Texture::from_level0_f32(desc, &[0.1; 64], MipFilter::Average).unwrap();
    let s = sampler(Filter::MinMagMipLinear);
    let (lo, hi) = values
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let mut rng = Rng::lcg32(12345);
    for _ in 0..2000 {
        let u = rng.f32_unit() * 3.0 - 1.0;
        // v and the LOD from one draw: its top 24 bits and its low byte.
        let x = rng.next_u32();
        let v = (x >> 8) as f32 / (1 << 24) as f32 * 3.0 - 1.0;
        let lod = (x & 0xFF) as f32 / 64.0;
        let r = s.sample_level(Some(&tex), [u, v], lod, ()).unwrap()[0];
        assert!((lo..=hi).contains(&r), "{r} outside [{lo}, {hi}]");
        assert_eq!(
            s.sample_level(Some(&constant), [u, v], lod, ()).unwrap()[0],
            0.1
        );
    }
}

#[test]
fn mip_linear_reads_both_levels_near_integers_r61_r67() {
    let tex = levels_texture(16);
    let s = sampler(Filter::MinMagMipLinear);
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 1.01, ()).unwrap()[0],
        1.0 + 3.0 / 256.0
    );
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 2.0, ()).unwrap()[0],
        2.0
    );
}

#[test]
fn mip_point_rounds_half_up_r60() {
    let tex = levels_texture(16);
    let s = sampler(Filter::MinMagMipPoint);
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 0.5, ()).unwrap()[0],
        1.0
    );
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 1.5, ()).unwrap()[0],
        2.0
    );
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 0.49, ()).unwrap()[0],
        0.0
    );
}

#[test]
fn magnification_uses_the_mag_filter_on_level_zero_r59() {
    let tex = Texture::from_level0_f32(
        TextureDesc::new_2d(Format::R32Float, 2, 1).with_mip_levels(2),
        &[0.0, 1.0],
        MipFilter::Average,
    )
    .unwrap();
    let s = sampler(Filter::MinLinearMagMipPoint);
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 0.0, ()).unwrap()[0],
        1.0
    ); // point
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], -1.0, ()).unwrap()[0],
        1.0
    );
    let s = sampler(Filter::MinPointMagLinearMipPoint);
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 0.0, ()).unwrap()[0],
        0.5
    ); // linear
}

#[test]
fn isotropic_lod_from_derivatives_r46_r47() {
    let tex = levels_texture(256);
    let s = sampler(Filter::MinMagMipPoint);
    let r = s
        .sample_grad(
            Some(&tex),
            [0.5, 0.5],
            [1.0 / 128.0, 0.0, 0.0],
            [0.0, 1.0 / 128.0, 0.0],
            (),
        )
        .unwrap();
    assert_eq!(r[0], 1.0);
    assert_eq!(
        s.calculate_lod(
            Some(&tex),
            [0.5, 0.5],
            [1.0 / 64.0, 0.0, 0.0],
            [0.0, 0.0, 0.0]
        )
        .unwrap(),
        [2.0, 2.0]
    );
}

#[test]
fn sample_c_lz_ignores_derivatives_and_aniso_acts_isotropic_r52_r89_r22() {
    let tex = levels_texture(16);
    let mut d = SamplerDesc::comparison(Filter::ComparisonAnisotropic, ComparisonFunc::Less);
    d.max_anisotropy = 16;
    let s = Sampler::new(d).unwrap();
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], -0.5, ())
            .unwrap(),
        1.0
    );
    assert_eq!(
        s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, ())
            .unwrap(),
        0.0
    );
}

#[test]
fn anisotropic_with_ratio_one_equals_trilinear_r75() {
    let values: Vec<f32> = (0..256).map(|i| ((i * 97) % 256) as f32 / 255.0).collect();
    let desc = TextureDesc::new_2d(Format::R32Float, 16, 16).with_mip_levels(5);
    let tex = Texture::from_level0_f32(desc, &values, MipFilter::Average).unwrap();
    let mut d = SamplerDesc::new(Filter::Anisotropic);
    d.max_anisotropy = 16;
    let aniso = Sampler::new(d).unwrap();
    let tri = sampler(Filter::MinMagMipLinear);
    for k in 1..20 {
        let g = k as f32 / 64.0;
        let (ddx, ddy) = ([g, 0.0, 0.0], [0.0, g, 0.0]); // square footprint: ratio 1
        let c = [0.31 + k as f32 / 97.0, 0.42];
        assert_eq!(
            aniso.sample_grad(Some(&tex), c, ddx, ddy, ()).unwrap(),
            tri.sample_grad(Some(&tex), c, ddx, ddy, ()).unwrap()
        );
        // A 4:1 footprint stays within the taps' range and keeps constants constant.
        let r = aniso
            .sample_grad(Some(&tex), c, [4.0 * g, 0.0, 0.0], [0.0, g, 0.0], ())
            .unwrap()[0];
        assert!((0.0..=1.0).contains(&r));
    }
}

#[test]
fn gather_returns_the_footprint_in_d3d_order_r120() {
    // Texels: row 0: a b, row 1: c d. Footprint at the centre: (i0,j1)=c, (i1,j1)=d, (i1,j0)=b, (i0,j0)=a.
    let tex = r32(2, 2, &[1.0, 2.0, 3.0, 4.0]);
    let s = sampler(Filter::MinMagMipPoint);
    assert_eq!(
        s.gather(Some(&tex), [0.5, 0.5], 0, ()).unwrap(),
        [3.0, 4.0, 2.0, 1.0]
    );
    // Missing components read as the defaults; gather ignores the filter and the LOD clamps.
    assert_eq!(s.gather(Some(&tex), [0.5, 0.5], 3, ()).unwrap(), [1.0; 4]);
    assert!(matches!(
        s.gather(Some(&tex), [0.5, 0.5], 4, ()),
        Err(SampleError::GatherComponent(4))
    ));
    let c = cmp_sampler(Filter::ComparisonMinMagMipPoint, ComparisonFunc::Less);
    assert_eq!(
        c.gather_cmp(Some(&tex), [0.5, 0.5], 2.5, ()).unwrap(),
        [1.0, 1.0, 0.0, 0.0]
    );
}

#[test]
fn gather_keeps_f32_denormals_r6_r120() {
    let den = f32::from_bits(1);
    let tex = r32(1, 1, &[den]);
    let s = sampler(Filter::MinMagMipPoint);
    assert_eq!(
        s.gather(Some(&tex), [0.5, 0.5], 0, ()).unwrap()[0].to_bits(),
        1
    );
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5], 0.0, ()).unwrap()[0].to_bits(),
        0
    );
}

#[test]
fn gather_only_exists_for_2d_and_cubes_r120() {
    let t1 = Texture::zeroed(TextureDesc::new(
        Dimension::Texture1D,
        Format::R32Float,
        [4, 1, 1],
        1,
    ))
    .unwrap();
    let s = sampler(Filter::MinMagMipPoint);
    assert!(matches!(
        s.gather(Some(&t1), [0.5], 0, ()),
        Err(SampleError::Dimension { .. })
    ));
}

#[test]
fn non_normalized_coordinates_are_texel_space_r18() {
    let tex = r32(4, 1, &[0.0, 1.0, 2.0, 3.0]);
    let mut d = SamplerDesc::new(Filter::MinMagLinearMipPoint);
    d.flags = SamplerFlags::NON_NORMALIZED_COORDINATES;
    d.max_lod = 0.0;
    let s = Sampler::new(d).unwrap();
    assert_eq!(
        s.sample_level(Some(&tex), [2.0, 0.5], 0.0, ()).unwrap()[0],
        1.5
    );
    assert!(matches!(
        s.sample_level(Some(&tex), [2.0, 0.5], 0.0, [1, 0]),
        Err(SampleError::NonNormalized(_))
    ));
    let mips = levels_texture(4);
    assert!(matches!(
        s.sample_level(Some(&mips), [2.0, 0.5], 0.0, ()),
        Err(SampleError::NonNormalized(_))
    ));
}

#[test]
fn three_dimensional_trilinear_uses_eight_taps() {
    let desc = TextureDesc::new(Dimension::Texture3D, Format::R32Float, [2, 2, 2], 1);
    let tex = Texture::from_f32(desc, &[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]).unwrap();
    let s = sampler(Filter::MinMagMipLinear);
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5, 0.5], 0.0, ())
            .unwrap()[0],
        0.5
    );
    assert_eq!(
        s.sample_level(Some(&tex), [0.5, 0.5, 0.375], 0.0, ())
            .unwrap()[0],
        0.25
    );
}

fn cube_with_faces(n: u32, face_values: [f32; 6]) -> Texture {
    let desc = TextureDesc::new(Dimension::TextureCube, Format::R32Float, [n, n, 1], 6);
    let values: Vec<f32> = face_values
        .iter()
        .flat_map(|&v| std::iter::repeat_n(v, (n * n) as usize))
        .collect();
    Texture::from_f32(desc, &values).unwrap()
}

#[test]
fn cube_face_selection_ties_go_to_z_then_y_r98() {
    let tex = cube_with_faces(2, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let s = sampler(Filter::MinMagMipPoint);
    let face = |d: [f32; 3]| s.sample_level(Some(&tex), d, 0.0, ()).unwrap()[0];
    assert_eq!(face([1.0, 0.2, 0.1]), 0.0);
    assert_eq!(face([-1.0, 0.2, 0.1]), 1.0);
    assert_eq!(face([0.1, -1.0, 0.2]), 3.0);
    assert_eq!(face([1.0, 1.0, 0.0]), 2.0);
    assert_eq!(face([1.0, 1.0, -1.0]), 5.0);
    assert_eq!(face([0.0, 0.0, 0.0]), 4.0); // R98 [CHOICE]: zero direction → +Z
}

#[test]
fn cube_bilinear_crosses_faces_seamlessly_r100() {
    // Near the +X/+Z edge on +Z: half the footprint comes from +X.
    let tex = cube_with_faces(4, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let s = sampler(Filter::MinMagMipLinear);
    let r = s
        .sample_level(Some(&tex), [1.0, 0.0, 1.0001], 0.0, ())
        .unwrap()[0];
    assert!((0.4..=0.6).contains(&r), "{r}");
}

#[test]
fn cube_corner_splits_the_missing_weight_three_ways_r103_r104() {
    // At a cube corner on a 1×1 face, the three real texels each get a third.
    let tex = cube_with_faces(1, [0.0, 3.0, 0.0, 6.0, 0.0, 9.0]);
    let s = sampler(Filter::MinMagMipLinear);
    let r = s
        .sample_level(Some(&tex), [-1.0, -1.0, -1.0], 0.0, ())
        .unwrap()[0];
    assert_eq!(r, 6.0);
    let c = cmp_sampler(Filter::ComparisonMinMagMipLinear, ComparisonFunc::Less);
    let r = c
        .sample_cmp_level_zero(Some(&tex), [-1.0, -1.0, -1.0], 5.0, ())
        .unwrap();
    assert_eq!(r, (2.0f64 / 3.0) as f32);
}

#[test]
fn cube_array_selects_a_cube_r43() {
    let desc = TextureDesc::new(Dimension::TextureCubeArray, Format::R32Float, [1, 1, 1], 12);
    let values: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let tex = Texture::from_f32(desc, &values).unwrap();
    let s = sampler(Filter::MinMagMipPoint);
    assert_eq!(
        s.sample_level(Some(&tex), [0.0, 0.0, 1.0, 1.0], 0.0, ())
            .unwrap()[0],
        10.0
    );
    assert_eq!(
        s.sample_level(Some(&tex), [0.0, 0.0, 1.0, 7.0], 0.0, ())
            .unwrap()[0],
        10.0
    );
}

#[test]
fn cube_lod_maps_derivatives_onto_the_face_r51_r101() {
    let desc = TextureDesc::new(Dimension::TextureCube, Format::R32Float, [16, 16, 1], 6)
        .with_mip_levels(5);
    let cube = Texture::zeroed(desc).unwrap();
    let s = sampler(Filter::MinMagMipLinear);
    // On +Z at the centre s = 0.5·x + 0.5, so a step of 4/16 in x is 2 texels of 16: LOD 1.
    let lod = s
        .calculate_lod(
            Some(&cube),
            [0.0, 0.0, 1.0],
            [4.0 / 16.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
        )
        .unwrap();
    assert_eq!(lod[1], 1.0);
    // On −Z the sign-corrected quotient rule gives the same magnitude.
    let lod = s
        .calculate_lod(
            Some(&cube),
            [0.0, 0.0, -1.0],
            [4.0 / 16.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
        )
        .unwrap();
    assert_eq!(lod[1], 1.0);
}

#[test]
fn pixel_quads_use_coarse_derivatives() {
    let tex = levels_texture(64);
    let s = sampler(Filter::MinMagMipPoint);
    let quad = Quad::from_origin([0.1, 0.1], [4.0 / 64.0, 0.0], [0.0, 4.0 / 64.0]);
    assert_eq!(
        quad.coarse_derivatives().0[0],
        quad.0[1].0[0] - quad.0[0].0[0]
    );
    let out = s.sample_quad(Some(&tex), &quad, 0.0, ()).unwrap();
    assert!(out.iter().all(|p| p[0] == 2.0), "{out:?}");
    let c = cmp_sampler(Filter::ComparisonMinMagMipPoint, ComparisonFunc::Less);
    assert_eq!(
        c.sample_cmp_quad(Some(&tex), &quad, [1.5, 2.5, 1.5, 2.5], ())
            .unwrap(),
        [1.0, 0.0, 1.0, 0.0]
    );
}

#[test]
fn nan_and_huge_coordinates_give_defined_answers_r110_r111() {
    let tex = r32(4, 4, &(0..16).map(|i| i as f32).collect::<Vec<_>>());
    for filter in [
        Filter::MinMagMipPoint,
        Filter::MinMagMipLinear,
        Filter::Anisotropic,
    ] {
        for mode in AddressMode::ALL {
            let mut d = SamplerDesc::new(filter);
            d.address_u = mode;
            d.address_v = mode;
            d.max_anisotropy = 8;
            let s = Sampler::new(d).unwrap();
            for c in [f32::NAN, f32::INFINITY, -f32::INFINITY, 1e30, -1e30, 3.4e38] {
                let r = s
                    .sample_grad(Some(&tex), [c, 0.5], [c, 1.0, 0.0], [0.0, c, 0.0], ())
                    .unwrap();
                assert!(r[3] == 1.0, "{filter} {mode} {c}: {r:?}");
                s.sample_level(Some(&tex), [c, c], c, ()).unwrap();
            }
        }
    }
}
