//! Issue 9, item 3: D3D12's size limits and the coordinates at the ends of f32.
//!
//! * Textures up to D3D12's maximum sizes (16384² 2D, 2048³ 3D, 2048 slices, 15 mips) are
//!   accepted, or refused with an error that names the field or the byte count, before anything
//!   is allocated; just past a limit the error names the field.
//! * Coordinates of ±1e30, ±inf and NaN give D3D's defined answers on every operation (SPEC R24
//!   range reduction, R110 NaN → texel 0, R43 slices, R57 LOD clamps, R98 cube directions),
//!   checked against values derived by hand below.
//!
//! No test here allocates more than the 256 MiB of one 16384² R8 texture.

use penumbra_core::raster::{DepthTarget, RasterError};
use penumbra_core::sample::quad::Quad;
use penumbra_core::texture::limits;
use penumbra_core::{
    AddressMode, ComparisonFunc, Coord, Dimension, Filter, Format, LodMode, SampleArgs, Sampler,
    SamplerDesc, Texture, TextureDesc, TextureError,
};

// ---------------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------------

fn desc(dim: Dimension, format: Format, size: [u32; 3], array: u32, mips: u32) -> TextureDesc {
    TextureDesc::new(dim, format, size, array).with_mip_levels(mips)
}

/// The field an `InvalidDesc` names, or a panic.
fn refused_field(d: &TextureDesc) -> &'static str {
    match d.validate() {
        Err(TextureError::InvalidDesc { field, .. }) => field,
        other => panic!("{d:?}: expected an InvalidDesc, got {other:?}"),
    }
}

#[test]
fn the_limits_are_d3d12s() {
    assert_eq!(limits::MAX_EDGE_2D, 16384);
    assert_eq!(limits::MAX_EDGE_3D, 2048);
    assert_eq!(limits::MAX_ARRAY_SIZE, 2048);
    assert_eq!(limits::MAX_MIP_LEVELS, 15);
    assert_eq!(limits::MAX_BYTES, 4 << 30);
}

#[test]
fn maximum_sizes_validate_when_they_fit_the_byte_guard() {
    use Dimension::*;
    let ok = [
        desc(Texture1D, Format::R32G32B32A32Float, [16384, 1, 1], 1, 15),
        desc(Texture1DArray, Format::R8Unorm, [16384, 1, 1], 2048, 15),
        desc(Texture2D, Format::R8Unorm, [16384, 16384, 1], 1, 15),
        desc(Texture2D, Format::R32G32B32A32Float, [16384, 4096, 1], 1, 1), // exactly 1 GiB
        desc(Texture2DArray, Format::R8Unorm, [16, 16, 1], 2048, 5),
        desc(TextureCube, Format::R8Unorm, [16384, 16384, 1], 6, 15),
        desc(TextureCubeArray, Format::R8Unorm, [16, 16, 1], 2046, 5), // 341 cubes
        desc(Texture3D, Format::R8Unorm, [2048, 2048, 1024], 1, 1),    // exactly MAX_BYTES
        desc(Texture3D, Format::R8Unorm, [2048, 16, 16], 1, 12),
    ];
    for d in ok {
        assert_eq!(d.validate(), Ok(()), "{d:?}");
        assert!(d.total_bytes() <= limits::MAX_BYTES);
    }
}

#[test]
fn maximum_sizes_past_the_byte_guard_are_refused_before_allocating() {
    use Dimension::*;
    let too_large = [
        // 2048³ R8 = 8 GiB: within D3D12's edges, past penumbra's 4 GiB guard.
        desc(Texture3D, Format::R8Unorm, [2048, 2048, 2048], 1, 1),
        desc(
            Texture3D,
            Format::R32G32B32A32Float,
            [2048, 2048, 2048],
            1,
            12,
        ),
        desc(Texture2DArray, Format::R8Unorm, [16384, 16384, 1], 2048, 1),
        desc(
            TextureCubeArray,
            Format::R32Float,
            [16384, 16384, 1],
            2046,
            15,
        ),
        desc(
            Texture2D,
            Format::R32G32B32A32Float,
            [16384, 16384, 1],
            1,
            15,
        ),
    ];
    for d in too_large {
        let bytes = d.total_bytes();
        assert!(bytes > limits::MAX_BYTES);
        assert_eq!(d.validate(), Err(TextureError::TooLarge { bytes }));
        // Every constructor refuses it the same way, and quickly: nothing is allocated (an
        // allocation of this size would take seconds or abort the test process).
        assert_eq!(
            Texture::zeroed(d).unwrap_err(),
            TextureError::TooLarge { bytes }
        );
        assert_eq!(
            Texture::new(d, Vec::new()).unwrap_err(),
            TextureError::TooLarge { bytes }
        );
        assert_eq!(
            Texture::from_f32(d, &[]).unwrap_err(),
            TextureError::TooLarge { bytes }
        );
        assert_eq!(
            Texture::from_level0_f32(d, &[], penumbra_core::texture::MipFilter::Average)
                .unwrap_err(),
            TextureError::TooLarge { bytes }
        );
        assert_eq!(
            Texture::from_subresources(d, &[]).unwrap_err(),
            TextureError::TooLarge { bytes }
        );
        let text = d.validate().unwrap_err().to_string();
        assert!(text.contains(&bytes.to_string()), "{text}");
    }
}

#[test]
fn wrong_data_is_refused_before_allocating() {
    // 4 GiB that fit the guard: the data length is checked before the storage is allocated, so
    // these return at once instead of zero-filling 4 GiB first.
    let d = desc(
        Dimension::Texture3D,
        Format::R8Unorm,
        [2048, 2048, 1024],
        1,
        1,
    );
    assert!(matches!(
        Texture::from_f32(d, &[0.0]),
        Err(TextureError::DataLength { .. })
    ));
    assert!(matches!(
        Texture::from_level0_f32(d, &[], penumbra_core::texture::MipFilter::Min),
        Err(TextureError::DataLength { .. })
    ));
    assert!(matches!(
        Texture::from_subresources(d, &[&[0u8; 3][..]]),
        Err(TextureError::DataLength { .. })
    ));
    assert!(matches!(
        Texture::new(d, vec![0; 7]),
        Err(TextureError::DataLength { .. })
    ));
}

#[test]
fn one_past_each_limit_names_the_field() {
    use Dimension::*;
    let cases = [
        (
            desc(Texture2D, Format::R8Unorm, [16385, 1, 1], 1, 1),
            "width",
        ),
        (
            desc(Texture2D, Format::R8Unorm, [1, 16385, 1], 1, 1),
            "height",
        ),
        (
            desc(Texture1D, Format::R8Unorm, [16385, 1, 1], 1, 1),
            "width",
        ),
        (
            desc(TextureCube, Format::R8Unorm, [16385, 16385, 1], 6, 1),
            "width",
        ),
        (
            desc(Texture3D, Format::R8Unorm, [2049, 1, 1], 1, 1),
            "width",
        ),
        (
            desc(Texture3D, Format::R8Unorm, [1, 2049, 1], 1, 1),
            "height",
        ),
        (
            desc(Texture3D, Format::R8Unorm, [1, 1, 2049], 1, 1),
            "depth",
        ),
        (
            desc(Texture2DArray, Format::R8Unorm, [1, 1, 1], 2049, 1),
            "array_size",
        ),
        (
            desc(Texture1DArray, Format::R8Unorm, [1, 1, 1], 2049, 1),
            "array_size",
        ),
        (
            desc(TextureCubeArray, Format::R8Unorm, [1, 1, 1], 2052, 1),
            "array_size",
        ),
        (
            desc(Texture2D, Format::R8Unorm, [16384, 16384, 1], 1, 16),
            "mip_levels",
        ),
        (
            desc(Texture2D, Format::R8Unorm, [16, 16, 1], 1, 6),
            "mip_levels",
        ),
        (
            desc(Texture3D, Format::R8Unorm, [2048, 1, 1], 1, 13),
            "mip_levels",
        ),
        (
            desc(Texture2D, Format::R8Unorm, [16, 16, 1], 1, u32::MAX),
            "mip_levels",
        ),
        (desc(Texture2D, Format::R8Unorm, [0, 16, 1], 1, 1), "width"),
        (
            desc(Texture2D, Format::R8Unorm, [u32::MAX, u32::MAX, 1], 1, 1),
            "width",
        ),
        (
            desc(Texture2DArray, Format::R8Unorm, [1, 1, 1], u32::MAX, 1),
            "array_size",
        ),
        (
            desc(Texture3D, Format::R8Unorm, [1, 1, u32::MAX], 1, 1),
            "depth",
        ),
    ];
    for (d, field) in cases {
        assert_eq!(refused_field(&d), field, "{d:?}");
        let text = d.validate().unwrap_err().to_string();
        assert!(text.contains(field), "{text}");
        assert!(Texture::zeroed(d).is_err());
    }
    // The largest mip count is the full chain of a 16384 edge: 15.
    assert_eq!(
        desc(Texture2D, Format::R8Unorm, [16384, 1, 1], 1, 15).validate(),
        Ok(())
    );
}

#[test]
fn a_16384_square_texture_is_allocated_and_sampled() {
    // 256 MiB: the largest 2D R8 texture, built for real, sampled at both corners.
    let d = TextureDesc::new_2d(Format::R8Unorm, 16384, 16384);
    let mut data = vec![0u8; 16384 * 16384];
    data[16384 * 16384 - 1] = 255;
    data[0] = 51;
    let tex = Texture::new(d, data).unwrap();
    let s = Sampler::new(SamplerDesc::new(Filter::MinMagMipPoint)).unwrap();
    assert_eq!(
        s.sample_level(Some(&tex), [1.0, 1.0], 0.0, ()).unwrap()[0],
        1.0
    );
    assert_eq!(
        s.sample_level(Some(&tex), [1e30, f32::INFINITY], 0.0, ())
            .unwrap()[0],
        1.0
    );
    assert_eq!(
        s.sample_level(Some(&tex), [f32::NAN, -1e30], 0.0, ())
            .unwrap()[0],
        0.2
    );
    let (x, y) = (16383.5 / 16384.0, 16383.5 / 16384.0);
    assert_eq!(s.sample_level(Some(&tex), [x, y], 0.0, ()).unwrap()[0], 1.0);
}

#[test]
fn depth_targets_refuse_sizes_past_16384() {
    for (w, h) in [(0, 1), (1, 0), (16385, 1), (1, 16385), (u32::MAX, u32::MAX)] {
        assert_eq!(
            DepthTarget::new(w, h, Format::D32Float).unwrap_err(),
            RasterError::InvalidSize {
                width: w,
                height: h
            }
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Coordinates at the ends of f32
// ---------------------------------------------------------------------------------------------

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

/// A 4×1 R32_FLOAT row `[1, 2, 3, 4]` with mips `[10, 20]` and `[100]`: texel 0 is 1, not 0, so
/// "texel 0" and "border 0" are told apart; each mip has its own values.
fn row() -> Texture {
    let d = TextureDesc::new_2d(Format::R32Float, 4, 1).with_mip_levels(3);
    Texture::from_f32(d, &[1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 100.0]).unwrap()
}

fn sampler(filter: Filter, u: AddressMode) -> Sampler {
    let mut d = SamplerDesc::new(filter);
    d.address_u = u;
    d.border_color = [0.5, 0.25, 0.125, 1.0];
    Sampler::new(d).unwrap()
}

/// The hand-derived R channel of `sample_level(u, v = 0.5, lod 0)` on [`row`], for
/// `u = [1e30, -1e30, +inf, -inf, NaN]` and (point, linear).
///
/// R24 first: WRAP `U − floor(U)` is 0 for ±1e30 (whole numbers in f32) and NaN for ±inf;
/// MIRROR `2(U/2 − trunc(U/2))` likewise; CLAMP/BORDER/MIRROR_ONCE clamp to ±10. R110: NaN ends
/// as fixed-point 0 — texel 0 for point, taps 0 (weight 1) and 1 (weight 0) for linear.
/// Then with N = 4: U' = 0 → point t = 0; linear s = −0.5 → taps −1 and 0 at ½ each.
/// U' = 10 → point t = 40; linear taps 39, 40. U' = −10 → point t = −40; linear −41, −40.
fn expected(mode: AddressMode) -> [(f32, f32); 5] {
    match mode {
        // −1 wraps to 3 (value 4): linear (4 + 1)/2.
        AddressMode::Wrap => [(1.0, 2.5), (1.0, 2.5), (1.0, 1.0), (1.0, 1.0), (1.0, 1.0)],
        // −1 mirrors to 0.
        AddressMode::Mirror => [(1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (1.0, 1.0)],
        AddressMode::Clamp => [(4.0, 4.0), (1.0, 1.0), (4.0, 4.0), (1.0, 1.0), (1.0, 1.0)],
        // Every tap outside: the border's R (0.5).
        AddressMode::Border => [(0.5, 0.5), (0.5, 0.5), (0.5, 0.5), (0.5, 0.5), (1.0, 1.0)],
        // −40 mirrors once to 39, then clamps to 3.
        AddressMode::MirrorOnce => [(4.0, 4.0), (4.0, 4.0), (4.0, 4.0), (4.0, 4.0), (1.0, 1.0)],
    }
}

const FAR: [f32; 5] = [1e30, -1e30, INF, -INF, NAN];

#[test]
fn far_and_nan_coordinates_follow_r24_and_r110_on_sample_ops() {
    let tex = row();
    for mode in AddressMode::ALL {
        for (&u, (point, linear)) in FAR.iter().zip(expected(mode)) {
            for (filter, want) in [
                (Filter::MinMagMipPoint, point),
                (Filter::MinMagMipLinear, linear),
            ] {
                let s = sampler(filter, mode);
                let c = [u, 0.5];
                let what = format!("{mode} {filter} u = {u}");
                let got = s.sample_level(Some(&tex), c, 0.0, ()).unwrap();
                assert_eq!(got, [want, 0.0, 0.0, 1.0], "sample_level {what}");
                // The same LOD 0 through every other non-comparison op: explicit derivatives
                // of zero (LOD −inf → MinLOD 0), with and without a bias of −1.
                let z = [0.0; 3];
                assert_eq!(
                    s.sample_grad(Some(&tex), c, z, z, ()).unwrap()[0],
                    want,
                    "grad {what}"
                );
                assert_eq!(
                    s.sample_bias(Some(&tex), c, z, z, -1.0, ()).unwrap()[0],
                    want,
                    "bias {what}"
                );
                let args = SampleArgs {
                    coord: Coord::from(c),
                    lod: LodMode::Zero,
                    offset: Default::default(),
                    clamp: Some(-INF),
                };
                assert_eq!(
                    s.sample(Some(&tex), &args).unwrap()[0],
                    want,
                    "sample {what}"
                );
                // R24's clamp to ±10 keeps offsets from pulling a far coordinate back inside.
                if mode == AddressMode::Clamp && u.is_finite() {
                    assert_eq!(s.sample_level(Some(&tex), c, 0.0, [-8]).unwrap()[0], want);
                    assert_eq!(s.sample_level(Some(&tex), c, 0.0, [7]).unwrap()[0], want);
                }
            }
        }
    }
}

#[test]
fn far_and_nan_coordinates_on_gathers() {
    // Gathers read the bilinear footprint: taps in the order (i0,j1), (i1,j1), (i1,j0), (i0,j0).
    // On the 4×1 row with V CLAMP, rows j0 and j1 are both row 0.
    let tex = row();
    let s = sampler(Filter::MinMagMipLinear, AddressMode::Clamp);
    // NaN → F = 0: i0 = 0, i1 = 1.
    assert_eq!(
        s.gather(Some(&tex), [NAN, NAN], 0, ()).unwrap(),
        [1.0, 2.0, 2.0, 1.0]
    );
    // ±1e30, ±inf clamp to ±10: taps 39/40 → 3; −41/−40 → 0.
    for u in [1e30, INF] {
        assert_eq!(s.gather(Some(&tex), [u, 0.5], 0, ()).unwrap(), [4.0; 4]);
    }
    for u in [-1e30, -INF] {
        assert_eq!(s.gather(Some(&tex), [u, 0.5], 0, ()).unwrap(), [1.0; 4]);
    }
    // Missing components: G of R32 is 0, A is 1.
    assert_eq!(s.gather(Some(&tex), [NAN, INF], 3, ()).unwrap(), [1.0; 4]);
    let b = sampler(Filter::MinMagMipLinear, AddressMode::Border);
    assert_eq!(b.gather(Some(&tex), [1e30, 0.5], 0, ()).unwrap(), [0.5; 4]);
    let w = sampler(Filter::MinMagMipLinear, AddressMode::Wrap);
    // 1e30 wraps to 0: s = −0.5 → i0 = −1 → 3, i1 = 0.
    assert_eq!(
        w.gather(Some(&tex), [1e30, 0.5], 0, ()).unwrap(),
        [4.0, 1.0, 1.0, 4.0]
    );
}

/// A 4×1 D32 row `[0.25, 0.5, 0.75, 1.0]` and a comparison sampler.
fn depth_row(format: Format) -> Texture {
    Texture::from_f32(TextureDesc::new_2d(format, 4, 1), &[0.25, 0.5, 0.75, 1.0]).unwrap()
}

fn cmp(filter: Filter, u: AddressMode, func: ComparisonFunc) -> Sampler {
    let mut d = SamplerDesc::comparison(filter, func);
    d.address_u = u;
    d.border_color = [1.0, 1.0, 1.0, 1.0];
    Sampler::new(d).unwrap()
}

#[test]
fn far_and_nan_coordinates_on_comparisons() {
    let tex = depth_row(Format::D32Float);
    let le = ComparisonFunc::LessEqual;
    for filter in [
        Filter::ComparisonMinMagMipPoint,
        Filter::ComparisonMinMagLinearMipPoint,
    ] {
        let s = cmp(filter, AddressMode::Clamp, le);
        // ref 0.6 ≤ texel: +far → texel 1.0 passes; −far and NaN → texel 0.25 fails.
        for (u, want) in [
            (1e30, 1.0),
            (INF, 1.0),
            (-1e30, 0.0),
            (-INF, 0.0),
            (NAN, 0.0),
        ] {
            let c = [u, 0.5];
            assert_eq!(
                s.sample_cmp_level_zero(Some(&tex), c, 0.6, ()).unwrap(),
                want,
                "{filter} {u}"
            );
            assert_eq!(
                s.sample_cmp_level(Some(&tex), c, 0.6, 0.0, ()).unwrap(),
                want,
                "{filter} {u}"
            );
            let z = [0.0; 3];
            assert_eq!(
                s.sample_cmp_grad(Some(&tex), c, 0.6, z, z, ()).unwrap(),
                want,
                "{filter} {u}"
            );
        }
        // BORDER with OPAQUE_WHITE: outside is lit (ref ≤ 1), NaN still reads texel 0.
        let b = cmp(filter, AddressMode::Border, le);
        for (u, want) in [
            (1e30, 1.0),
            (-1e30, 1.0),
            (INF, 1.0),
            (-INF, 1.0),
            (NAN, 0.0),
        ] {
            assert_eq!(
                b.sample_cmp_level_zero(Some(&tex), [u, 0.5], 0.6, ())
                    .unwrap(),
                want,
                "{u}"
            );
        }
        // A NaN reference fails every test on D32 (R79) but NOT_EQUAL…
        assert_eq!(
            s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], NAN, ())
                .unwrap(),
            0.0
        );
        let ne = cmp(filter, AddressMode::Clamp, ComparisonFunc::NotEqual);
        assert_eq!(
            ne.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], NAN, ())
                .unwrap(),
            1.0
        );
        // …while on D16 it quantizes to 0 (R3) and LESS_EQUAL passes everywhere (R83).
        let d16 = depth_row(Format::D16Unorm);
        assert_eq!(
            s.sample_cmp_level_zero(Some(&d16), [NAN, 0.5], NAN, ())
                .unwrap(),
            1.0
        );
        // ±inf references: +inf ≤ nothing finite, −inf ≤ everything.
        assert_eq!(
            s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], INF, ())
                .unwrap(),
            0.0
        );
        assert_eq!(
            s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], -INF, ())
                .unwrap(),
            1.0
        );
        assert_eq!(
            s.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 1e30, ())
                .unwrap(),
            0.0
        );
    }
    // gather_cmp with a NaN coordinate: texels 0.25, 0.5, 0.5, 0.25 against 0.4.
    let s = cmp(
        Filter::ComparisonMinMagLinearMipPoint,
        AddressMode::Clamp,
        le,
    );
    assert_eq!(
        s.gather_cmp(Some(&tex), [NAN, NAN], 0.4, ()).unwrap(),
        [0.0, 1.0, 1.0, 0.0]
    );
    assert_eq!(
        s.gather_cmp(Some(&tex), [1e30, -1e30], 0.4, ()).unwrap(),
        [1.0; 4]
    );
    assert_eq!(
        s.gather_cmp(Some(&tex), [-INF, INF], 0.4, ()).unwrap(),
        [0.0; 4]
    );
}

#[test]
fn far_and_nan_lods_follow_r57() {
    // Point sampling at u = 0.5: mip 0 texel 2 is 3, mip 2 is 100. A NaN LOD becomes
    // max(MinLOD, MaxLOD) = FLT_MAX → the last mip; +inf and 1e30 too; −inf and −1e30 → MinLOD 0.
    let tex = row();
    let s = sampler(Filter::MinMagMipPoint, AddressMode::Clamp);
    for (lod, want) in [
        (NAN, 100.0),
        (INF, 100.0),
        (1e30, 100.0),
        (-INF, 3.0),
        (-1e30, 3.0),
    ] {
        assert_eq!(
            s.sample_level(Some(&tex), [0.5, 0.5], lod, ()).unwrap()[0],
            want,
            "lod {lod}"
        );
    }
    // Derivatives: all NaN → NaN LOD → last mip; infinite → +inf → last mip; zero → −inf → 0.
    for (d, want) in [(NAN, 100.0), (INF, 100.0), (1e30, 100.0), (0.0, 3.0)] {
        let g = [d; 3];
        assert_eq!(
            s.sample_grad(Some(&tex), [0.5, 0.5], g, g, ()).unwrap()[0],
            want,
            "ddx {d}"
        );
        let [_, unclamped] = s.calculate_lod(Some(&tex), [0.5, 0.5], g, g).unwrap();
        if d == 0.0 {
            assert_eq!(unclamped, -INF);
        } else if d.is_nan() {
            assert!(unclamped.is_nan());
        } else {
            assert!(unclamped >= 99.0, "{unclamped}");
        }
    }
    // A quad of NaN or far coordinates: coarse derivatives NaN (or inf − inf) → last mip for all
    // four pixels; the far pixels' positions do not matter on a 1×1 mip.
    let px = s
        .sample_quad(Some(&tex), &Quad([Coord([NAN; 4]); 4]), 0.0, ())
        .unwrap();
    assert_eq!(px, [[100.0, 0.0, 0.0, 1.0]; 4]);
    for c in [INF, 1e30] {
        // Equal far coordinates have derivatives 0 (or NaN for inf − inf): mip 0 or the last.
        let quad = Quad([Coord([c, c, 0.0, 0.0]); 4]);
        let px = s.sample_quad(Some(&tex), &quad, 0.0, ()).unwrap();
        let want = if c.is_finite() { 4.0 } else { 100.0 };
        assert_eq!(px, [[want, 0.0, 0.0, 1.0]; 4], "quad of {c}");
    }
}

#[test]
fn far_and_nan_array_slices_follow_r43() {
    // Three 1×1 slices holding 1, 2, 3: rne(a) clamped to [0, 2], NaN → 0.
    let d = TextureDesc::new(Dimension::Texture2DArray, Format::R32Float, [1, 1, 1], 3);
    let tex = Texture::from_f32(d, &[1.0, 2.0, 3.0]).unwrap();
    let s = sampler(Filter::MinMagMipPoint, AddressMode::Clamp);
    let cases = [
        (NAN, 1.0),
        (INF, 3.0),
        (-INF, 1.0),
        (1e30, 3.0),
        (-1e30, 1.0),
        (0.5, 1.0),
        (1.5, 3.0),
        (2.5, 3.0),
        (-0.5, 1.0),
    ];
    for (a, want) in cases {
        assert_eq!(
            s.sample_level(Some(&tex), [0.5, 0.5, a], 0.0, ()).unwrap()[0],
            want,
            "slice {a}"
        );
        let c = cmp(
            Filter::ComparisonMinMagMipPoint,
            AddressMode::Clamp,
            ComparisonFunc::Equal,
        );
        assert_eq!(
            c.sample_cmp_level_zero(Some(&tex), [0.5, 0.5, a], want, ())
                .unwrap(),
            1.0
        );
    }
    // The batched path: slice 7 clamps to the last, NaN/far coordinates as above.
    let c = cmp(
        Filter::ComparisonMinMagMipPoint,
        AddressMode::Clamp,
        ComparisonFunc::Equal,
    );
    let batch = c.cmp_level_zero_batch(&tex, 7).unwrap();
    assert_eq!(batch.element(), 2);
    let mut out = [0.0; 3];
    batch
        .run(
            &[[NAN, 1e30], [-INF, INF], [NAN, NAN]],
            &[3.0, 3.0, 1.0],
            &mut out,
        )
        .unwrap();
    assert_eq!(out, [1.0, 1.0, 0.0]);
    // The same on a 1D array (second coordinate).
    let d = TextureDesc::new(Dimension::Texture1DArray, Format::R32Float, [1, 1, 1], 3);
    let tex = Texture::from_f32(d, &[1.0, 2.0, 3.0]).unwrap();
    for (a, want) in cases {
        assert_eq!(
            s.sample_level(Some(&tex), [0.5, a], 0.0, ()).unwrap()[0],
            want,
            "1D slice {a}"
        );
    }
}

#[test]
fn far_and_nan_coordinates_on_3d() {
    // A 1×1×2 volume [1, 2]: w behaves like u (R24, R110).
    let d = TextureDesc::new(Dimension::Texture3D, Format::R32Float, [1, 1, 2], 1);
    let tex = Texture::from_f32(d, &[1.0, 2.0]).unwrap();
    let mut sd = SamplerDesc::new(Filter::MinMagMipPoint);
    sd.address_w = AddressMode::Clamp;
    let s = Sampler::new(sd).unwrap();
    for (w, want) in [
        (NAN, 1.0),
        (1e30, 2.0),
        (-1e30, 1.0),
        (INF, 2.0),
        (-INF, 1.0),
    ] {
        assert_eq!(
            s.sample_level(Some(&tex), [0.5, 0.5, w], 0.0, ()).unwrap()[0],
            want,
            "w {w}"
        );
    }
}

#[test]
fn far_and_nan_cube_directions_follow_r98() {
    // A 1×1 cube whose faces hold 1..=6 in D3D order +X, −X, +Y, −Y, +Z, −Z.
    let d = TextureDesc::new(Dimension::TextureCube, Format::R32Float, [1, 1, 1], 6);
    let tex = Texture::from_f32(d, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let s = sampler(Filter::MinMagMipPoint, AddressMode::Clamp);
    let cases = [
        ([NAN, 0.0, 0.0], 5.0),     // a NaN component: +Z
        ([0.0, 0.0, 0.0], 5.0),     // zero: +Z
        ([1e30, 0.0, 0.0], 1.0),    // +X
        ([-INF, 1e30, 0.0], 2.0),   // −X: inf is the largest magnitude
        ([INF, INF, 0.0], 3.0),     // a tie of X and Y goes to Y
        ([INF, INF, -INF], 6.0),    // a three-way tie goes to Z, here −Z
        ([INF, NAN, 1.0], 5.0),     // NaN wins over everything: +Z
        ([-1e30, -1e30, 1.0], 4.0), // tie X/Y, negative: −Y
    ];
    for (dir, want) in cases {
        assert_eq!(
            s.sample_level(Some(&tex), dir, 0.0, ()).unwrap()[0],
            want,
            "{dir:?}"
        );
        let z = [0.0; 3];
        assert_eq!(
            s.sample_grad(Some(&tex), dir, z, z, ()).unwrap()[0],
            want,
            "{dir:?}"
        );
    }
    assert_eq!(penumbra_core::sample::cube_face([NAN, 0.0, 0.0]), None);
    assert_eq!(penumbra_core::sample::cube_face([INF, INF, 0.0]), Some(2));
}
