//! The batched kernels, the msad4 search and the shadow queries on a thread with a small stack
//! (256 KiB, a quarter of what a game's worker threads often get), on every backend this CPU
//! has.
//!
//! In the project's own profiles these paths are optimized and their frames small; a game that
//! depends on penumbra builds it at Cargo's default `opt-level = 0`, where every `inline(always)`
//! helper of a kernel keeps its own stack slots. A kernel that put all of its instantiations in
//! one frame overflowed a Bevy task thread there. CI runs this test at opt-level 0
//! (`cargo test --profile stack-check -p penumbra_core --test small_stack`); `cargo test` runs it
//! as well.

use glam::Vec3;
use penumbra_core::cpu::check_against_scalar;
use penumbra_core::msad4::{
    Channels, CpuExtension, Image, Masking, MatchOptions, Pruning, find_matches, sad_map_using,
};
use penumbra_core::sample::batch;
use penumbra_core::shadow::{Light, Occluder, PcfKernel, Scene};
use penumbra_core::{ComparisonFunc, Filter, Format, Sampler, SamplerDesc, Texture, TextureDesc};

/// The stack the work runs on.
const STACK: usize = 256 << 10;

fn on_small_stack(name: &str, work: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .name(name.into())
        .stack_size(STACK)
        .spawn(work)
        .expect("a thread")
        .join()
        .unwrap_or_else(|_| panic!("{name} failed on a {STACK}-byte stack"));
}

#[test]
fn batched_pcf_runs_on_a_small_stack_on_every_backend() {
    on_small_stack("batch", || {
        let n = 64u32;
        let values: Vec<f32> = (0..n * n).map(|i| (i % 97) as f32 / 97.0).collect();
        let unorm: Vec<f32> = values.clone();
        for format in [
            Format::R32Float,
            Format::D16Unorm,
            Format::R24UnormX8Typeless,
        ] {
            let desc = TextureDesc::new_2d(format, n, n);
            let tex = match format {
                Format::R32Float => Texture::from_f32(desc, &values),
                _ => Texture::from_f32(desc, &unorm),
            };
            let Ok(tex) = tex else { continue };
            for filter in [
                Filter::ComparisonMinMagLinearMipPoint,
                Filter::ComparisonMinMagMipPoint,
            ] {
                for func in [
                    ComparisonFunc::LessEqual,
                    ComparisonFunc::Equal,
                    ComparisonFunc::NotEqual,
                ] {
                    let s = Sampler::new(SamplerDesc::comparison(filter, func)).unwrap();
                    let batch_on = |backend| {
                        s.cmp_level_zero_batch(&tex, 0)
                            .unwrap()
                            .with_backend(backend)
                            .unwrap()
                    };
                    let points = 1000;
                    let uv: Vec<[f32; 2]> = (0..points)
                        .map(|i| [(i % 37) as f32 / 36.0, (i % 23) as f32 / 22.0])
                        .collect();
                    let refs: Vec<f32> = (0..points).map(|i| (i % 11) as f32 / 10.0).collect();
                    let pts: Vec<Vec3> = (0..points)
                        .map(|i| Vec3::new((i % 5) as f32 * 0.1, 0.2, 0.5))
                        .collect();
                    check_against_scalar(
                        &batch::extensions(),
                        &format!("{format} {filter} {func}"),
                        |backend| {
                            let batch = batch_on(backend);
                            let mut got = vec![0.0f32; points];
                            batch.run(&uv, &refs, &mut got).unwrap();
                            let mut projected = vec![0.0f32; points];
                            batch
                                .run_projected(&glam::Mat4::IDENTITY, &pts, 0.0, &mut projected)
                                .unwrap();
                            let bits =
                                |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                            (bits(&got), bits(&projected))
                        },
                    );
                }
            }
        }
    });
}

#[test]
fn template_search_runs_on_a_small_stack_on_every_backend() {
    on_small_stack("msad4", || {
        let (w, h) = (300u32, 200u32);
        let image: Vec<u8> = (0..u64::from(w * h))
            .map(penumbra_testkit::noise_byte)
            .collect();
        let image = Image::new(w, h, Channels::R8, image).unwrap();
        let mut tpl = Vec::new();
        for y in 0..24 {
            let at = ((50 + y) * w + 70) as usize;
            tpl.extend_from_slice(&image.data()[at..at + 32]);
        }
        let template = Image::new(32, 24, Channels::R8, tpl).unwrap();
        for backend in CpuExtension::supported() {
            for pruning in [Pruning::Never, Pruning::Always] {
                let opts = MatchOptions {
                    top_k: 3,
                    backend: Some(backend),
                    pruning,
                    masking: Masking::Msad4,
                    ..MatchOptions::default()
                };
                let found = find_matches(&image, &template, &opts).unwrap();
                assert_eq!((found[0].x, found[0].y, found[0].sad), (70, 50, 0));
            }
            let map = sad_map_using(&image, &template, 1, backend).unwrap();
            assert_eq!(map.data()[(50 * map.width() + 70) as usize], 0);
        }
    });
}

#[test]
fn shadow_maps_render_and_answer_on_a_small_stack() {
    on_small_stack("shadow", || {
        let mut scene = Scene::default();
        scene.add(Occluder::cuboid(
            Vec3::new(-10.0, -1.0, -10.0),
            Vec3::new(10.0, 0.0, 10.0),
        ));
        scene.add(Occluder::cuboid(
            Vec3::new(-1.0, 0.0, -1.0),
            Vec3::new(1.0, 2.0, 1.0),
        ));
        let lights = [
            Light::directional(Vec3::new(0.3, -1.0, 0.2), 1.0).with_resolution(256),
            Light::point(Vec3::new(0.0, 4.0, 0.0), 20.0, 1.0).with_resolution(64),
            Light::spot(
                Vec3::new(0.0, 5.0, 3.0),
                Vec3::new(0.0, -1.0, -0.5),
                0.7,
                20.0,
                1.0,
            )
            .with_resolution(128),
        ];
        let points: Vec<Vec3> = (0..500)
            .map(|i| Vec3::new((i % 25) as f32 - 12.0, 0.0, (i / 25) as f32 - 10.0))
            .collect();
        for light in lights {
            let map = light.render(&scene).unwrap();
            for kernel in [
                PcfKernel::HARDWARE_2X2,
                PcfKernel::PCF_3X3,
                PcfKernel::PCF_5X5,
            ] {
                let mut out = vec![0.0; points.len()];
                map.lit_fractions_with(&points, Some(Vec3::Y), &kernel, &mut out);
                for (p, &lit) in points.iter().zip(&out) {
                    let one = map.lit_fraction_with(*p, Some(Vec3::Y), &kernel);
                    assert_eq!(lit.to_bits(), one.to_bits(), "{p}");
                }
            }
        }
    });
}
