//! The batched `sample_c_lz` path: every backend this CPU has must return the bits of the scalar
//! reference (`sample_cmp_level_zero`, lookup by lookup) for every input.

mod support;

use penumbra_core::cpu::CpuExtension;
use penumbra_core::sample::batch::{self, BatchError, BatchPath};
use penumbra_core::{
    AddressMode, ComparisonFunc, Dimension, Filter, Format, SampleError, Sampler, SamplerDesc,
    SamplerOptions, Texture, TextureDesc, TextureView,
};
use penumbra_testkit::Rng;
use support::COMPARISON_FUNCS;

const KERNEL_FORMATS: [Format; 6] = [
    Format::R32Float,
    Format::D32Float,
    Format::R32FloatX8X24Typeless,
    Format::R24UnormX8Typeless,
    Format::R16Unorm,
    Format::D16Unorm,
];

const BORDERS: [[f32; 4]; 5] = [
    [0.0, 0.0, 0.0, 0.0],
    [1.0, 1.0, 1.0, 1.0],
    [0.5, 0.0, 0.0, 1.0],
    [0.3, 0.0, 0.0, 0.0],
    [-0.0, 0.0, 0.0, 1.0],
];

/// A texture whose every texel is random in the way the format allows: arbitrary f32 bits
/// (NaN, ±inf, denormals), arbitrary UNORM codes, garbage in X8/X24 bytes.
fn random_texture(desc: TextureDesc, rng: &mut Rng) -> Texture {
    let bpt = desc.format.bytes_per_texel();
    let mut data = vec![0u8; desc.total_bytes() as usize];
    // A small palette makes equal texels (EQUAL, NOT_EQUAL and ties) common.
    let palette: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
    for texel in data.chunks_exact_mut(bpt) {
        let bits = if rng.index_mod(3) == 0 {
            palette[rng.index_mod(palette.len())]
        } else {
            rng.next_u64()
        };
        match desc.format.kind() {
            penumbra_core::format::ComponentKind::Float32 => {
                let v = if bits & 1 == 0 {
                    rng.f32_special()
                } else {
                    f32::from_bits((bits >> 8) as u32 % 0x3F80_0001)
                };
                texel[..4].copy_from_slice(&v.to_le_bytes());
                if bpt == 8 {
                    texel[4..].copy_from_slice(&(rng.next_u64() as u32).to_le_bytes());
                }
            }
            _ => texel.copy_from_slice(&bits.to_le_bytes()[..bpt]),
        }
    }
    Texture::new(desc, data).unwrap()
}

/// Coordinates: random in [−0.5, 1.5] and [−20, 20], non-finite and huge values, denormals,
/// exact texel centres and edges, half-texel offsets and their neighbours.
fn coord(rng: &mut Rng, n: u32) -> f32 {
    let n = n as f32;
    let k = rng.f32_in(-2.0, n + 2.0).floor();
    let nudge = |x: f32, rng: &mut Rng| match rng.index_mod(3) {
        0 => x.next_down(),
        1 => x.next_up(),
        _ => x,
    };
    match rng.index_mod(12) {
        0..=2 => rng.f32_in(-0.5, 1.5),
        3 => rng.f32_in(-20.0, 20.0),
        4 => [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e30,
            -1e30,
            -0.0,
            0.0,
            1.0,
            10.0,
            -10.0,
            10.5,
        ][rng.index_mod(11)],
        5 => rng.f32_subnormal(),
        6 => nudge((k + 0.5) / n, rng),
        7 => nudge(k / n, rng),
        8 => nudge(0.5 / n + k / n, rng),
        9 => nudge(k / n + 1.0 / (512.0 * n), rng),
        10 => rng.f32_bits(),
        _ => rng.f32_in(0.0, 1.0),
    }
}

/// References: random, non-finite, denormal, signed zeros, and exact texel values.
fn reference(rng: &mut Rng, tex: &Texture) -> f32 {
    match rng.index_mod(8) {
        0 => rng.f32_special(),
        1 => rng.f32_in(-0.5, 1.5),
        2 | 3 => {
            let desc = tex.desc();
            let x = rng.index_mod(desc.width as usize) as u32;
            let y = rng.index_mod(desc.height as usize) as u32;
            let slice = rng.index_mod(desc.array_size as usize) as u32;
            let v = tex.load(0, slice, [x, y, 0])[0];
            match rng.index_mod(3) {
                0 => v.next_up(),
                1 => v.next_down(),
                _ => v,
            }
        }
        4 => (rng.index_mod(65536) as f32 + [0.5, 0.4, 0.6][rng.index_mod(3)]) / 65535.0,
        _ => rng.f32_in(0.0, 1.0),
    }
}

fn lookups(rng: &mut Rng, tex: &Texture, mip: u32, n: usize) -> (Vec<[f32; 2]>, Vec<f32>) {
    let [w, h, _] = tex.level_size(mip);
    let uv = (0..n).map(|_| [coord(rng, w), coord(rng, h)]).collect();
    let refs = (0..n).map(|_| reference(rng, tex)).collect();
    (uv, refs)
}

fn desc(
    filter: Filter,
    func: ComparisonFunc,
    [u, v]: [AddressMode; 2],
    border: [f32; 4],
) -> SamplerDesc {
    let mut d = SamplerDesc::comparison(filter, func);
    d.address_u = u;
    d.address_v = v;
    d.border_color = border;
    d
}

/// Runs the batch on every available backend and compares each output with the reference.
fn check(s: &Sampler, tex: &Texture, slice: u32, uv: &[[f32; 2]], refs: &[f32]) -> BatchPath {
    let expected: Vec<f32> = uv
        .iter()
        .zip(refs)
        .map(|(&[u, v], &r)| {
            s.sample_cmp_level_zero(Some(tex), [u, v, slice as f32], r, ())
                .unwrap()
        })
        .collect();
    let path = s.cmp_level_zero_batch(tex, slice).unwrap().path();
    for backend in CpuExtension::supported() {
        let batch = s
            .cmp_level_zero_batch(tex, slice)
            .unwrap()
            .with_backend(backend)
            .unwrap();
        assert_eq!(batch.backend(), backend);
        let mut out = vec![f32::NAN; uv.len()];
        batch.run(uv, refs, &mut out).unwrap();
        for (i, (got, want)) in out.iter().zip(&expected).enumerate() {
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{backend} lookup {i}: uv {:?} ({:#x}, {:#x}) ref {} ({:#x}): got {got}, reference {want}; \
                 {:?} on a {}×{} {} ({path:?})",
                uv[i],
                uv[i][0].to_bits(),
                uv[i][1].to_bits(),
                refs[i],
                refs[i].to_bits(),
                s.desc(),
                tex.desc().width,
                tex.desc().height,
                tex.format(),
            );
        }
    }
    path
}

#[test]
fn this_cpu_offers_its_simd_backends() {
    let available = batch::extensions();
    assert!(available.contains(&CpuExtension::None));
    assert_eq!(
        CpuExtension::default(),
        *CpuExtension::supported().last().unwrap()
    );
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        assert_eq!(
            available.contains(&CpuExtension::Avx2),
            std::arch::is_x86_feature_detected!("avx2")
        );
        assert_eq!(
            available.contains(&CpuExtension::Avx512bw),
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
        );
    }
    #[cfg(feature = "force-scalar")]
    assert_eq!(available, [CpuExtension::None]);
}

#[test]
fn every_format_func_address_mode_and_border_matches_the_reference() {
    let mut rng = Rng::xorshift64_star(0x5EED_0001);
    let modes = [AddressMode::Clamp, AddressMode::Border, AddressMode::Wrap];
    let filters = [
        Filter::ComparisonMinMagLinearMipPoint,
        Filter::ComparisonMinMagMipPoint,
    ];
    let mut case = 0;
    for format in KERNEL_FORMATS {
        let tex = random_texture(TextureDesc::new_2d(format, 6, 5), &mut rng);
        for func in COMPARISON_FUNCS {
            for u in modes {
                for v in modes {
                    for filter in filters {
                        case += 1;
                        let border = BORDERS[case % BORDERS.len()];
                        let s = Sampler::new(desc(filter, func, [u, v], border)).unwrap();
                        let (uv, refs) = lookups(&mut rng, &tex, 0, 120);
                        let path = check(&s, &tex, 0, &uv, &refs);
                        let want = match func {
                            ComparisonFunc::Never | ComparisonFunc::Always => BatchPath::Constant,
                            _ => BatchPath::Kernel,
                        };
                        assert_eq!(path, want, "{format} {func:?} {u:?}/{v:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn mirror_modes_fall_back_to_the_reference_and_still_match() {
    let mut rng = Rng::xorshift64_star(0x5EED_0002);
    let tex = random_texture(TextureDesc::new_2d(Format::D32Float, 7, 4), &mut rng);
    for (u, v) in [
        (AddressMode::Mirror, AddressMode::Clamp),
        (AddressMode::Border, AddressMode::MirrorOnce),
        (AddressMode::Mirror, AddressMode::Mirror),
    ] {
        let s = Sampler::new(desc(
            Filter::ComparisonMinMagLinearMipPoint,
            ComparisonFunc::LessEqual,
            [u, v],
            BORDERS[1],
        ))
        .unwrap();
        let (uv, refs) = lookups(&mut rng, &tex, 0, 200);
        assert_eq!(check(&s, &tex, 0, &uv, &refs), BatchPath::Reference);
    }
}

#[test]
fn odd_sizes_match_the_reference() {
    let mut rng = Rng::xorshift64_star(0x5EED_0003);
    for [w, h] in [[1, 1], [3, 5], [1, 7], [7, 1], [2, 2], [511, 257]] {
        for format in [Format::D32Float, Format::D16Unorm] {
            let tex = random_texture(TextureDesc::new_2d(format, w, h), &mut rng);
            for (func, modes) in [
                (ComparisonFunc::LessEqual, [AddressMode::Clamp; 2]),
                (ComparisonFunc::Greater, [AddressMode::Border; 2]),
                (
                    ComparisonFunc::NotEqual,
                    [AddressMode::Wrap, AddressMode::Border],
                ),
            ] {
                let s = Sampler::new(desc(
                    Filter::ComparisonMinMagLinearMipPoint,
                    func,
                    modes,
                    BORDERS[2],
                ))
                .unwrap();
                let (uv, refs) = lookups(&mut rng, &tex, 0, 400);
                assert_eq!(check(&s, &tex, 0, &uv, &refs), BatchPath::Kernel);
            }
        }
    }
}

#[test]
fn array_slices_are_read_and_clamped_like_r43() {
    let mut rng = Rng::xorshift64_star(0x5EED_0004);
    let tex_desc = TextureDesc::new(Dimension::Texture2DArray, Format::D16Unorm, [9, 6, 1], 4);
    let tex = random_texture(tex_desc, &mut rng);
    let view = tex
        .with_view(TextureView {
            first_array_slice: 1,
            array_size: Some(2),
            ..TextureView::default()
        })
        .unwrap();
    let s = Sampler::new(desc(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::Less,
        [AddressMode::Clamp, AddressMode::Border],
        BORDERS[1],
    ))
    .unwrap();
    for slice in [0, 1, 2, 3, 5, u32::MAX] {
        for t in [&tex, &view] {
            let (uv, refs) = lookups(&mut rng, t, 0, 150);
            assert_eq!(check(&s, t, slice, &uv, &refs), BatchPath::Kernel);
        }
    }
    let batch = s.cmp_level_zero_batch(&view, 7).unwrap();
    assert_eq!(batch.element(), 1);
}

#[test]
fn lod_bias_and_clamps_pick_the_level_like_r56_to_r60() {
    let mut rng = Rng::xorshift64_star(0x5EED_0005);
    let tex_desc = TextureDesc::new_2d(Format::D32Float, 37, 20).with_mip_levels(4);
    let tex = random_texture(tex_desc, &mut rng);
    let point_mip = Filter::ComparisonMinMagLinearMipPoint;
    let linear_mip = Filter::ComparisonMinMagMipLinear;
    let cases: [(Filter, f32, f32, f32, BatchPath); 9] = [
        // (filter, MipLODBias, MinLOD, MaxLOD, expected path)
        (point_mip, 1.0, 0.0, f32::MAX, BatchPath::Kernel), // level 1
        (point_mip, 0.5, 0.0, f32::MAX, BatchPath::Kernel), // R60: rounds half up → level 1
        (point_mip, 0.0, 2.0, f32::MAX, BatchPath::Kernel), // MinLOD → level 2
        (point_mip, 9.0, 0.0, f32::MAX, BatchPath::Kernel), // clamped to the last level
        (point_mip, -3.0, -5.0, 2.0, BatchPath::Kernel),    // magnification
        (linear_mip, 0.0, 1.0, f32::MAX, BatchPath::Kernel), // integral LOD: one level
        (linear_mip, 0.5, 0.0, f32::MAX, BatchPath::Reference), // two blended levels
        (
            Filter::ComparisonMinLinearMagMipPoint,
            0.0,
            0.0,
            f32::MAX,
            BatchPath::Kernel,
        ), // R63: MAG point
        (
            Filter::ComparisonMinLinearMagMipPoint,
            1.0,
            0.0,
            f32::MAX,
            BatchPath::Kernel,
        ), // MIN linear
    ];
    for (filter, bias, min_lod, max_lod, want) in cases {
        let mut d = desc(
            filter,
            ComparisonFunc::GreaterEqual,
            [AddressMode::Border, AddressMode::Wrap],
            BORDERS[3],
        );
        d.mip_lod_bias = bias;
        d.min_lod = min_lod;
        d.max_lod = max_lod;
        let s = Sampler::new(d).unwrap();
        let (uv, refs) = lookups(&mut rng, &tex, 1, 300);
        assert_eq!(
            check(&s, &tex, 0, &uv, &refs),
            want,
            "{filter:?} bias {bias}"
        );
    }
}

#[test]
fn views_with_a_most_detailed_mip_read_the_right_subresource_r64() {
    let mut rng = Rng::xorshift64_star(0x5EED_000E);
    let tex_desc = TextureDesc::new(Dimension::Texture2DArray, Format::D32Float, [23, 17, 1], 3)
        .with_mip_levels(3);
    let tex = random_texture(tex_desc, &mut rng);
    let view = tex
        .with_view(TextureView {
            most_detailed_mip: 1,
            first_array_slice: 1,
            ..TextureView::default()
        })
        .unwrap();
    for bias in [0.0, 1.0] {
        let mut d = desc(
            Filter::ComparisonMinMagLinearMipPoint,
            ComparisonFunc::Less,
            [AddressMode::Clamp, AddressMode::Border],
            BORDERS[2],
        );
        d.mip_lod_bias = bias;
        let s = Sampler::new(d).unwrap();
        for slice in [0, 1] {
            let (uv, refs) = lookups(&mut rng, &view, 1, 300);
            assert_eq!(check(&s, &view, slice, &uv, &refs), BatchPath::Kernel);
        }
    }
}

#[test]
fn resource_clamp_past_the_last_level_compares_with_zero_r62() {
    let mut rng = Rng::xorshift64_star(0x5EED_0006);
    for format in [Format::D32Float, Format::D16Unorm] {
        let tex = random_texture(
            TextureDesc::new_2d(format, 8, 8).with_mip_levels(2),
            &mut rng,
        );
        let view = tex
            .with_view(TextureView {
                resource_min_lod_clamp: 1.5,
                ..TextureView::default()
            })
            .unwrap();
        for func in [
            ComparisonFunc::LessEqual,
            ComparisonFunc::Equal,
            ComparisonFunc::GreaterEqual,
        ] {
            let s = Sampler::new(desc(
                Filter::ComparisonMinMagLinearMipPoint,
                func,
                [AddressMode::Border; 2],
                BORDERS[1],
            ))
            .unwrap();
            let (uv, refs) = lookups(&mut rng, &view, 0, 200);
            assert_eq!(check(&s, &view, 0, &uv, &refs), BatchPath::Kernel);
        }
    }
}

#[test]
fn large_maps_take_the_prefetching_kernels_and_still_match() {
    // Over 4 MiB of keys: the SIMD kernels prefetch ahead of each step.
    let mut rng = Rng::xorshift64_star(0x5EED_000D);
    for format in [Format::D32Float, Format::D16Unorm] {
        let tex = random_texture(TextureDesc::new_2d(format, 1500, 1100), &mut rng);
        let s = Sampler::new(desc(
            Filter::ComparisonMinMagLinearMipPoint,
            ComparisonFunc::LessEqual,
            [AddressMode::Border, AddressMode::Wrap],
            BORDERS[1],
        ))
        .unwrap();
        // Shorter than one prefetch chunk, exactly one, one and a bit, many plus a tail.
        for n in [5, 64, 65, 3001] {
            let (uv, refs) = lookups(&mut rng, &tex, 0, n);
            assert_eq!(check(&s, &tex, 0, &uv, &refs), BatchPath::Kernel);
        }
    }
}

#[test]
fn batch_lengths_that_are_not_a_multiple_of_the_vector_width() {
    let mut rng = Rng::xorshift64_star(0x5EED_0007);
    let tex = random_texture(TextureDesc::new_2d(Format::D32Float, 13, 11), &mut rng);
    let s = Sampler::new(desc(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::LessEqual,
        [AddressMode::Clamp; 2],
        BORDERS[0],
    ))
    .unwrap();
    for n in [0, 1, 7, 8, 15, 16, 17, 33, 1000] {
        let (uv, refs) = lookups(&mut rng, &tex, 0, n);
        check(&s, &tex, 0, &uv, &refs);
    }
}

#[test]
fn legacy_point_rounding_option_is_honoured_r26() {
    let mut rng = Rng::xorshift64_star(0x5EED_0008);
    let tex = random_texture(TextureDesc::new_2d(Format::R16Unorm, 10, 3), &mut rng);
    let options = SamplerOptions {
        legacy_point_rounding: true,
        ..SamplerOptions::default()
    };
    for modes in [
        [AddressMode::Clamp; 2],
        [AddressMode::Wrap, AddressMode::Border],
    ] {
        let d = desc(
            Filter::ComparisonMinMagMipPoint,
            ComparisonFunc::Less,
            modes,
            BORDERS[2],
        );
        let s = Sampler::with_options(d, options).unwrap();
        let (uv, refs) = lookups(&mut rng, &tex, 0, 500);
        assert_eq!(check(&s, &tex, 0, &uv, &refs), BatchPath::Kernel);
    }
}

#[test]
fn extended_unorm_formats_use_the_kernel_and_half_floats_fall_back_r86() {
    let mut rng = Rng::xorshift64_star(0x5EED_0009);
    let options = SamplerOptions {
        extended_comparison_formats: true,
        ..SamplerOptions::default()
    };
    for (format, want) in [
        (Format::R8Unorm, BatchPath::Kernel),
        (Format::R8G8B8A8Unorm, BatchPath::Kernel),
        (Format::R16Float, BatchPath::Reference),
    ] {
        let tex = random_texture(TextureDesc::new_2d(format, 5, 6), &mut rng);
        let d = desc(
            Filter::ComparisonMinMagLinearMipPoint,
            ComparisonFunc::GreaterEqual,
            [AddressMode::Border, AddressMode::Clamp],
            BORDERS[3],
        );
        let s = Sampler::with_options(d, options).unwrap();
        let (uv, refs) = lookups(&mut rng, &tex, 0, 300);
        assert_eq!(check(&s, &tex, 0, &uv, &refs), want, "{format}");
    }
}

#[test]
fn cubes_and_1d_views_fall_back_to_the_reference() {
    let mut rng = Rng::xorshift64_star(0x5EED_000A);
    let s = Sampler::new(desc(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::LessEqual,
        [AddressMode::Clamp; 2],
        BORDERS[0],
    ))
    .unwrap();
    let tex_1d = random_texture(
        TextureDesc::new(Dimension::Texture1D, Format::D32Float, [9, 1, 1], 1),
        &mut rng,
    );
    let (uv, refs) = lookups(&mut rng, &tex_1d, 0, 100);
    assert_eq!(check(&s, &tex_1d, 0, &uv, &refs), BatchPath::Reference);
    let cube = random_texture(
        TextureDesc::new(Dimension::TextureCube, Format::D32Float, [4, 4, 1], 6),
        &mut rng,
    );
    let (uv, refs) = lookups(&mut rng, &cube, 0, 100);
    assert_eq!(check(&s, &cube, 0, &uv, &refs), BatchPath::Reference);
    // A cube's third coordinate is the direction's z, not an array index: the batch must pass
    // `slice as f32` on unclamped (a fuzzed regression: 4294967295 had become element 0).
    for slice in [1, 3, 7, 600, u32::MAX] {
        let uv = [[594.3125, 594.3125], [-2.0, 0.5], [0.25, -0.75], [0.0, 0.0]];
        let refs = [594.3125, 0.5, 0.5, 0.5];
        assert_eq!(
            check(&s, &cube, slice, &uv, &refs),
            BatchPath::Reference,
            "{slice}"
        );
    }
}

#[test]
fn d16_references_quantize_exactly_at_every_rounding_boundary_r82_r83() {
    let mut rng = Rng::xorshift64_star(0x5EED_000B);
    // A level holding every code 0..=65535 (256×256), references at and around each k + 0.5.
    let codes: Vec<u8> = (0..=65535u16).flat_map(u16::to_le_bytes).collect();
    let tex = Texture::new(TextureDesc::new_2d(Format::D16Unorm, 256, 256), codes).unwrap();
    for func in [ComparisonFunc::Equal, ComparisonFunc::LessEqual] {
        let s = Sampler::new(desc(
            Filter::ComparisonMinMagMipPoint,
            func,
            [AddressMode::Clamp; 2],
            BORDERS[0],
        ))
        .unwrap();
        let mut uv = Vec::new();
        let mut refs = Vec::new();
        for _ in 0..4000 {
            let k = rng.index_mod(65536);
            let (x, y) = ((k % 256) as f32, (k / 256) as f32);
            let mid = ((k as f64 + 0.5) / 65535.0) as f32;
            for r in [mid.next_down(), mid, mid.next_up(), k as f32 / 65535.0] {
                uv.push([(x + 0.5) / 256.0, (y + 0.5) / 256.0]);
                refs.push(r);
            }
        }
        check(&s, &tex, 0, &uv, &refs);
    }
}

#[test]
fn run_projected_equals_a_scalar_projection_then_the_reference() {
    let mut rng = Rng::xorshift64_star(0x5EED_000C);
    let tex = random_texture(TextureDesc::new_2d(Format::D32Float, 64, 48), &mut rng);
    // A perspective light (w varies, reaches 0 at the light) and an orthographic one.
    let light = glam::Mat4::from_cols_array(&[
        1.2, 0.1, -0.3, -0.3, //
        0.0, 1.5, 0.4, 0.4, //
        0.4, -0.2, 0.9, 0.9, //
        -1.0, -2.0, 3.5, 4.0,
    ]);
    let ortho = glam::Mat4::from_cols_array(&[
        0.1, 0.0, 0.02, 0.0, //
        0.0, 0.14, 0.03, 0.0, //
        0.01, -0.02, 0.033, 0.0, //
        0.05, -0.1, 0.5, 1.0,
    ]);
    for (m, func) in [
        (light, ComparisonFunc::LessEqual),
        (ortho, ComparisonFunc::Greater),
    ] {
        let s = Sampler::new(desc(
            Filter::ComparisonMinMagLinearMipPoint,
            func,
            [AddressMode::Border, AddressMode::Clamp],
            BORDERS[1],
        ))
        .unwrap();
        let mut points: Vec<glam::Vec3> = (0..1500)
            .map(|_| {
                glam::vec3(
                    rng.f32_in(-12.0, 12.0),
                    rng.f32_in(-3.0, 6.0),
                    rng.f32_in(-12.0, 12.0),
                )
            })
            .collect();
        points.extend([
            glam::Vec3::ZERO,
            glam::vec3(0.0, -10.0, 0.0), // w = 0 under the perspective light
            glam::Vec3::splat(f32::NAN),
            glam::Vec3::splat(1e30),
        ]);
        let bias = -0.002;
        let cols = m.to_cols_array_2d();
        let expected: Vec<f32> = points
            .iter()
            .map(|p| {
                let row = |i: usize| {
                    ((cols[0][i] * p.x + cols[1][i] * p.y) + cols[2][i] * p.z) + cols[3][i]
                };
                let w = row(3);
                let (x, y, z) = (row(0) / w, row(1) / w, row(2) / w);
                let uv = [0.5 * x + 0.5, 0.5 - 0.5 * y];
                s.sample_cmp_level_zero(Some(&tex), uv, z + bias, ())
                    .unwrap()
            })
            .collect();
        for backend in CpuExtension::supported() {
            let batch = s
                .cmp_level_zero_batch(&tex, 0)
                .unwrap()
                .with_backend(backend)
                .unwrap();
            let mut out = vec![f32::NAN; points.len()];
            batch.run_projected(&m, &points, bias, &mut out).unwrap();
            for (i, (got, want)) in out.iter().zip(&expected).enumerate() {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{backend} point {i}: {:?}",
                    points[i]
                );
            }
        }
    }
}

#[test]
fn batch_construction_validates_like_sample_cmp() {
    let tex = Texture::from_f32(TextureDesc::new_2d(Format::D32Float, 2, 2), &[0.0; 4]).unwrap();
    let plain = Sampler::new(SamplerDesc::new(Filter::MinMagMipLinear)).unwrap();
    assert!(matches!(
        plain.cmp_level_zero_batch(&tex, 0),
        Err(SampleError::SamplerKind { .. })
    ));
    let s = Sampler::new(SamplerDesc::comparison(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::Less,
    ))
    .unwrap();
    let vol = Texture::zeroed(TextureDesc::new(
        Dimension::Texture3D,
        Format::D32Float,
        [2, 2, 2],
        1,
    ))
    .unwrap();
    assert!(matches!(
        s.cmp_level_zero_batch(&vol, 0),
        Err(SampleError::Dimension { .. })
    ));
    let rgba = Texture::zeroed(TextureDesc::new_2d(Format::R8G8B8A8Unorm, 2, 2)).unwrap();
    assert!(matches!(
        s.cmp_level_zero_batch(&rgba, 0),
        Err(SampleError::ComparisonFormat { .. })
    ));
}

#[test]
fn length_mismatches_are_typed_errors() {
    let tex = Texture::from_f32(TextureDesc::new_2d(Format::D16Unorm, 2, 2), &[0.5; 4]).unwrap();
    let s = Sampler::new(SamplerDesc::comparison(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::Less,
    ))
    .unwrap();
    let batch = s.cmp_level_zero_batch(&tex, 0).unwrap();
    let mut out = [0.0; 3];
    assert_eq!(
        batch.run(&[[0.5; 2]; 3], &[0.1; 2], &mut out),
        Err(BatchError::Length {
            uv: 3,
            refs: 2,
            out: 3
        })
    );
    assert_eq!(
        batch.run_projected(&glam::Mat4::IDENTITY, &[glam::Vec3::ZERO; 2], 0.0, &mut out),
        Err(BatchError::ProjectedLength { points: 2, out: 3 })
    );
    let err = batch
        .run(&[[0.5; 2]; 3], &[0.1; 3], &mut out[..1])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch lengths differ: 3 coordinates, 3 references, 1 outputs"
    );
}

#[test]
fn unavailable_backends_are_refused() {
    let tex = Texture::from_f32(TextureDesc::new_2d(Format::D32Float, 2, 2), &[0.5; 4]).unwrap();
    let s = Sampler::new(SamplerDesc::comparison(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::Less,
    ))
    .unwrap();
    for backend in CpuExtension::ALL {
        let r = s
            .cmp_level_zero_batch(&tex, 0)
            .unwrap()
            .with_backend(backend);
        if backend.is_supported() {
            assert_eq!(r.unwrap().backend(), backend);
        } else {
            assert_eq!(r.unwrap_err(), BatchError::Unavailable(backend));
        }
    }
}
