//! Peer comparisons (issue 5): penumbra against Mesa's lavapipe (through wgpu's Vulkan backend)
//! and parry3d, all measured in one run on one machine, single thread where applicable
//! (lavapipe gets `LP_NUM_THREADS=1` unless the variable is already set).
//!
//! 1. Depth rasterizer: 100,000 triangles (a height field and 4,000 cuboids, the scene of
//!    `benches/raster.rs`, baked into one vertex/index buffer) into a 2048² D32 target.
//! 2. PCF lookups: bilinear `sample_c_lz` (LESS_EQUAL, clamp) on the rasterized 2048² map,
//!    4M coherent (scan-line grid) and 4M random coordinates.
//! 3. Shadow rays: 1M points on the ground; parry3d casts a ray towards the sun through a
//!    `TriMesh` of the same triangles, penumbra answers `ShadowMap::lit_fractions` (2×2 kernel).
//! 4. Ray casts (`scene:raycast`): 1M rays from 2 to 12 m above the ground, pointing down at up
//!    to about 40° off vertical, cut off at 40 m (the rays of `benches/raycast.rs`): penumbra's
//!    `Lighting::raycast_many` on 1 thread over the level as it is kept (the ground and 4,000
//!    instances of one cube mesh), parry3d's `cast_ray_and_get_normal` through one `TriMesh` of
//!    the level baked into world space. The row reports how many rays the two disagree on
//!    (hit or miss) and by how much their distances differ. The two test different floats
//!    (penumbra each cube in its own space through the inverse transform, parry3d the baked
//!    world-space triangles), so rays that graze a cube's edge, or meet a face almost edge-on
//!    (where the distance is ill-conditioned), can come out differently: a handful in a million.
//!
//! ```sh
//! cargo run --release -p penumbra_xcheck --example peers
//! cargo run --release -p penumbra_xcheck --example peers -- raycast   # the ray-cast row only
//! ```

use std::sync::Arc;
use std::time::Instant;

use glam::{Mat4, Vec3};
use penumbra_core::raster::{DepthTarget, Instance, Mesh, RasterState, rasterize};
use penumbra_core::shadow::{Light, Occluder, PcfKernel, Scene};
use penumbra_core::{AddressMode, ComparisonFunc, Filter, Format, Sampler, SamplerDesc};
use penumbra_testkit::Rng;
use penumbra_xcheck::gpu::block_on;

#[path = "../../benches/support/level.rs"]
mod level;

/// Edge of the depth map.
const SIZE: u32 = 2048;
/// PCF lookups per pattern.
const LOOKUPS: usize = 4 << 20;
/// Shadow queries.
const RAYS: usize = 1 << 20;
/// Timed repetitions of the rasterizer, after one warm-up frame (the median is reported). Both
/// sides draw this many frames. penumbra's are timed before lavapipe's device exists: with the
/// device made first, penumbra's frames ran about 25 % slower for the first 100 ms or so, and
/// in half of the runs of stop 52 slow enough to move the median (7.9–8.4 ms against 5.6 ms;
/// timed first, six runs of six took 5.2–5.5 ms).
const FRAMES: usize = 25;
/// Timed repetitions of the lookups and queries, after one warm-up (the median is reported).
const REPS: usize = 5;

use level::{GROUND, height, sun};

/// The level of the benches with every cuboid baked into world space: one mesh of 100,000
/// triangles, and the light's view-projection.
fn scene() -> (Mesh, Mat4) {
    let mesh = level::baked();
    assert_eq!(mesh.triangle_count(), 100_000);
    (mesh, level::sun_view_proj())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds of one call.
fn time<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64(), r)
}

/// lavapipe through wgpu.
struct Lavapipe {
    device: wgpu::Device,
    queue: wgpu::Queue,
    name: String,
}

const RASTER_WGSL: &str = "
@group(0) @binding(0) var<uniform> view_proj: mat4x4<f32>;

@vertex
fn vs(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> {
    return view_proj * vec4<f32>(p, 1.0);
}
";

const PCF_WGSL: &str = "
@group(0) @binding(0) var map: texture_depth_2d;
@group(0) @binding(1) var smp: sampler_comparison;
@group(0) @binding(2) var<storage, read> lookups: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> results: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&lookups)) {
        return;
    }
    let l = lookups[i];
    results[i] = textureSampleCompareLevel(map, smp, l.xy, l.z);
}
";

impl Lavapipe {
    fn new() -> Result<Lavapipe, String> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            flags: wgpu::InstanceFlags::empty(),
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapters = block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
        let adapter = adapters
            .into_iter()
            .find(|a| a.get_info().device_type == wgpu::DeviceType::Cpu)
            .ok_or("no CPU Vulkan adapter (install mesa-vulkan-drivers)")?;
        let info = adapter.get_info();
        let (device, queue) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("peers"),
            required_features: wgpu::Features::empty(),
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| format!("request_device: {e}"))?;
        Ok(Lavapipe {
            device,
            queue,
            name: info.name,
        })
    }

    fn wait(&self) {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("device poll");
    }

    fn buffer(&self, data: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: data.len() as u64,
            usage: usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&buffer, 0, data);
        buffer
    }

    /// Draws the mesh into a new 2048² Depth32Float texture `FRAMES + 1` times; returns the
    /// texture and the median seconds of submit + wait after the first (warm-up) frame.
    fn raster(&self, mesh: &Mesh, view_proj: Mat4) -> (wgpu::Texture, f64) {
        let device = &self.device;
        let vertices: Vec<u8> = mesh
            .positions()
            .iter()
            .flat_map(|p| p.to_array())
            .flat_map(f32::to_le_bytes)
            .collect();
        let indices: Vec<u8> = mesh
            .indices()
            .iter()
            .flat_map(|i| i.to_le_bytes())
            .collect();
        let matrix: Vec<u8> = view_proj
            .to_cols_array()
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let vbuf = self.buffer(&vertices, wgpu::BufferUsages::VERTEX);
        let ibuf = self.buffer(&indices, wgpu::BufferUsages::INDEX);
        let ubuf = self.buffer(&matrix, wgpu::BufferUsages::UNIFORM);
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("depth"),
            size: wgpu::Extent3d {
                width: SIZE,
                height: SIZE,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Depth32Float,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let view = texture.create_view(&Default::default());
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("raster"),
            source: wgpu::ShaderSource::Wgsl(RASTER_WGSL.into()),
        });
        let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&bgl)],
            immediate_size: 0,
        });
        // D3D12's rasterizer defaults, as penumbra's RasterState::default(): back faces culled,
        // front faces clockwise, depth clip on; depth test LESS.
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("raster"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: 12,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x3],
                })],
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::TriangleList,
                front_face: wgpu::FrontFace::Cw,
                cull_mode: Some(wgpu::Face::Back),
                ..Default::default()
            },
            depth_stencil: Some(wgpu::DepthStencilState {
                format: wgpu::TextureFormat::Depth32Float,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: wgpu::MultisampleState::default(),
            fragment: None,
            multiview_mask: None,
            cache: None,
        });
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &bgl,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: ubuf.as_entire_binding(),
            }],
        });
        self.wait();
        let count = mesh.indices().len() as u32;
        let mut times = Vec::new();
        for frame in 0..=FRAMES {
            let (t, ()) = time(|| {
                let mut encoder = device.create_command_encoder(&Default::default());
                {
                    let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                        label: None,
                        color_attachments: &[],
                        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                            view: &view,
                            depth_ops: Some(wgpu::Operations {
                                load: wgpu::LoadOp::Clear(1.0),
                                store: wgpu::StoreOp::Store,
                            }),
                            stencil_ops: None,
                        }),
                        ..Default::default()
                    });
                    pass.set_pipeline(&pipeline);
                    pass.set_bind_group(0, &bind, &[]);
                    pass.set_vertex_buffer(0, vbuf.slice(..));
                    pass.set_index_buffer(ibuf.slice(..), wgpu::IndexFormat::Uint32);
                    pass.draw_indexed(0..count, 0, 0..1);
                }
                self.queue.submit([encoder.finish()]);
                self.wait();
            });
            if frame > 0 {
                times.push(t);
            }
        }
        (texture, median(times))
    }

    /// Runs `textureSampleCompareLevel` on `map` at `lookups` (u, v, ref, unused); returns
    /// the median seconds of dispatch + wait over `REPS` runs after a warm-up, and the results.
    fn pcf(&self, map: &wgpu::Texture, lookups: &[[f32; 4]]) -> (f64, Vec<f32>) {
        let device = &self.device;
        let bytes: Vec<u8> = lookups
            .iter()
            .flatten()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let input = self.buffer(&bytes, wgpu::BufferUsages::STORAGE);
        let size = lookups.len() as u64 * 4;
        let results = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            mipmap_filter: wgpu::MipmapFilterMode::Nearest,
            compare: Some(wgpu::CompareFunction::LessEqual),
            ..Default::default()
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("pcf"),
            source: wgpu::ShaderSource::Wgsl(PCF_WGSL.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("pcf"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let view = map.create_view(&Default::default());
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&sampler),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: input.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: results.as_entire_binding(),
                },
            ],
        });
        self.wait();
        let groups = (lookups.len() as u32).div_ceil(256);
        let mut times = Vec::new();
        for run in 0..=REPS {
            let (t, ()) = time(|| {
                let mut encoder = device.create_command_encoder(&Default::default());
                {
                    let mut pass = encoder.begin_compute_pass(&Default::default());
                    pass.set_pipeline(&pipeline);
                    pass.set_bind_group(0, &bind, &[]);
                    pass.dispatch_workgroups(groups, 1, 1);
                }
                self.queue.submit([encoder.finish()]);
                self.wait();
            });
            if run > 0 {
                times.push(t);
            }
        }
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&results, 0, &readback, 0, size);
        self.queue.submit([encoder.finish()]);
        let slice = readback.slice(..);
        slice.map_async(wgpu::MapMode::Read, |r| r.expect("map readback"));
        self.wait();
        let out = slice
            .get_mapped_range()
            .expect("mapped readback")
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        readback.unmap();
        (median(times), out)
    }
}

/// The output table.
struct Table(Vec<[String; 5]>);

impl Table {
    fn row(&mut self, what: &str, penumbra: String, peer_name: &str, peer: String, ratio: f64) {
        self.0.push([
            what.into(),
            penumbra,
            peer_name.into(),
            peer,
            format!("{ratio:.1}×"),
        ]);
    }

    fn print(&self) {
        println!("| workload | penumbra | peer | peer result | penumbra / peer |");
        println!("|---|---|---|---|---|");
        for r in &self.0 {
            println!("| {} | {} | {} | {} | {} |", r[0], r[1], r[2], r[3], r[4]);
        }
    }
}

fn rate(n: usize, secs: f64) -> String {
    let r = n as f64 / secs;
    if r >= 1e9 {
        format!("{:.2} G/s", r / 1e9)
    } else if r >= 1e6 {
        format!("{:.1} M/s", r / 1e6)
    } else {
        format!("{:.0} k/s", r / 1e3)
    }
}

fn mean(a: &[f32]) -> f64 {
    a.iter().map(|&x| f64::from(x)).sum::<f64>() / a.len() as f64
}

/// Mean absolute difference of two result arrays (a sanity check that both did the work).
fn mean_diff(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from((x - y).abs()))
        .sum::<f64>()
        / a.len() as f64
}

/// Rays of the ray-cast row.
const CASTS: usize = 1 << 20;
/// Their cut-off (world units).
const CAST_DISTANCE: f32 = 40.0;

/// `count` rays from 2 to 12 m above the ground, over all of it but a 2 m border, pointing
/// down with a horizontal part of up to 0.8 per unit down (as `benches/raycast.rs`).
fn cast_rays(count: usize) -> Vec<(Vec3, Vec3)> {
    let mut rng = Rng::lcg64(0x7a15);
    let (nx, nz) = (GROUND.0 as f32 - 4.0, GROUND.1 as f32 - 4.0);
    (0..count)
        .map(|_| {
            let x = (rng.f32_unit() - 0.5) * nx;
            let z = (rng.f32_unit() - 0.5) * nz;
            let y = height(x, z) + 2.0 + 10.0 * rng.f32_unit();
            let d = Vec3::new(
                (rng.f32_unit() - 0.5) * 1.6,
                -1.0,
                (rng.f32_unit() - 0.5) * 1.6,
            );
            (Vec3::new(x, y, z), d)
        })
        .collect()
}

/// Row 4, ray casts: penumbra's `raycast_many` (1 thread) against parry3d's
/// `cast_ray_and_get_normal` on the same rays and triangles.
fn raycast_row(table: &mut Table) -> Result<(), Box<dyn std::error::Error>> {
    use penumbra_core::shadow::{Lighting, OccluderId};
    let rays = cast_rays(CASTS);
    let mut lighting = Lighting::new();
    lighting.set_threads(1);
    let (ground, transforms) = level::level();
    lighting.add_occluder(Occluder::mesh(Arc::new(ground), Mat4::IDENTITY));
    let cube = Arc::new(level::cube());
    for t in transforms {
        lighting.add_occluder(Occluder::mesh(Arc::clone(&cube), t));
    }
    let all = |_: OccluderId| true;
    let (first, _) = time(|| lighting.raycast_many(&rays[..1], CAST_DISTANCE, &all, 1));
    let mut ours = vec![None; 0];
    let mut times = Vec::new();
    for _ in 0..=REPS {
        let (t, hits) = time(|| lighting.raycast_many(&rays, CAST_DISTANCE, &all, 1));
        times.push(t);
        ours = hits;
    }
    times.remove(0); // warm-up
    let ours_secs = median(times);

    let mesh = level::baked();
    let vertices: Vec<parry3d::math::Vector> = mesh
        .positions()
        .iter()
        .map(|p| parry3d::math::Vector::new(p.x, p.y, p.z))
        .collect();
    let triangles: Vec<[u32; 3]> = mesh
        .indices()
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .collect();
    let (build, trimesh) = time(|| parry3d::shape::TriMesh::new(vertices, triangles));
    let trimesh = trimesh?;
    let pose = parry3d::math::Pose::IDENTITY;
    let cast = || {
        use parry3d::query::RayCast;
        rays.iter()
            .map(|&(o, d)| {
                let d = d.normalize();
                let ray = parry3d::query::Ray::new(
                    parry3d::math::Vector::new(o.x, o.y, o.z),
                    parry3d::math::Vector::new(d.x, d.y, d.z),
                );
                trimesh
                    .cast_ray_and_get_normal(&pose, &ray, CAST_DISTANCE, true)
                    .map(|h| h.time_of_impact)
            })
            .collect::<Vec<_>>()
    };
    let mut theirs = Vec::new();
    let mut times = Vec::new();
    for _ in 0..=REPS {
        let (t, hits) = time(cast);
        times.push(t);
        theirs = hits;
    }
    times.remove(0);
    let theirs_secs = median(times);

    // Agreement: hit or miss, and the distance where both hit.
    let (mut differ, mut near_cut, mut far_apart, mut worst) = (0usize, 0usize, 0usize, 0.0f32);
    let mut examples = Vec::new();
    for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        match (a, b) {
            (Some(a), Some(b)) => {
                let delta = (a.distance - *b).abs();
                worst = worst.max(delta);
                far_apart += usize::from(delta > 1e-3);
            }
            (None, None) => {}
            (a, b) => {
                differ += 1;
                // A hit within rounding of the cut-off on one side only.
                let t = a.map(|h| h.distance).or(*b).unwrap_or(0.0);
                near_cut += usize::from((t - CAST_DISTANCE).abs() < 1e-3);
                if examples.len() < 3 {
                    examples.push((k, a.map(|h| (h.distance, h.occluder)), *b));
                }
            }
        }
    }
    let hits = ours.iter().filter(|h| h.is_some()).count();
    eprintln!(
        "raycast: {hits} of {CASTS} rays hit (penumbra); {differ} differ in hit or miss ({near_cut} \
         within 1e-3 of the {CAST_DISTANCE} m cut-off), {far_apart} both-hit rays more than 1e-3 \
         apart (largest difference {worst:.2e}); penumbra's first cast (index and ray data) \
         {:.0} ms, parry3d's TriMesh build {:.0} ms; examples {examples:?}",
        first * 1e3,
        build * 1e3
    );
    table.row(
        "1M ray casts, 100k-tri level, 40 m cut-off (rays/s)",
        format!("{} raycast_many, 1 thread", rate(CASTS, ours_secs)),
        "parry3d cast_ray_and_get_normal",
        rate(CASTS, theirs_secs),
        theirs_secs / ours_secs,
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `peers raycast`: the ray-cast row only (no lavapipe needed).
    if std::env::args().nth(1).as_deref() == Some("raycast") {
        let mut table = Table(Vec::new());
        raycast_row(&mut table)?;
        println!();
        table.print();
        return Ok(());
    }
    if std::env::var_os("LP_NUM_THREADS").is_none() {
        // SAFETY: the first thing main does, before any other thread exists.
        unsafe { std::env::set_var("LP_NUM_THREADS", "1") };
    }
    let lp_threads = std::env::var("LP_NUM_THREADS").unwrap_or_default();
    let (mesh, view_proj) = scene();
    let tris = mesh.triangle_count();
    let mut table = Table(Vec::new());

    // 1. Rasterizer.
    let state = RasterState::default();
    let mut target = DepthTarget::new(SIZE, SIZE, Format::D32Float)?;
    let instances = [Instance::new(&mesh, Mat4::IDENTITY)];
    let mut times = Vec::new();
    for frame in 0..=FRAMES {
        let (t, _) = time(|| {
            target.clear(1.0);
            rasterize(&mut target, view_proj, &instances, &state, 1)
        });
        if frame > 0 {
            times.push(t);
        }
    }
    let ours = median(times);
    let gpu = Lavapipe::new()?;
    println!("lavapipe: {} (LP_NUM_THREADS={lp_threads})", gpu.name);
    let (gpu_map, theirs) = gpu.raster(&mesh, view_proj);
    table.row(
        "raster 100k tris → 2048² D32 (ms; tris/s)",
        format!("{:.1} ms; {}", ours * 1e3, rate(tris, ours)),
        "lavapipe draw",
        format!("{:.1} ms; {}", theirs * 1e3, rate(tris, theirs)),
        theirs / ours,
    );

    // 2. PCF lookups on the rasterized map.
    let tex = target.to_texture();
    let mut desc = SamplerDesc::comparison(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::LessEqual,
    );
    desc.address_u = AddressMode::Clamp;
    desc.address_v = AddressMode::Clamp;
    let sampler = Sampler::new(desc)?;
    let batch = sampler.cmp_level_zero_batch(&tex, 0)?;
    let mut rng = Rng::lcg64(0xbeef);
    let coherent: Vec<[f32; 2]> = (0..LOOKUPS)
        .map(|i| {
            let (x, y) = ((i % SIZE as usize) as f32, (i / SIZE as usize) as f32);
            let n = SIZE as f32;
            [(x + 0.3) / n, (y + 0.7) / n]
        })
        .collect();
    let random: Vec<[f32; 2]> = (0..LOOKUPS)
        .map(|_| [rng.f32_unit(), rng.f32_unit()])
        .collect();
    // Each reference within ±0.002 of the depth under the lookup (the scene spans about 0.02
    // of depth per metre), so that the bilinear weights decide many results.
    let depths = target.depths();
    let mut refs_for = |uv: &[[f32; 2]]| -> Vec<f32> {
        uv.iter()
            .map(|p| {
                let x = ((p[0] * SIZE as f32) as usize).min(SIZE as usize - 1);
                let y = ((p[1] * SIZE as f32) as usize).min(SIZE as usize - 1);
                depths[y * SIZE as usize + x] + (rng.f32_unit() - 0.5) * 0.004
            })
            .collect()
    };
    let coherent_refs = refs_for(&coherent);
    let random_refs = refs_for(&random);
    let mut out = vec![0.0f32; LOOKUPS];
    for (name, uv, refs) in [
        ("coherent", &coherent, &coherent_refs),
        ("random", &random, &random_refs),
    ] {
        batch.run(uv, refs, &mut out)?; // warm-up
        let mut times = Vec::new();
        for _ in 0..REPS {
            times.push(time(|| batch.run(uv, refs, &mut out)).0);
        }
        let ours = median(times);
        let lookups: Vec<[f32; 4]> = uv
            .iter()
            .zip(refs)
            .map(|(p, &r)| [p[0], p[1], r, 0.0])
            .collect();
        let (theirs, gpu_out) = gpu.pcf(&gpu_map, &lookups);
        eprintln!(
            "pcf {name}: mean result penumbra {:.4}, lavapipe {:.4}; mean |difference| {:.5} \
             (each on its own rasterization of the scene)",
            mean(&out),
            mean(&gpu_out),
            mean_diff(&out, &gpu_out)
        );
        table.row(
            &format!("PCF sample_c_lz 2048² D32, 4M {name} (lookups/s)"),
            rate(LOOKUPS, ours),
            "lavapipe compute",
            rate(LOOKUPS, theirs),
            theirs / ours,
        );
    }

    // 3. Shadow rays against the same triangles.
    let mut points = Vec::with_capacity(RAYS);
    let (nx, nz) = (GROUND.0 as f32 - 2.0, GROUND.1 as f32 - 2.0);
    for _ in 0..RAYS {
        let x = (rng.f32_unit() - 0.5) * nx;
        let z = (rng.f32_unit() - 0.5) * nz;
        points.push(Vec3::new(x, height(x, z) + 0.05, z));
    }
    let light = Light::directional(sun(), 1.0).with_resolution(SIZE);
    let to_light = light.towards_light(Vec3::ZERO);
    let vertices: Vec<parry3d::math::Vector> = mesh
        .positions()
        .iter()
        .map(|p| parry3d::math::Vector::new(p.x, p.y, p.z))
        .collect();
    let triangles: Vec<[u32; 3]> = mesh
        .indices()
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .collect();
    let (build, trimesh) = time(|| parry3d::shape::TriMesh::new(vertices, triangles));
    let trimesh = trimesh?;
    let dir = parry3d::math::Vector::new(to_light.x, to_light.y, to_light.z);
    let pose = parry3d::math::Pose::IDENTITY;
    let (ray_secs, hits) = time(|| {
        use parry3d::query::RayCast;
        points
            .iter()
            .filter(|p| {
                let origin = parry3d::math::Vector::new(p.x, p.y, p.z);
                let ray = parry3d::query::Ray::new(origin, dir);
                trimesh.cast_ray(&pose, &ray, 400.0, true).is_some()
            })
            .count()
    });

    let mut scene = Scene {
        threads: 1,
        ..Scene::default()
    };
    scene.add(Occluder::mesh(Arc::new(mesh.clone()), Mat4::IDENTITY));
    let (render, map) = time(|| light.render(&scene));
    let map = map?;
    let mut lit = vec![0.0f32; RAYS];
    map.lit_fractions_with(&points, None, &PcfKernel::HARDWARE_2X2, &mut lit); // warm-up
    let mut times = Vec::new();
    for _ in 0..REPS {
        times.push(
            time(|| map.lit_fractions_with(&points, None, &PcfKernel::HARDWARE_2X2, &mut lit)).0,
        );
    }
    let query = median(times);
    let shadowed = lit.iter().filter(|&&f| f < 0.5).count();
    eprintln!(
        "shadow: parry3d {hits} of {RAYS} rays blocked (TriMesh build {:.0} ms); penumbra {shadowed} \
         lit fractions < 0.5 (map render {:.0} ms, 1 thread)",
        build * 1e3,
        render * 1e3
    );
    table.row(
        "1M shadow queries, 100k-tri scene (queries/s)",
        format!("{} lit_fractions", rate(RAYS, query)),
        "parry3d cast_ray",
        rate(RAYS, ray_secs),
        ray_secs / query,
    );
    table.row(
        "… end to end: render 2048² map + 1M queries",
        format!(
            "{:.0} ms; {}",
            (render + query) * 1e3,
            rate(RAYS, render + query)
        ),
        "parry3d cast_ray",
        format!("{:.0} ms; {}", ray_secs * 1e3, rate(RAYS, ray_secs)),
        ray_secs / (render + query),
    );
    raycast_row(&mut table)?;
    println!();
    table.print();
    Ok(())
}
