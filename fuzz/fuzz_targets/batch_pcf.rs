//! The batched `sample_c_lz` of `core/src/sample/batch`: for arbitrary depth maps, samplers,
//! views, slices, coordinates and references, every backend this CPU has must return exactly the
//! bits of the scalar `Sampler::sample_cmp_level_zero`, lookup by lookup — for `run` and for
//! `run_projected` (whose projection is replayed here in plain f32, in the documented order).
#![no_main]

use arbitrary::Arbitrary;
use glam::{Mat4, Vec3};
use libfuzzer_sys::fuzz_target;
use penumbra_core::sample::batch::{self, BatchError};
use penumbra_core::{Format, Sampler, Texture, TextureDesc};
use penumbra_fuzz::{Num, SamplerIn, TextureIn};

#[derive(Arbitrary, Debug)]
struct Input {
    sampler: SamplerIn,
    texture: TextureIn,
    /// Prefer a 2D/2DArray map of a kernel format (the SIMD paths), else any texture.
    kernel_shape: Option<(bool, u8)>,
    /// 0xB1: a map over 4 MiB of keys, which the SIMD kernels read with prefetches (rare: such
    /// an input takes tens of milliseconds).
    big: u8,
    slice: SliceIn,
    lookups: Vec<([Num; 2], Num)>,
    /// Spread lookups over the map: u, v in [-0.25, 1.25) from these bytes instead.
    spread: Option<Vec<(u16, u16, u16)>>,
    projected: Option<Projected>,
}

#[derive(Arbitrary, Debug)]
enum SliceIn {
    Small(u8),
    Any(u32),
}

#[derive(Arbitrary, Debug)]
struct Projected {
    matrix: MatrixIn,
    points: Vec<[Num; 3]>,
    bias: Num,
}

#[derive(Arbitrary, Debug)]
enum MatrixIn {
    /// An orthographic light over the unit square (most points land on the map).
    Ortho([i8; 3]),
    Any([Num; 16]),
}

const KERNEL_FORMATS: [Format; 8] = [
    Format::R32Float,
    Format::D32Float,
    Format::R32FloatX8X24Typeless,
    Format::R24UnormX8Typeless,
    Format::R16Unorm,
    Format::D16Unorm,
    Format::R8Unorm,
    Format::R16Float,
];

fn scalar(sampler: &Sampler, tex: &Texture, slice: f32, u: f32, v: f32, r: f32) -> f32 {
    sampler
        .sample_cmp_level_zero(Some(tex), [u, v, slice], r, ())
        .expect("the batch accepted this sampler and texture")
}

fn project(m: &[[f32; 4]; 4], p: Vec3, bias: f32) -> ([f32; 2], f32) {
    let row = |i: usize| ((m[0][i] * p.x + m[1][i] * p.y) + m[2][i] * p.z) + m[3][i];
    let w = row(3);
    let (x, y, z) = (row(0) / w, row(1) / w, row(2) / w);
    ([0.5 * x + 0.5, 0.5 - 0.5 * y], z + bias)
}

fn build_texture(input: &Input) -> Option<Texture> {
    if input.big == 0xB1 {
        // 1040×1040 R32_FLOAT: 2·1044·1043 i32 keys ≈ 8.7 MB, past PREFETCH_BYTES.
        let desc = TextureDesc::new_2d(Format::R32Float, 1040, 1040);
        let n = 1040 * 1040;
        let seed = &input.texture.bytes;
        let values: Vec<f32> = (0..n)
            .map(|i| {
                let b = seed.get(i % seed.len().max(1)).copied().unwrap_or(0);
                f32::from(b) / 255.0 + (i % 7) as f32 * 1e-3
            })
            .collect();
        return Texture::from_f32(desc, &values).ok();
    }
    let mut t = input.texture.clone();
    if let Some((array, format)) = input.kernel_shape {
        t.raw_desc = false;
        t.dimension = if array { 3 } else { 2 }; // Dimension::ALL order: 2D, 2DArray
        let f = KERNEL_FORMATS[usize::from(format) % KERNEL_FORMATS.len()];
        t.format = penumbra_core::Format::ALL
            .iter()
            .position(|&g| g == f)
            .expect("a format") as u8;
    }
    t.build()
}

fuzz_target!(|input: Input| {
    let Some(desc) = input.sampler.desc() else {
        return;
    };
    let Ok(sampler) = Sampler::with_options(desc, input.sampler.options()) else {
        return;
    };
    let Some(tex) = build_texture(&input) else {
        return;
    };
    let slice = match input.slice {
        SliceIn::Small(s) => u32::from(s % 6),
        SliceIn::Any(s) => s,
    };
    let slice_f = slice as f32;
    let batch = match sampler.cmp_level_zero_batch(&tex, slice) {
        Ok(b) => b,
        Err(e) => {
            // The batch refuses exactly what a single lookup refuses.
            let single = sampler.sample_cmp_level_zero(Some(&tex), [0.5, 0.5, slice_f], 0.5, ());
            assert_eq!(
                single,
                Err(e),
                "batch and single lookup disagree on validation"
            );
            return;
        }
    };
    let _ = batch.path();
    let element = batch.element();

    let mut uv: Vec<[f32; 2]> = Vec::new();
    let mut refs: Vec<f32> = Vec::new();
    for (c, r) in input.lookups.iter().take(256) {
        uv.push(c.map(Num::get));
        refs.push(r.get());
    }
    if let Some(spread) = &input.spread {
        for &(u, v, r) in spread.iter().take(256) {
            uv.push([
                f32::from(u) / 65536.0 * 1.5 - 0.25,
                f32::from(v) / 65536.0 * 1.5 - 0.25,
            ]);
            refs.push(f32::from(r) / 65535.0);
        }
    }
    let expected: Vec<u32> = uv
        .iter()
        .zip(&refs)
        .map(|(&[u, v], &r)| scalar(&sampler, &tex, slice_f, u, v, r).to_bits())
        .collect();

    let projected = input.projected.as_ref().map(|p| {
        let m = match p.matrix {
            MatrixIn::Ortho([a, b, c]) => {
                let s = 1.0 + f32::from(a.unsigned_abs()) / 32.0;
                glam::camera::lh::proj::directx::orthographic(
                    -s,
                    s,
                    -s,
                    s,
                    f32::from(b) / 8.0,
                    2.0 + f32::from(c.unsigned_abs()),
                )
            }
            MatrixIn::Any(v) => Mat4::from_cols_array(&v.map(Num::get)),
        };
        let points: Vec<Vec3> = p
            .points
            .iter()
            .take(256)
            .map(|q| Vec3::from_array(q.map(Num::get)))
            .collect();
        let bias = p.bias.get();
        let cols = m.to_cols_array_2d();
        let want: Vec<u32> = points
            .iter()
            .map(|&q| {
                let ([u, v], r) = project(&cols, q, bias);
                scalar(&sampler, &tex, slice_f, u, v, r).to_bits()
            })
            .collect();
        (m, points, bias, want)
    });

    drop(batch);
    for backend in batch::extensions() {
        let batch = sampler
            .cmp_level_zero_batch(&tex, slice)
            .expect("accepted once")
            .with_backend(backend)
            .expect("an available backend");
        assert_eq!(batch.element(), element);
        let mut out = vec![f32::NAN; uv.len()];
        batch.run(&uv, &refs, &mut out).expect("equal lengths");
        for (i, (o, want)) in out.iter().zip(&expected).enumerate() {
            assert_eq!(
                o.to_bits(),
                *want,
                "{backend} lookup {i}: uv {:?} ref {} gave {o}, scalar {}",
                uv[i],
                refs[i],
                f32::from_bits(*want)
            );
        }
        if let Some((m, points, bias, want)) = &projected {
            let mut out = vec![f32::NAN; points.len()];
            batch
                .run_projected(m, points, *bias, &mut out)
                .expect("equal lengths");
            for (i, (o, w)) in out.iter().zip(want).enumerate() {
                assert_eq!(
                    o.to_bits(),
                    *w,
                    "{backend} projected point {i} {:?} gave {o}, scalar {}",
                    points[i],
                    f32::from_bits(*w)
                );
            }
        }
        // Length mismatches are errors, never panics.
        if !uv.is_empty() {
            let mut short = vec![0.0; uv.len() - 1];
            assert!(matches!(
                batch.run(&uv, &refs, &mut short),
                Err(BatchError::Length { .. })
            ));
        }
    }
});
