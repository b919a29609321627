//! Batched `sample_c_lz` bilinear PCF: lookups per second per backend, and the scalar reference
//! lookup by lookup for comparison. See `benches/README.md` for the command and the figures.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use penumbra_core::sample::batch::{self, CmpBatch};
use penumbra_core::{
    AddressMode, ComparisonFunc, Filter, Format, Sampler, SamplerDesc, Texture, TextureDesc,
};
use penumbra_testkit::Rng;

/// The benchmark thread's own CPU time (Linux `/proc/thread-self/schedstat`, nanoseconds on the
/// CPU), so that time slices given to other processes on a shared machine do not count. Wall
/// time where that file is missing, or with `PCF_BENCH_WALL=1` in the environment.
struct ThreadCpu;

fn thread_cpu_ns() -> Option<u64> {
    if std::env::var_os("PCF_BENCH_WALL").is_some() {
        return None;
    }
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn now_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    thread_cpu_ns().unwrap_or_else(|| {
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    })
}

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        now_ns()
    }

    fn end(&self, start: u64) -> u64 {
        now_ns().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &NanosFormatter
    }
}

struct NanosFormatter;

impl ValueFormatter for NanosFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e3, "µs"),
            t if t < 1e9 => (1e6, "ms"),
            _ => (1e9, "s"),
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }

    fn scale_throughputs(&self, typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let per = match t {
            Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) => {
                *n as f64
            }
            _ => 1.0,
        };
        // values are nanoseconds per iteration: elements per second = per · 1e9 / ns.
        let rate = per * 1e9 / typical;
        let (div, unit) = if rate >= 1e9 {
            (1e9, "Gelem/s")
        } else if rate >= 1e6 {
            (1e6, "Melem/s")
        } else {
            (1e3, "Kelem/s")
        };
        values.iter_mut().for_each(|v| *v = per * 1e9 / *v / div);
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

/// A shadow-map-like depth level: a slope plus some bumps.
fn depth_map(format: Format, n: u32) -> Texture {
    let values: Vec<f32> = (0..n * n)
        .map(|i| {
            let (x, y) = ((i % n) as f32 / n as f32, (i / n) as f32 / n as f32);
            0.3 + 0.4 * x + 0.1 * (17.0 * y).sin() * (13.0 * x).cos()
        })
        .collect();
    Texture::from_f32(TextureDesc::new_2d(format, n, n), &values).unwrap()
}

/// Scanline order, one lookup per texel (jittered), at most `max` lookups.
fn coherent(n: u32, max: usize, rng: &mut Rng) -> (Vec<[f32; 2]>, Vec<f32>) {
    let count = ((n * n) as usize).min(max);
    let uv: Vec<[f32; 2]> = (0..count)
        .map(|i| {
            let (x, y) = ((i as u32 % n) as f32, (i as u32 / n) as f32);
            [
                (x + rng.f32_unit()) / n as f32,
                (y + rng.f32_unit()) / n as f32,
            ]
        })
        .collect();
    let refs = uv
        .iter()
        .map(|[u, _]| 0.3 + 0.4 * u + 0.05 * rng.f32_unit())
        .collect();
    (uv, refs)
}

/// Uniformly random positions over the whole map.
fn random(count: usize, rng: &mut Rng) -> (Vec<[f32; 2]>, Vec<f32>) {
    let uv: Vec<[f32; 2]> = (0..count)
        .map(|_| [rng.f32_unit(), rng.f32_unit()])
        .collect();
    let refs = uv
        .iter()
        .map(|[u, _]| 0.3 + 0.4 * u + 0.05 * rng.f32_unit())
        .collect();
    (uv, refs)
}

fn sampler() -> Sampler {
    let mut d = SamplerDesc::comparison(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::LessEqual,
    );
    d.address_u = AddressMode::Border;
    d.address_v = AddressMode::Border;
    d.border_color = [1.0; 4];
    Sampler::new(d).unwrap()
}

fn bench_batch(
    g: &mut BenchmarkGroup<'_, ThreadCpu>,
    name: &str,
    batch: &CmpBatch,
    uv: &[[f32; 2]],
    refs: &[f32],
) {
    let mut out = vec![0.0; uv.len()];
    g.throughput(Throughput::Elements(uv.len() as u64));
    g.bench_function(format!("{name}/{}", batch.backend()), |b| {
        b.iter(|| {
            batch.run(black_box(uv), black_box(refs), &mut out).unwrap();
            black_box(&out);
        });
    });
}

fn pcf(c: &mut Criterion<ThreadCpu>) {
    let s = sampler();
    let mut rng = Rng::xorshift64_star(0x0BE7_C4F5);
    let scenarios: [(&str, Format, u32, bool); 7] = [
        ("d32_64_coherent", Format::D32Float, 64, true),
        ("d32_256_coherent", Format::D32Float, 256, true),
        ("d32_512_random", Format::D32Float, 512, false),
        ("d32_2048_coherent", Format::D32Float, 2048, true),
        ("d32_2048_random", Format::D32Float, 2048, false),
        ("d16_2048_random", Format::D16Unorm, 2048, false),
        ("d32_8192_random", Format::D32Float, 8192, false),
    ];
    let mut g = c.benchmark_group("pcf");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for (name, format, n, is_coherent) in scenarios {
        let tex = depth_map(format, n);
        let (mut uv, mut refs) = if is_coherent {
            coherent(n, 1 << 22, &mut rng)
        } else {
            random(1 << 20, &mut rng)
        };
        // Small maps: repeat the sweep so one iteration is long enough to time.
        while uv.len() < 1 << 16 {
            uv.extend_from_within(..);
            refs.extend_from_within(..);
        }
        for backend in batch::extensions() {
            let batch = s
                .cmp_level_zero_batch(&tex, 0)
                .unwrap()
                .with_backend(backend)
                .unwrap();
            bench_batch(&mut g, name, &batch, &uv, &refs);
        }
        if matches!(name, "d32_2048_random" | "d16_2048_random") {
            // Building the batch: the key image, once per map (texels per second).
            g.throughput(Throughput::Elements(u64::from(n * n)));
            g.bench_function(format!("{name}_build"), |b| {
                b.iter(|| black_box(s.cmp_level_zero_batch(black_box(&tex), 0).unwrap()));
            });
        }
        if name == "d32_2048_random" {
            // The same lookups, projected from world points by an orthographic light.
            let m = glam::Mat4::from_cols_array(&[
                0.1, 0.0, 0.0, 0.0, //
                0.0, 0.0, 0.5, 0.0, //
                0.0, -0.1, 0.0, 0.0, //
                0.0, 0.0, 0.0, 1.0,
            ]);
            let points: Vec<glam::Vec3> = uv
                .iter()
                .zip(&refs)
                .map(|(&[u, v], &r)| glam::vec3(20.0 * u - 10.0, 2.0 * r, 20.0 * v - 10.0))
                .collect();
            let mut out = vec![0.0; points.len()];
            g.throughput(Throughput::Elements(points.len() as u64));
            for backend in batch::extensions() {
                let batch = s
                    .cmp_level_zero_batch(&tex, 0)
                    .unwrap()
                    .with_backend(backend)
                    .unwrap();
                g.bench_function(format!("{name}_projected/{backend}"), |b| {
                    b.iter(|| {
                        batch
                            .run_projected(&m, black_box(&points), -0.001, &mut out)
                            .unwrap();
                        black_box(&out);
                    });
                });
            }
        }
        if matches!(name, "d32_256_coherent" | "d32_2048_random") {
            let (uv, refs) = (&uv[..1 << 16], &refs[..1 << 16]);
            g.throughput(Throughput::Elements(uv.len() as u64));
            g.bench_function(format!("{name}/reference"), |b| {
                b.iter(|| {
                    let mut acc = 0.0;
                    for (&uv, &r) in uv.iter().zip(refs) {
                        acc += s.sample_cmp_level_zero(Some(&tex), uv, r, ()).unwrap();
                    }
                    black_box(acc)
                });
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = pcf
}
criterion_main!(benches);
