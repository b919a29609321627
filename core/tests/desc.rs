//! Sampler descriptions: SPEC §2.1 (R7–R18), §2.2 (R19–R22), R79 and R119.

use core::fmt::{Debug, Display};
use core::str::FromStr;

use penumbra_core::desc::filter::raw;
use penumbra_core::desc::{FLOAT32_MAX, MAX_LIVE_STATIC_SAMPLERS};
use penumbra_core::{
    AddressMode, ComparisonFunc, DescError, Filter, FilterType, ReductionType, SamplerDesc,
    SamplerFlags, ShaderVisibility, StaticBorderColor, StaticSamplerDesc, StaticSamplerTable,
    TableError,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The 10 per-reduction offsets of SPEC R20 (d3d12.h D3D12_FILTER).
const OFFSETS: [u32; 10] = [0x00, 0x01, 0x04, 0x05, 0x10, 0x11, 0x14, 0x15, 0x54, 0x55];
/// The reduction bases of SPEC R20.
const BASES: [u32; 4] = [0x000, 0x080, 0x100, 0x180];

fn enumerated_filters() -> Vec<u32> {
    BASES
        .iter()
        .flat_map(|b| OFFSETS.iter().map(move |o| b + o))
        .collect()
}

fn err(result: Result<(), DescError>) -> DescError {
    result.expect_err("expected a validation error")
}

// ---------------------------------------------------------------------------------------------
// R7, R20: the enumeration (d3d12.h D3D12_FILTER; DXC root-signature validator; VulkanOn12.md)

#[test]
fn filter_enumeration_has_40_values_with_r20_decimal_values() {
    let standard = [0, 1, 4, 5, 16, 17, 20, 21, 84, 85];
    let mut expected = Vec::new();
    for add in [0, 128, 256, 384] {
        expected.extend(standard.iter().map(|v| v + add));
    }
    let all: Vec<u32> = Filter::ALL.iter().map(|f| f.raw()).collect();
    assert_eq!(all, expected);
    assert_eq!(Filter::ALL.len(), 40);
    assert_eq!(Filter::ComparisonAnisotropic.raw(), 213);
    assert_eq!(Filter::MaximumAnisotropic.raw(), 469);
    assert_eq!(Filter::ComparisonMinMagLinearMipPoint.raw(), 148);
    assert_eq!(Filter::MinimumMinMagAnisotropicMipPoint.raw(), 0x154);
}

#[test]
fn filter_from_raw_accepts_exactly_the_enumerated_values_r7() {
    let valid = enumerated_filters();
    for raw in 0..0x400u32 {
        assert_eq!(
            Filter::from_raw(raw).is_ok(),
            valid.contains(&raw),
            "raw filter {raw:#X}"
        );
    }
    // High bits: bit 31 (the old "mono" bit) and every bit >= 9 turn a valid value invalid.
    for &v in &valid {
        for bit in 9..32 {
            assert!(
                Filter::from_raw(v | 1 << bit).is_err(),
                "{v:#X} | bit {bit}"
            );
        }
    }
    assert!(Filter::from_raw(u32::MAX).is_err());
}

#[test]
fn filter_with_type_2_or_3_is_rejected_r7() {
    for raw in [0x02, 0x03, 0x08, 0x0C, 0x20, 0x30, 0x82, 0x122] {
        let e = Filter::from_raw(raw).unwrap_err();
        assert_eq!((e.field, e.rule), ("Filter", "R7"), "{raw:#X}");
    }
}

#[test]
fn aniso_bit_without_linear_min_mag_is_rejected_r7() {
    for raw in [0x40, 0x41, 0x44, 0x45, 0x50, 0x51, 0x56, 0xC0, 0x1C5] {
        assert!(Filter::from_raw(raw).is_err(), "{raw:#X}");
    }
}

#[test]
fn min_mag_anisotropic_mip_point_0x54_is_accepted_r7() {
    // R7 [CHOICE]: our device reports AnisoFilterWithPointMipSupported (d3d12.h OPTIONS19).
    for raw in [0x54, 0xD4, 0x154, 0x1D4] {
        let f = Filter::from_raw(raw).unwrap();
        assert!(f.is_anisotropic());
        assert_eq!(f.mip_filter(), FilterType::Point);
    }
    assert_eq!(
        Filter::from_raw(0x54),
        Ok(Filter::MinMagAnisotropicMipPoint)
    );
}

#[test]
fn filter_error_names_field_value_and_rule_r7() {
    let e = Filter::from_raw(3).unwrap_err();
    assert_eq!(e.field, "Filter");
    assert_eq!(e.value, "3 (0x3)");
    let text = e.to_string();
    assert!(text.starts_with("Filter = 3 (0x3): "), "{text}");
    assert!(text.contains("SPEC R7"), "{text}");
    assert!(text.contains("one of the 40 D3D12_FILTER names"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// R19: bit fields, d3d12.h encode/decode macros

#[test]
fn decode_and_encode_agree_for_every_filter_r19() {
    for f in Filter::ALL {
        let r = f.raw();
        let (min, mag, mip, red) = (
            raw::decode_min_filter(r),
            raw::decode_mag_filter(r),
            raw::decode_mip_filter(r),
            raw::decode_filter_reduction(r),
        );
        assert_eq!(min, f.min_filter().raw());
        assert_eq!(mag, f.mag_filter().raw());
        assert_eq!(mip, f.mip_filter().raw());
        assert_eq!(red, f.reduction().raw());
        assert_eq!(raw::decode_is_comparison_filter(r), f.is_comparison());
        assert_eq!(raw::decode_is_anisotropic_filter(r), f.is_anisotropic());
        assert_eq!(
            f.is_comparison(),
            f.reduction() == ReductionType::Comparison
        );

        // encode(decode(f)) == f
        let encoded = if !f.is_anisotropic() {
            raw::encode_basic_filter(min, mag, mip, red)
        } else if mip == 1 {
            raw::encode_anisotropic_filter(red)
        } else {
            raw::encode_min_mag_anisotropic_mip_point_filter(red)
        };
        assert_eq!(encoded, r, "{f}");
        let typed = if !f.is_anisotropic() {
            Filter::encode_basic(
                f.min_filter(),
                f.mag_filter(),
                f.mip_filter(),
                f.reduction(),
            )
        } else if f.mip_filter() == FilterType::Linear {
            Filter::encode_anisotropic(f.reduction())
        } else {
            Filter::encode_min_mag_anisotropic_mip_point(f.reduction())
        };
        assert_eq!(typed, f);
    }
}

#[test]
fn encode_then_decode_round_trips_every_field_combination_r19() {
    let types = [FilterType::Point, FilterType::Linear];
    for red in ReductionType::ALL {
        for min in types {
            for mag in types {
                for mip in types {
                    let f = Filter::encode_basic(min, mag, mip, red);
                    assert_eq!(
                        (
                            f.min_filter(),
                            f.mag_filter(),
                            f.mip_filter(),
                            f.reduction()
                        ),
                        (min, mag, mip, red)
                    );
                    assert!(!f.is_anisotropic());
                }
            }
        }
        let a = Filter::encode_anisotropic(red);
        assert!(a.is_anisotropic());
        assert_eq!((a.reduction(), a.mip_filter()), (red, FilterType::Linear));
        let p = Filter::encode_min_mag_anisotropic_mip_point(red);
        assert!(p.is_anisotropic());
        assert_eq!((p.reduction(), p.mip_filter()), (red, FilterType::Point));
    }
}

#[test]
fn decode_is_anisotropic_uses_current_header_form_r19() {
    // Aniso bit + min = mag = LINEAR; mip may be POINT (the older form required mip LINEAR).
    assert!(raw::decode_is_anisotropic_filter(0x54));
    assert!(raw::decode_is_anisotropic_filter(0x55));
    assert!(!raw::decode_is_anisotropic_filter(0x44)); // min POINT
    assert!(!raw::decode_is_anisotropic_filter(0x50)); // mag POINT
    assert!(!raw::decode_is_anisotropic_filter(0x15)); // no aniso bit
    assert_eq!(raw::encode_anisotropic_filter(1), 213);
    assert_eq!(raw::encode_min_mag_anisotropic_mip_point_filter(3), 0x1D4);
    assert_eq!(raw::encode_basic_filter(1, 1, 0, 1), 148);
    // The macros mask their inputs to 2 bits.
    assert_eq!(raw::encode_basic_filter(5, 0, 0, 4), 0x10);
}

#[test]
fn isotropic_counterpart_of_anisotropic_filters_r22() {
    assert_eq!(Filter::Anisotropic.isotropic(), Filter::MinMagMipLinear);
    assert_eq!(
        Filter::MinMagAnisotropicMipPoint.isotropic(),
        Filter::MinMagLinearMipPoint
    );
    assert_eq!(
        Filter::ComparisonAnisotropic.isotropic(),
        Filter::ComparisonMinMagMipLinear
    );
    assert_eq!(
        Filter::MaximumMinMagAnisotropicMipPoint.isotropic(),
        Filter::MaximumMinMagLinearMipPoint
    );
    for f in Filter::ALL {
        let iso = f.isotropic();
        assert!(!iso.is_anisotropic());
        assert_eq!(iso.reduction(), f.reduction());
        if !f.is_anisotropic() {
            assert_eq!(iso, f);
        }
    }
}

#[test]
fn filter_names_match_d3d12_constants() {
    assert_eq!(
        Filter::ComparisonMinMagLinearMipPoint.name(),
        "COMPARISON_MIN_MAG_LINEAR_MIP_POINT"
    );
    assert_eq!(Filter::Anisotropic.to_string(), "ANISOTROPIC");
    assert_eq!(
        Filter::MinimumMinMagAnisotropicMipPoint.to_string(),
        "MINIMUM_MIN_MAG_ANISOTROPIC_MIP_POINT"
    );
    // The name spells out the decoded fields.
    for f in Filter::ALL {
        let n = f.name();
        let reduction = match f.reduction() {
            ReductionType::Standard => "",
            ReductionType::Comparison => "COMPARISON_",
            ReductionType::Minimum => "MINIMUM_",
            ReductionType::Maximum => "MAXIMUM_",
        };
        assert!(n.starts_with(reduction), "{n}");
        assert_eq!(n.contains("ANISOTROPIC"), f.is_anisotropic(), "{n}");
        assert_eq!(
            n.ends_with("MIP_POINT"),
            f.mip_filter() == FilterType::Point,
            "{n}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// R8, R11, R14, R119: the small enums

#[test]
fn address_mode_accepts_1_to_5_and_names_the_field_r8() {
    assert!(AddressMode::from_raw(0).is_err());
    assert!(AddressMode::from_raw(6).is_err());
    for (raw, mode) in (1..=5).zip(AddressMode::ALL) {
        assert_eq!(AddressMode::from_raw(raw), Ok(mode));
    }
    let e = AddressMode::from_raw_field(0, "AddressV").unwrap_err();
    assert_eq!((e.field, e.rule), ("AddressV", "R8"));
    assert!(e.to_string().contains("MIRROR_ONCE"), "{e}");
    assert_eq!(AddressMode::MirrorOnce.name(), "MIRROR_ONCE");
}

#[test]
fn comparison_func_accepts_0_to_8_r11() {
    assert_eq!(ComparisonFunc::ALL.len(), 9);
    for raw in 0..=8 {
        assert_eq!(ComparisonFunc::from_raw(raw).unwrap().raw(), raw);
    }
    let e = ComparisonFunc::from_raw(9).unwrap_err();
    assert_eq!((e.field, e.rule), ("ComparisonFunc", "R11"));
    assert_eq!(ComparisonFunc::LessEqual.name(), "LESS_EQUAL");
    assert_eq!(ComparisonFunc::None.name(), "NONE");
}

#[test]
fn static_border_colors_and_their_values_r14() {
    assert!(StaticBorderColor::from_raw(5).is_err());
    let expected = [
        (
            StaticBorderColor::TransparentBlack,
            [0.0, 0.0, 0.0, 0.0],
            false,
        ),
        (StaticBorderColor::OpaqueBlack, [0.0, 0.0, 0.0, 1.0], false),
        (StaticBorderColor::OpaqueWhite, [1.0, 1.0, 1.0, 1.0], false),
        (
            StaticBorderColor::OpaqueBlackUint,
            [0.0, 0.0, 0.0, 1.0],
            true,
        ),
        (
            StaticBorderColor::OpaqueWhiteUint,
            [1.0, 1.0, 1.0, 1.0],
            true,
        ),
    ];
    for (raw, (color, rgba, uint)) in expected.into_iter().enumerate() {
        assert_eq!(color.raw(), raw as u32);
        assert_eq!(color.rgba(), rgba);
        assert_eq!(color.is_uint(), uint);
        assert_eq!(color.rgba_u32(), rgba.map(|c| c as u32));
    }
    assert_eq!(
        StaticBorderColor::OpaqueBlackUint.name(),
        "OPAQUE_BLACK_UINT"
    );
    assert_eq!(
        StaticBorderColor::from_raw(9).unwrap_err().field,
        "BorderColor"
    );
}

#[test]
fn shader_visibility_values_and_overlap_r119() {
    let names = [
        "ALL",
        "VERTEX",
        "HULL",
        "DOMAIN",
        "GEOMETRY",
        "PIXEL",
        "AMPLIFICATION",
        "MESH",
    ];
    for (raw, (v, name)) in ShaderVisibility::ALL.iter().zip(names).enumerate() {
        assert_eq!(v.raw(), raw as u32);
        assert_eq!(v.name(), name);
    }
    assert!(ShaderVisibility::from_raw(8).is_err());
    for a in ShaderVisibility::ALL {
        assert!(ShaderVisibility::All.overlaps(a) && a.overlaps(ShaderVisibility::All));
        for b in ShaderVisibility::ALL {
            if a != ShaderVisibility::All && b != ShaderVisibility::All {
                assert_eq!(a.overlaps(b), a == b);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// R79: comparison (D3D11.3 FS 22.4.19, FS 3.1.3.1)

#[test]
fn comparison_puts_reference_on_the_left_and_nan_fails_except_not_equal_r79() {
    use ComparisonFunc as C;
    let (lo, hi, nan) = (0.25f32, 0.5f32, f32::NAN);
    let table = [
        (C::None, false, false, false, false),
        (C::Never, false, false, false, false),
        (C::Less, true, false, false, false),
        (C::Equal, false, false, true, false),
        (C::LessEqual, true, false, true, false),
        (C::Greater, false, true, false, false),
        (C::NotEqual, true, true, false, true),
        (C::GreaterEqual, false, true, true, false),
        (C::Always, true, true, true, true),
    ];
    for (func, ref_below, ref_above, equal, with_nan) in table {
        assert_eq!(func.passes(lo, hi), ref_below, "{func} ref < texel");
        assert_eq!(func.passes(hi, lo), ref_above, "{func} ref > texel");
        assert_eq!(func.passes(hi, hi), equal, "{func} equal");
        assert_eq!(func.passes(-0.0, 0.0), equal, "{func} -0 vs +0");
        assert_eq!(func.passes(nan, hi), with_nan, "{func} NaN reference");
        assert_eq!(func.passes(hi, nan), with_nan, "{func} NaN texel");
        assert_eq!(func.passes_u32(1, 2), ref_below, "{func} u32 <");
        assert_eq!(func.passes_u32(2, 1), ref_above, "{func} u32 >");
        assert_eq!(func.passes_u32(7, 7), equal, "{func} u32 ==");
    }
}

// ---------------------------------------------------------------------------------------------
// R9–R18: SamplerDesc / StaticSamplerDesc validation

#[test]
fn defaults_are_valid() {
    SamplerDesc::default().validate().unwrap();
    StaticSamplerDesc::default().validate().unwrap();
    let d = SamplerDesc::default();
    assert_eq!(d.filter, Filter::MinMagMipLinear);
    assert_eq!(
        [d.address_u, d.address_v, d.address_w],
        [AddressMode::Clamp; 3]
    );
    assert_eq!(
        (d.max_anisotropy, d.comparison_func),
        (1, ComparisonFunc::None)
    );
    assert_eq!((d.min_lod, d.max_lod), (0.0, f32::MAX));
}

#[test]
fn mip_lod_bias_range_edges_r9() {
    let with_bias = |b: f32| SamplerDesc {
        mip_lod_bias: b,
        ..SamplerDesc::default()
    };
    with_bias(15.99).validate().unwrap();
    with_bias(-16.0).validate().unwrap();
    with_bias(0.0).validate().unwrap();
    for bad in [
        15.990001,
        16.0,
        -16.000002,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ] {
        let e = err(with_bias(bad).validate());
        assert_eq!((e.field, e.rule), ("MipLODBias", "R9"), "{bad}");
    }
    let e = err(with_bias(20.0).validate());
    assert!(
        e.to_string().starts_with(
            "MipLODBias = 20: must be a number in [-16, 15.99] (SPEC R9; D3D12_MIP_LOD_BIAS_MIN/MAX"
        ),
        "{e}"
    );
}

#[test]
fn mip_lod_bias_nan_is_rejected_r9() {
    let d = StaticSamplerDesc {
        mip_lod_bias: f32::NAN,
        ..StaticSamplerDesc::default()
    };
    let e = err(d.validate());
    assert_eq!(
        (e.field, e.value.as_str(), e.rule),
        ("MipLODBias", "NaN", "R9")
    );
}

#[test]
fn max_anisotropy_0_and_16_accepted_17_rejected_r10() {
    for (value, ok) in [
        (0, true),
        (1, true),
        (16, true),
        (17, false),
        (u32::MAX, false),
    ] {
        for filter in [Filter::Anisotropic, Filter::MinMagMipPoint] {
            let d = SamplerDesc {
                max_anisotropy: value,
                ..SamplerDesc::new(filter)
            };
            assert_eq!(d.validate().is_ok(), ok, "{value} {filter}");
            let s = StaticSamplerDesc {
                max_anisotropy: value,
                filter,
                ..StaticSamplerDesc::default()
            };
            assert_eq!(s.validate().is_ok(), ok, "static {value} {filter}");
        }
    }
    let e = err(SamplerDesc {
        max_anisotropy: 17,
        ..SamplerDesc::default()
    }
    .validate());
    assert_eq!(
        (e.field, e.rule, e.value.as_str()),
        ("MaxAnisotropy", "R10", "17")
    );
}

#[test]
fn comparison_func_none_rejected_only_with_comparison_filters_r11() {
    for f in Filter::ALL {
        let d = SamplerDesc::comparison(f, ComparisonFunc::None);
        if f.is_comparison() {
            let e = err(d.validate());
            assert_eq!((e.field, e.rule), ("ComparisonFunc", "R11"));
        } else {
            d.validate().unwrap();
        }
        for func in ComparisonFunc::ALL.into_iter().skip(1) {
            SamplerDesc::comparison(f, func).validate().unwrap();
        }
    }
}

#[test]
fn lod_nan_rejected_infinities_and_inverted_range_accepted_r12() {
    let lods = |min_lod: f32, max_lod: f32| SamplerDesc {
        min_lod,
        max_lod,
        ..SamplerDesc::default()
    };
    let e = err(lods(f32::NAN, 0.0).validate());
    assert_eq!((e.field, e.rule), ("MinLOD", "R12"));
    let e = err(lods(0.0, f32::NAN).validate());
    assert_eq!((e.field, e.rule), ("MaxLOD", "R12"));
    lods(f32::NEG_INFINITY, f32::INFINITY).validate().unwrap();
    lods(f32::INFINITY, f32::INFINITY).validate().unwrap();
    lods(5.0, 1.0).validate().unwrap(); // [DOC] MaxLOD >= MinLOD is not enforced
    // d3d12.h spells D3D12_FLOAT32_MAX as 3.402823466e+38f, which rounds to f32::MAX.
    assert_eq!(Ok(FLOAT32_MAX), "3.402823466e+38".parse::<f32>());
}

#[test]
fn dynamic_border_color_outside_unit_range_is_accepted_r13() {
    let d = SamplerDesc {
        border_color: [-1.0, 2.0, f32::NAN, 0.5],
        address_u: AddressMode::Border,
        ..SamplerDesc::default()
    };
    d.validate().unwrap();
}

#[test]
fn undefined_flag_bits_are_rejected_r14() {
    for bits in [4, 8, 0x8000_0000] {
        let d = SamplerDesc {
            flags: SamplerFlags(bits | 1),
            border_color: [1.0; 4],
            ..SamplerDesc::default()
        };
        let e = err(d.validate());
        assert_eq!((e.field, e.rule), ("Flags", "R14"));
        let s = StaticSamplerDesc {
            flags: SamplerFlags(bits),
            ..StaticSamplerDesc::default()
        };
        assert_eq!(err(s.validate()).field, "Flags");
    }
}

#[test]
fn uint_border_flag_needs_a_uint_static_border_r14() {
    for color in StaticBorderColor::ALL {
        let d = StaticSamplerDesc {
            flags: SamplerFlags::UINT_BORDER_COLOR,
            border_color: color,
            ..StaticSamplerDesc::default()
        };
        if color.is_uint() {
            d.validate().unwrap(); // redundant but legal
        } else {
            let e = err(d.validate());
            assert_eq!((e.field, e.rule), ("BorderColor", "R14"));
        }
        // Without the flag every static border is fine.
        StaticSamplerDesc {
            border_color: color,
            ..StaticSamplerDesc::default()
        }
        .validate()
        .unwrap();
    }
}

#[test]
fn static_to_sampler_desc_turns_uint_borders_into_0_1_r14() {
    let s = StaticSamplerDesc {
        border_color: StaticBorderColor::OpaqueWhiteUint,
        ..StaticSamplerDesc::new(4, 1)
    };
    let d = s.to_sampler_desc();
    assert_eq!(d.border_color, [1.0; 4]);
    assert!(d.flags.contains(SamplerFlags::UINT_BORDER_COLOR));
    assert_eq!(d.uint_border_color(), [1; 4]);
    d.validate().unwrap();
    let f = StaticSamplerDesc {
        border_color: StaticBorderColor::OpaqueBlack,
        ..StaticSamplerDesc::default()
    }
    .to_sampler_desc();
    assert_eq!(f.border_color, [0.0, 0.0, 0.0, 1.0]);
    assert!(f.flags.is_empty());
    assert_eq!((f.filter, f.max_anisotropy), (Filter::Anisotropic, 16));
}

#[test]
fn uint_border_flag_reads_whole_number_borders_r15() {
    let d = SamplerDesc {
        flags: SamplerFlags::UINT_BORDER_COLOR,
        border_color: [7.0, 0.0, 65535.0, 1.0],
        ..SamplerDesc::default()
    };
    d.validate().unwrap();
    assert_eq!(d.uint_border_color(), [7, 0, 65535, 1]);
    for bad in [0.5, -1.0, f32::NAN, f32::INFINITY] {
        let e = err(SamplerDesc {
            border_color: [bad, 0.0, 0.0, 0.0],
            ..d
        }
        .validate());
        assert_eq!((e.field, e.rule), ("BorderColor", "R15"));
    }
}

#[test]
fn static_sampler_defaults_follow_hlsl_root_signature_r16() {
    let d = StaticSamplerDesc::default();
    assert_eq!(d.filter, Filter::Anisotropic);
    assert_eq!(
        [d.address_u, d.address_v, d.address_w],
        [AddressMode::Wrap; 3]
    );
    assert_eq!(d.mip_lod_bias, 0.0);
    assert_eq!(d.max_anisotropy, 16);
    assert_eq!(d.comparison_func, ComparisonFunc::LessEqual);
    assert_eq!(d.border_color, StaticBorderColor::OpaqueWhite);
    assert_eq!(d.min_lod, 0.0);
    assert_eq!(Ok(d.max_lod), "3.402823466e+38".parse::<f32>());
    assert_eq!((d.shader_register, d.register_space), (0, 0));
    assert_eq!(d.shader_visibility, ShaderVisibility::All);
    assert!(d.flags.is_empty());
    // Omitted serde fields take the same defaults.
    let from_ron: StaticSamplerDesc = ron::from_str("()").unwrap();
    assert_eq!(from_ron, d);
    let from_json: StaticSamplerDesc = serde_json::from_str("{}").unwrap();
    assert_eq!(from_json, d);
}

#[test]
fn non_normalized_coordinates_restrict_filter_lod_and_address_r18() {
    let nn = |filter: Filter| SamplerDesc {
        flags: SamplerFlags::NON_NORMALIZED_COORDINATES,
        min_lod: 0.0,
        max_lod: 0.0,
        ..SamplerDesc::comparison(filter, ComparisonFunc::LessEqual)
    };
    let allowed = [
        Filter::MinMagMipPoint,
        Filter::MinMagLinearMipPoint,
        Filter::MinimumMinMagMipPoint,
        Filter::MinimumMinMagLinearMipPoint,
        Filter::MaximumMinMagMipPoint,
        Filter::MaximumMinMagLinearMipPoint,
    ];
    for f in Filter::ALL {
        let r = nn(f).validate();
        if allowed.contains(&f) {
            r.unwrap();
        } else {
            // SPEC R18 lists no COMPARISON_ form, so those are rejected too.
            let e = err(r);
            assert_eq!((e.field, e.rule), ("Filter", "R18"), "{f}");
        }
    }
    let base = nn(Filter::MinMagMipPoint);
    let e = err(SamplerDesc {
        max_lod: f32::MAX,
        ..base
    }
    .validate());
    assert_eq!((e.field, e.rule), ("MaxLOD", "R18"));
    let e = err(SamplerDesc {
        min_lod: 1.0,
        ..base
    }
    .validate());
    assert_eq!((e.field, e.rule), ("MinLOD", "R18"));
    for mode in AddressMode::ALL {
        let ok = matches!(mode, AddressMode::Clamp | AddressMode::Border);
        let u = SamplerDesc {
            address_u: mode,
            ..base
        }
        .validate();
        assert_eq!(u.is_ok(), ok, "U {mode}");
        let v = SamplerDesc {
            address_v: mode,
            ..base
        }
        .validate();
        assert_eq!(
            v.map_err(|e| e.field),
            if ok { Ok(()) } else { Err("AddressV") }
        );
        // AddressW is not restricted.
        SamplerDesc {
            address_w: mode,
            ..base
        }
        .validate()
        .unwrap();
    }
    // Static samplers follow the same rules.
    let s = StaticSamplerDesc {
        flags: SamplerFlags::NON_NORMALIZED_COORDINATES,
        ..StaticSamplerDesc::default()
    };
    assert_eq!(err(s.validate()).rule, "R18");
}

#[test]
fn reserved_register_spaces_are_rejected_r119() {
    for space in [0xFFFF_FFF0, 0xFFFF_FFF7, u32::MAX] {
        let d = StaticSamplerDesc::new(0, space);
        let e = err(d.validate());
        assert_eq!((e.field, e.rule), ("RegisterSpace", "R119"));
        let t = StaticSamplerTable::new(vec![StaticSamplerDesc::new(1, 0), d]).unwrap_err();
        assert_eq!(
            t,
            TableError::ReservedSpace {
                index: 1,
                name: None,
                space
            }
        );
    }
    StaticSamplerDesc::new(0, 0xFFFF_FFEF).validate().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Display / FromStr / serde round trips of every enum value

fn round_trip_enum<T>(all: &[T], prefix: &str, raw: impl Fn(T) -> u32)
where
    T: Copy + PartialEq + Debug + Display + FromStr + Serialize + DeserializeOwned,
    T::Err: Debug,
{
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Holder<T> {
        #[serde(rename = "Value")]
        value: T,
    }
    for &v in all {
        let name = v.to_string();
        let n = raw(v);
        assert_eq!(name.parse::<T>().unwrap(), v, "{name}");
        assert_eq!(format!("{prefix}{name}").parse::<T>().unwrap(), v);
        assert_eq!(n.to_string().parse::<T>().unwrap(), v);
        assert_eq!(format!("0x{n:X}").parse::<T>().unwrap(), v);
        assert!(name.to_lowercase().parse::<T>().is_err(), "case-sensitive");

        // RON: written as a bare identifier, read back from it, a string or a number.
        let ron_text = ron::to_string(&v).unwrap();
        assert_eq!(ron_text, name);
        assert_eq!(ron::from_str::<T>(&ron_text).unwrap(), v);
        assert_eq!(ron::from_str::<T>(&format!("\"{name}\"")).unwrap(), v);
        assert_eq!(ron::from_str::<T>(&n.to_string()).unwrap(), v);
        let held = ron::to_string(&Holder { value: v }).unwrap();
        assert_eq!(held, format!("(Value:{name})"));
        assert_eq!(ron::from_str::<Holder<T>>(&held).unwrap().value, v);
        let held = format!("(Value: {prefix}{name})");
        assert_eq!(ron::from_str::<Holder<T>>(&held).unwrap().value, v);
        let held = format!("(Value: {n})");
        assert_eq!(ron::from_str::<Holder<T>>(&held).unwrap().value, v);

        // JSON: a string, or a number.
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(json, format!("\"{name}\""));
        assert_eq!(serde_json::from_str::<T>(&json).unwrap(), v);
        assert_eq!(serde_json::from_str::<T>(&n.to_string()).unwrap(), v);
        let held = format!("{{\"Value\": {n}}}");
        assert_eq!(serde_json::from_str::<Holder<T>>(&held).unwrap().value, v);
    }
    assert!("NOPE".parse::<T>().is_err());
    assert!(ron::from_str::<T>("NOPE").is_err());
    assert!(ron::from_str::<T>("1.5").is_err());
    assert!(serde_json::from_str::<T>("-1").is_err());
    assert!(serde_json::from_str::<T>("99999").is_err());
}

#[test]
fn every_filter_round_trips_through_text_ron_and_json() {
    round_trip_enum(&Filter::ALL, "D3D12_FILTER_", Filter::raw);
}

#[test]
fn every_address_mode_round_trips_through_text_ron_and_json() {
    round_trip_enum(
        &AddressMode::ALL,
        "D3D12_TEXTURE_ADDRESS_MODE_",
        AddressMode::raw,
    );
}

#[test]
fn every_comparison_func_round_trips_through_text_ron_and_json() {
    round_trip_enum(
        &ComparisonFunc::ALL,
        "D3D12_COMPARISON_FUNC_",
        ComparisonFunc::raw,
    );
}

#[test]
fn every_static_border_color_round_trips_through_text_ron_and_json() {
    round_trip_enum(
        &StaticBorderColor::ALL,
        "D3D12_STATIC_BORDER_COLOR_",
        StaticBorderColor::raw,
    );
}

#[test]
fn every_shader_visibility_round_trips_through_text_ron_and_json() {
    round_trip_enum(
        &ShaderVisibility::ALL,
        "D3D12_SHADER_VISIBILITY_",
        ShaderVisibility::raw,
    );
}

#[test]
fn parse_errors_name_the_type_and_the_allowed_names() {
    let e = "FOO".parse::<AddressMode>().unwrap_err().to_string();
    assert!(e.contains("D3D12_TEXTURE_ADDRESS_MODE"), "{e}");
    for m in AddressMode::ALL {
        assert!(e.contains(m.name()), "{e}");
    }
    let e = "LINEAR".parse::<Filter>().unwrap_err().to_string();
    assert!(
        e.contains("one of the 40 D3D12_FILTER names")
            && e.contains("MIN_MAG_MIP_LINEAR, COMPARISON_MIN_MAG_LINEAR_MIP_POINT"),
        "{e}"
    );
    let e = "3".parse::<Filter>().unwrap_err().to_string();
    assert!(e.contains("\"3\" is not a D3D12_FILTER"), "{e}");
    let e = "PIXEL_SHADER"
        .parse::<ShaderVisibility>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("AMPLIFICATION, MESH"), "{e}");
    let e = ron::from_str::<SamplerDesc>("(Filter: TRILINEAR)")
        .unwrap_err()
        .to_string();
    assert!(e.contains("TRILINEAR") && e.contains("D3D12_FILTER"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// SamplerFlags and SamplerDesc serde

#[test]
fn sampler_flags_text_and_serde_forms() {
    let both = SamplerFlags::UINT_BORDER_COLOR | SamplerFlags::NON_NORMALIZED_COORDINATES;
    assert_eq!(both, SamplerFlags(3));
    assert!(both.contains(SamplerFlags::UINT_BORDER_COLOR));
    assert!(!SamplerFlags::UINT_BORDER_COLOR.contains(both));
    assert_eq!(
        both.to_string(),
        "UINT_BORDER_COLOR | NON_NORMALIZED_COORDINATES"
    );
    assert_eq!(SamplerFlags::NONE.to_string(), "NONE");
    for f in [SamplerFlags(0), SamplerFlags(1), SamplerFlags(2), both] {
        assert_eq!(f.to_string().parse::<SamplerFlags>().unwrap(), f);
        assert_eq!(
            ron::from_str::<SamplerFlags>(&ron::to_string(&f).unwrap()).unwrap(),
            f
        );
        assert_eq!(
            serde_json::from_str::<SamplerFlags>(&serde_json::to_string(&f).unwrap()).unwrap(),
            f
        );
    }
    assert_eq!(
        ron::to_string(&both).unwrap(),
        "[UINT_BORDER_COLOR,NON_NORMALIZED_COORDINATES]"
    );
    assert_eq!(ron::from_str::<SamplerFlags>("3").unwrap(), both);
    assert_eq!(
        ron::from_str::<SamplerFlags>("[D3D12_SAMPLER_FLAG_UINT_BORDER_COLOR, 2]").unwrap(),
        both
    );
    assert_eq!(
        ron::from_str::<SamplerFlags>("NON_NORMALIZED_COORDINATES").unwrap(),
        SamplerFlags(2)
    );
    assert_eq!(
        serde_json::from_str::<SamplerFlags>("[\"UINT_BORDER_COLOR\"]").unwrap(),
        SamplerFlags(1)
    );
    assert_eq!(serde_json::to_string(&SamplerFlags(4)).unwrap(), "4");
    assert!(ron::from_str::<SamplerFlags>("[BORDER]").is_err());
}

#[test]
fn sampler_desc_serde_uses_d3d12_names_and_defaults() {
    let d: SamplerDesc = ron::from_str("(Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT, ComparisonFunc: LESS, AddressU: BORDER, BorderColor: OPAQUE_BLACK)").unwrap();
    assert_eq!(d.filter, Filter::ComparisonMinMagLinearMipPoint);
    assert_eq!(d.comparison_func, ComparisonFunc::Less);
    assert_eq!(d.address_u, AddressMode::Border);
    assert_eq!(d.address_v, AddressMode::Clamp);
    assert_eq!(d.border_color, [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(d.max_lod, f32::MAX);

    let j: SamplerDesc = serde_json::from_str(r#"{"Filter": 85, "MaxAnisotropy": 8, "BorderColor": [0.5, 0.25, 0, 1], "Flags": ["UINT_BORDER_COLOR"], "MipLODBias": -1.5}"#).unwrap();
    assert_eq!(j.filter, Filter::Anisotropic);
    assert_eq!(j.max_anisotropy, 8);
    assert_eq!(j.border_color, [0.5, 0.25, 0.0, 1.0]);
    assert_eq!(j.flags, SamplerFlags::UINT_BORDER_COLOR);
    assert_eq!(j.mip_lod_bias, -1.5);

    let b: SamplerDesc =
        serde_json::from_str(r#"{"Filter": "ANISOTROPIC", "BorderColor": 2}"#).unwrap();
    assert_eq!(b.border_color, [1.0; 4]);

    // Filter is required; unknown fields are refused.
    assert!(ron::from_str::<SamplerDesc>("()").is_err());
    assert!(ron::from_str::<SamplerDesc>("(Filter: ANISOTROPIC, AddresU: WRAP)").is_err());

    let full = SamplerDesc {
        filter: Filter::MaximumMinMagMipPoint,
        address_u: AddressMode::MirrorOnce,
        address_v: AddressMode::Mirror,
        address_w: AddressMode::Wrap,
        mip_lod_bias: 15.99,
        max_anisotropy: 0,
        comparison_func: ComparisonFunc::GreaterEqual,
        border_color: [0.1, 0.2, 0.3, 0.4],
        min_lod: -3.5,
        max_lod: f32::INFINITY,
        flags: SamplerFlags::UINT_BORDER_COLOR,
    };
    let ron_text = ron::to_string(&full).unwrap();
    assert!(
        ron_text.contains("Filter:MAXIMUM_MIN_MAG_MIP_POINT"),
        "{ron_text}"
    );
    assert_eq!(ron::from_str::<SamplerDesc>(&ron_text).unwrap(), full);
    // JSON has no infinity, so round-trip a finite MaxLOD there.
    let finite = SamplerDesc {
        max_lod: 12.0,
        ..full
    };
    let json = serde_json::to_string(&finite).unwrap();
    assert!(json.contains("\"MipLODBias\":15.99"), "{json}");
    assert_eq!(serde_json::from_str::<SamplerDesc>(&json).unwrap(), finite);
}

// ---------------------------------------------------------------------------------------------
// R119: StaticSamplerTable

fn at(register: u32, space: u32, visibility: ShaderVisibility) -> StaticSamplerDesc {
    StaticSamplerDesc {
        shader_visibility: visibility,
        ..StaticSamplerDesc::new(register, space)
    }
}

#[test]
fn all_visibility_overlaps_a_single_stage_on_the_same_binding_r119() {
    let named = vec![
        ("shadow".to_owned(), at(2, 3, ShaderVisibility::All)),
        ("a".to_owned(), at(0, 0, ShaderVisibility::All)),
        ("b".to_owned(), at(1, 3, ShaderVisibility::Pixel)),
        ("pcf".to_owned(), at(2, 3, ShaderVisibility::Pixel)),
    ];
    let e = StaticSamplerTable::from_named(named).unwrap_err();
    assert_eq!(
        e,
        TableError::Overlap {
            first: 0,
            first_name: Some("shadow".into()),
            second: 3,
            second_name: Some("pcf".into()),
            register: 2,
            space: 3,
            visibility: ShaderVisibility::Pixel,
        }
    );
    let text = e.to_string();
    assert!(
        text.contains("0 (shadow) and 3 (pcf) both bind s2, space3 for PIXEL"),
        "{text}"
    );
    // Both ALL, and the reverse order.
    let e = StaticSamplerTable::new(vec![
        at(5, 0, ShaderVisibility::Vertex),
        at(5, 0, ShaderVisibility::All),
    ])
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("0 and 1 both bind s5, space0 for VERTEX"),
        "{e}"
    );
    let e = StaticSamplerTable::new(vec![
        at(5, 0, ShaderVisibility::All),
        at(5, 0, ShaderVisibility::All),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("for ALL"), "{e}");
    let e = StaticSamplerTable::new(vec![
        at(5, 0, ShaderVisibility::Mesh),
        at(5, 0, ShaderVisibility::Mesh),
    ])
    .unwrap_err();
    assert!(
        matches!(
            e,
            TableError::Overlap {
                first: 0,
                second: 1,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn different_stages_spaces_or_registers_do_not_overlap_r119() {
    let t = StaticSamplerTable::new(vec![
        at(2, 3, ShaderVisibility::Pixel),
        at(2, 3, ShaderVisibility::Vertex),
        at(2, 4, ShaderVisibility::All),
        at(3, 3, ShaderVisibility::All),
        at(2, 3, ShaderVisibility::Mesh),
    ])
    .unwrap();
    assert_eq!(t.len(), 5);
    assert!(!t.is_empty());
}

#[test]
fn lookup_goes_by_space_register_and_stage_r119() {
    let mut shadow = at(2, 3, ShaderVisibility::Pixel);
    shadow.filter = Filter::ComparisonMinMagLinearMipPoint;
    let vertex = at(2, 3, ShaderVisibility::Vertex);
    let everywhere = at(0, 0, ShaderVisibility::All);
    let t = StaticSamplerTable::from_named(vec![
        ("shadow".into(), shadow),
        ("vertex".into(), vertex),
        ("everywhere".into(), everywhere),
    ])
    .unwrap();
    assert_eq!(t.lookup(3, 2, ShaderVisibility::Pixel), Some(&shadow));
    assert_eq!(t.lookup(3, 2, ShaderVisibility::Vertex), Some(&vertex));
    assert_eq!(t.lookup(3, 2, ShaderVisibility::Hull), None);
    assert_eq!(t.lookup(2, 3, ShaderVisibility::Pixel), None); // space and register swapped
    for stage in ShaderVisibility::ALL {
        assert_eq!(t.lookup(0, 0, stage), Some(&everywhere));
    }
    assert_eq!(t.get("vertex"), Some(&vertex));
    assert_eq!(t.get("nope"), None);
    let names: Vec<Option<&str>> = t.iter().map(|(n, _)| n).collect();
    assert_eq!(names, [Some("shadow"), Some("vertex"), Some("everywhere")]);
}

#[test]
fn invalid_entry_is_reported_with_index_and_name() {
    let mut bad = at(1, 0, ShaderVisibility::All);
    bad.mip_lod_bias = f32::NAN;
    let e = StaticSamplerTable::from_named(vec![
        ("ok".into(), at(0, 0, ShaderVisibility::All)),
        ("biased".into(), bad),
    ])
    .unwrap_err();
    let TableError::Entry { index, name, error } = &e else {
        panic!("{e}")
    };
    assert_eq!(
        (*index, name.as_deref(), error.field),
        (1, Some("biased"), "MipLODBias")
    );
    assert!(
        e.to_string()
            .starts_with("static sampler 1 (biased): MipLODBias = NaN"),
        "{e}"
    );
}

#[test]
fn duplicate_names_are_rejected() {
    let e = StaticSamplerTable::from_named(vec![
        ("s".into(), at(0, 0, ShaderVisibility::All)),
        ("s".into(), at(1, 0, ShaderVisibility::All)),
    ])
    .unwrap_err();
    assert_eq!(
        e,
        TableError::DuplicateName {
            first: 0,
            second: 1,
            name: "s".into()
        }
    );
}

#[test]
fn at_most_2032_static_samplers_r119() {
    let many = |n: u32| {
        (0..n)
            .map(|r| at(r, 0, ShaderVisibility::All))
            .collect::<Vec<_>>()
    };
    assert_eq!(MAX_LIVE_STATIC_SAMPLERS, 2032);
    assert_eq!(StaticSamplerTable::new(many(2032)).unwrap().len(), 2032);
    assert_eq!(
        StaticSamplerTable::new(many(2033)).unwrap_err(),
        TableError::TooMany { count: 2033 }
    );
}

#[test]
fn table_from_ron_named_and_list_forms_round_trip() {
    let text = r#"
        // A named table.
        StaticSamplerTable(samplers: {
            "shadow": (Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT, AddressU: BORDER,
                       ShaderRegister: 2, RegisterSpace: 3, ShaderVisibility: PIXEL,
                       BorderColor: OPAQUE_BLACK, ComparisonFunc: D3D12_COMPARISON_FUNC_LESS),
            "point": (Filter: 0, AddressU: CLAMP, AddressV: CLAMP, MinLOD: 0, MaxLOD: 0,
                      Flags: [NON_NORMALIZED_COORDINATES], ShaderRegister: 1),
            "aniso": (MipLODBias: -16.0, MaxAnisotropy: 4, MinLOD: -inf, MaxLOD: inf,
                      BorderColor: OPAQUE_WHITE_UINT, Flags: [UINT_BORDER_COLOR], ShaderRegister: 2,
                      ShaderVisibility: VERTEX, RegisterSpace: 3),
        })
    "#;
    let t = StaticSamplerTable::from_ron(text).unwrap();
    assert_eq!(t.len(), 3);
    let shadow = t.get("shadow").unwrap();
    assert_eq!(shadow.filter, Filter::ComparisonMinMagLinearMipPoint);
    assert_eq!(shadow.address_u, AddressMode::Border);
    assert_eq!(shadow.address_v, AddressMode::Wrap); // R16 default
    assert_eq!(shadow.comparison_func, ComparisonFunc::Less);
    assert_eq!(t.get("aniso").unwrap().min_lod, f32::NEG_INFINITY);
    assert_eq!(t.lookup(3, 2, ShaderVisibility::Vertex), t.get("aniso"));

    let again = StaticSamplerTable::from_ron(&t.to_ron()).unwrap();
    assert_eq!(again, t);
    let json = serde_json::to_string(&StaticSamplerTable::new(vec![*shadow]).unwrap()).unwrap();
    assert_eq!(
        serde_json::from_str::<StaticSamplerTable>(&json)
            .unwrap()
            .len(),
        1
    );

    // The struct name is optional; a plain list works too.
    let short =
        StaticSamplerTable::from_ron(r#"(samplers: { "a": (), "b": (ShaderRegister: 1) })"#)
            .unwrap();
    assert_eq!(short.len(), 2);
    let list = StaticSamplerTable::from_ron(
        "[(ShaderRegister: 0), (ShaderRegister: 1, Filter: MIN_MAG_MIP_POINT)]",
    )
    .unwrap();
    assert_eq!(
        list.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        [None, None]
    );
    assert_eq!(StaticSamplerTable::from_ron(&list.to_ron()).unwrap(), list);
    assert!(StaticSamplerTable::from_ron("[]").unwrap().is_empty());
}

#[test]
fn table_from_ron_reports_line_and_column_and_validates() {
    let e = StaticSamplerTable::from_ron("(samplers: {\n  \"a\": (Filter: ANISOTROPIC,,),\n})")
        .unwrap_err();
    let TableError::Ron(message) = &e else {
        panic!("{e}")
    };
    assert!(message.starts_with("2:"), "{message}");

    let e = StaticSamplerTable::from_ron("[(Filter: 3)]").unwrap_err();
    assert!(matches!(e, TableError::Ron(_)), "{e}");

    let e = StaticSamplerTable::from_ron("[(), ()]").unwrap_err();
    assert!(
        matches!(
            e,
            TableError::Overlap {
                first: 0,
                second: 1,
                ..
            }
        ),
        "{e}"
    );

    let e =
        StaticSamplerTable::from_ron(r#"(samplers: { "x": (MaxAnisotropy: 17) })"#).unwrap_err();
    assert!(
        e.to_string()
            .contains("static sampler 0 (x): MaxAnisotropy = 17"),
        "{e}"
    );
}
