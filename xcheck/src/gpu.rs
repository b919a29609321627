//! The wgpu side: Mesa's lavapipe through wgpu's Vulkan backend (WGPU.md).
//!
//! Textures are uploaded with `write_texture`, except Depth32Float, which WebGPU does not let a
//! copy fill: a depth-only render pass writes each texel through `@builtin(frag_depth)` instead.
//! Every [`Group`] (one texture, one sampler) is one compute dispatch; all of them go into one
//! command buffer and the results come back in one read.

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::task::{Context, Poll, Waker};

use crate::case::{Dim, Fmt, Group, Lookup, Scenario, TexSpec};

/// Runs a future to completion on this thread. wgpu's native futures are ready at once or after a
/// device poll, so spinning on a no-op waker is enough.
pub fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

/// Features the check needs; lavapipe grants them all (WGPU.md).
const FEATURES: wgpu::Features = wgpu::Features::ADDRESS_MODE_CLAMP_TO_BORDER
    .union(wgpu::Features::ADDRESS_MODE_CLAMP_TO_ZERO)
    .union(wgpu::Features::FLOAT32_FILTERABLE);

/// Bytes of one lookup record (four 16-byte rows, see [`LOOKUP_WGSL`]).
const LOOKUP_BYTES: u64 = 64;
/// Bytes of one result (`vec4<f32>`).
const RESULT_BYTES: u64 = 16;
/// Every group starts at a multiple of this many lookups, so that both binding offsets are
/// multiples of 256 bytes (the largest `min_storage_buffer_offset_alignment` WebGPU allows).
const GROUP_ALIGN: usize = 16;

const LOOKUP_WGSL: &str = "
struct Lookup {
    coord: vec4<f32>,
    ddx: vec4<f32>,
    ddy: vec4<f32>,
    level: f32,
    dref: f32,
    layer: i32,
    op: u32,
}
";

/// What the shader binds: the texture's sample type and the sampler's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    /// `texture_*<f32>` with a filtering `sampler`.
    Float,
    /// `texture_depth_*` with a filtering `sampler`.
    Depth,
    /// `texture_depth_*` with a `sampler_comparison`.
    DepthCompare,
}

/// The WGSL of the lookup shader for one dimension and binding kind.
fn shader_source(dim: Dim, kind: Kind) -> String {
    let (tex_ty, coords, grads) = match (dim, kind) {
        (Dim::D2, Kind::Float) => ("texture_2d<f32>", "l.coord.xy", "l.ddx.xy, l.ddy.xy"),
        (Dim::D2Array, Kind::Float) => (
            "texture_2d_array<f32>",
            "l.coord.xy, l.layer",
            "l.ddx.xy, l.ddy.xy",
        ),
        (Dim::Cube, Kind::Float) => ("texture_cube<f32>", "l.coord.xyz", "l.ddx.xyz, l.ddy.xyz"),
        (Dim::D2, _) => ("texture_depth_2d", "l.coord.xy", ""),
        (Dim::D2Array, _) => ("texture_depth_2d_array", "l.coord.xy, l.layer", ""),
        (Dim::Cube, _) => ("texture_depth_cube", "l.coord.xyz", ""),
    };
    let (sampler_ty, cases) = match kind {
        Kind::Float => (
            "sampler",
            format!(
                "case 0u: {{ r = textureSampleLevel(tex, smp, {coords}, l.level); }}
        case 1u: {{ r = textureSampleGrad(tex, smp, {coords}, {grads}); }}
        case 2u: {{ r = textureGather(0, tex, smp, {coords}); }}
        case 3u: {{ r = textureGather(1, tex, smp, {coords}); }}
        case 4u: {{ r = textureGather(2, tex, smp, {coords}); }}
        case 5u: {{ r = textureGather(3, tex, smp, {coords}); }}"
            ),
        ),
        // On depth textures the level must be an integer (WGPU.md).
        Kind::Depth => (
            "sampler",
            format!(
                "case 0u: {{ r = vec4<f32>(textureSampleLevel(tex, smp, {coords}, i32(l.level)), 0.0, 0.0, 0.0); }}
        case 2u: {{ r = textureGather(tex, smp, {coords}); }}"
            ),
        ),
        // textureSampleCompare (implicit LOD) does not exist in compute shaders; the level-0
        // variant is what Bevy's shadow shader calls.
        Kind::DepthCompare => (
            "sampler_comparison",
            format!(
                "case 6u: {{ r = vec4<f32>(textureSampleCompareLevel(tex, smp, {coords}, l.dref)); }}
        case 7u: {{ r = textureGatherCompare(tex, smp, {coords}, l.dref); }}"
            ),
        ),
    };
    format!(
        "{LOOKUP_WGSL}
@group(0) @binding(0) var tex: {tex_ty};
@group(0) @binding(1) var smp: {sampler_ty};
@group(0) @binding(2) var<storage, read> lookups: array<Lookup>;
@group(0) @binding(3) var<storage, read_write> results: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let i = gid.x;
    if (i >= arrayLength(&lookups)) {{
        return;
    }}
    let l = lookups[i];
    var r = vec4<f32>(0.0);
    switch l.op {{
        {cases}
        default: {{}}
    }}
    results[i] = r;
}}
"
    )
}

/// Writes each Depth32Float texel through `frag_depth`, read from a storage buffer at the pixel's
/// integer position (WGPU.md): bit-exact for values in [0, 1].
const DEPTH_FILL_WGSL: &str = "
struct Level {
    width: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    depth: array<f32>,
}
@group(0) @binding(0) var<storage, read> level: Level;

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let x = f32(i32(i & 1u) * 4 - 1);
    let y = f32(i32(i >> 1u) * 4 - 1);
    return vec4<f32>(x, y, 0.0, 1.0);
}

@fragment
fn fs(@builtin(position) p: vec4<f32>) -> @builtin(frag_depth) f32 {
    return level.depth[u32(p.y) * level.width + u32(p.x)];
}
";

/// A wgpu device on lavapipe.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    pipelines: HashMap<(Dim, Kind), (wgpu::ComputePipeline, wgpu::BindGroupLayout)>,
    depth_fill: Option<(wgpu::RenderPipeline, wgpu::BindGroupLayout)>,
}

/// A texture uploaded to the GPU.
pub struct GpuTexture {
    _texture: wgpu::Texture,
    view: wgpu::TextureView,
}

impl Gpu {
    /// Opens wgpu's Vulkan backend and picks its CPU adapter (lavapipe's llvmpipe). The error
    /// says what was missing.
    pub fn new() -> Result<Gpu, String> {
        Gpu::with_adapter(false)
    }

    /// The adapter `PENUMBRA_XCHECK_ADAPTER` asks for: `gpu` for the first hardware adapter (a
    /// real texture unit, e.g. the H200 of docs/conformance.md), else the CPU one.
    pub fn from_env() -> Result<Gpu, String> {
        let hardware = std::env::var("PENUMBRA_XCHECK_ADAPTER").is_ok_and(|v| v == "gpu");
        Gpu::with_adapter(hardware)
    }

    /// Opens wgpu's Vulkan backend and picks a hardware adapter (`hardware`) or the CPU one.
    pub fn with_adapter(hardware: bool) -> Result<Gpu, String> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            flags: wgpu::InstanceFlags::empty(),
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapters = block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
        let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
        let wanted = |t: wgpu::DeviceType| match hardware {
            true => matches!(
                t,
                wgpu::DeviceType::DiscreteGpu | wgpu::DeviceType::IntegratedGpu
            ),
            false => t == wgpu::DeviceType::Cpu,
        };
        let kind = if hardware { "hardware" } else { "CPU" };
        let adapter = adapters
            .into_iter()
            .find(|a| wanted(a.get_info().device_type))
            .ok_or_else(|| format!("no {kind} Vulkan adapter among {names:?}"))?;
        let info = adapter.get_info();
        let missing = FEATURES - adapter.features();
        if !missing.is_empty() {
            return Err(format!("{} lacks {missing:?}", info.name));
        }
        let (device, queue) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("penumbra xcheck"),
            required_features: FEATURES,
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| format!("request_device on {}: {e}", info.name))?;
        if device.limits().min_storage_buffer_offset_alignment as u64 > 256 {
            return Err("storage buffer offsets must be 256-aligned or finer".into());
        }
        Ok(Gpu {
            device,
            queue,
            info,
            pipelines: HashMap::new(),
            depth_fill: None,
        })
    }

    /// The adapter's PCI vendor id (0x10de for NVIDIA; lavapipe reports 0x10005).
    #[must_use]
    pub fn vendor(&self) -> u32 {
        self.info.vendor
    }

    /// The adapter's description, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)` and the driver.
    #[must_use]
    pub fn adapter(&self) -> String {
        format!(
            "{} ({:?}, driver {} {})",
            self.info.name, self.info.device_type, self.info.driver, self.info.driver_info
        )
    }

    /// Uploads every texture of a scenario.
    pub fn upload(&mut self, scenario: &Scenario) -> Vec<GpuTexture> {
        let out = scenario
            .textures
            .iter()
            .map(|t| self.upload_one(t))
            .collect();
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("device poll");
        out
    }

    fn upload_one(&mut self, spec: &TexSpec) -> GpuTexture {
        let mut usage = wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST;
        if spec.fmt == Fmt::D32 {
            usage |= wgpu::TextureUsages::RENDER_ATTACHMENT;
        }
        let texture = self.device.create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: spec.width,
                height: spec.height,
                depth_or_array_layers: spec.layers,
            },
            mip_level_count: spec.mips,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: spec.fmt.wgpu(),
            usage,
            view_formats: &[],
        });
        if spec.fmt == Fmt::D32 {
            self.fill_depth32(spec, &texture);
        } else {
            let aspect = if spec.fmt.is_depth() {
                wgpu::TextureAspect::DepthOnly
            } else {
                wgpu::TextureAspect::All
            };
            for layer in 0..spec.layers {
                for mip in 0..spec.mips {
                    let [w, h] = spec.level_size(mip);
                    self.queue.write_texture(
                        wgpu::TexelCopyTextureInfo {
                            texture: &texture,
                            mip_level: mip,
                            origin: wgpu::Origin3d {
                                x: 0,
                                y: 0,
                                z: layer,
                            },
                            aspect,
                        },
                        spec.subresource(mip, layer),
                        wgpu::TexelCopyBufferLayout {
                            offset: 0,
                            bytes_per_row: Some(w * spec.fmt.bytes() as u32),
                            rows_per_image: Some(h),
                        },
                        wgpu::Extent3d {
                            width: w,
                            height: h,
                            depth_or_array_layers: 1,
                        },
                    );
                }
            }
        }
        let view = texture.create_view(&wgpu::TextureViewDescriptor {
            dimension: Some(spec.dim.view()),
            ..Default::default()
        });
        GpuTexture {
            _texture: texture,
            view,
        }
    }

    fn depth_fill_pipeline(&mut self) -> &(wgpu::RenderPipeline, wgpu::BindGroupLayout) {
        let device = &self.device;
        self.depth_fill.get_or_insert_with(|| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("depth fill"),
                source: wgpu::ShaderSource::Wgsl(DEPTH_FILL_WGSL.into()),
            });
            let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: None,
                entries: &[wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only: true },
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
            let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("depth fill"),
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs"),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: wgpu::TextureFormat::Depth32Float,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Always),
                    stencil: wgpu::StencilState::default(),
                    bias: wgpu::DepthBiasState::default(),
                }),
                multisample: wgpu::MultisampleState::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs"),
                    compilation_options: Default::default(),
                    targets: &[],
                }),
                multiview_mask: None,
                cache: None,
            });
            (pipeline, bgl)
        })
    }

    /// Fills a Depth32Float texture subresource by subresource with a depth-only render pass.
    fn fill_depth32(&mut self, spec: &TexSpec, texture: &wgpu::Texture) {
        // One storage buffer: per subresource a 16-byte header (width) and the f32 depths,
        // each chunk 256-aligned for the binding offset.
        let mut data = Vec::new();
        let mut chunks = Vec::new();
        for layer in 0..spec.layers {
            for mip in 0..spec.mips {
                let start = data.len();
                data.extend_from_slice(&spec.level_size(mip)[0].to_le_bytes());
                data.extend_from_slice(&[0; 12]);
                data.extend_from_slice(spec.subresource(mip, layer));
                chunks.push((mip, layer, start, data.len() - start));
                data.resize(data.len().next_multiple_of(256), 0);
            }
        }
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: data.len() as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&buffer, 0, &data);
        let device = self.device.clone();
        let (pipeline, bgl) = self.depth_fill_pipeline();
        let mut encoder = device.create_command_encoder(&Default::default());
        for (mip, layer, start, len) in chunks {
            let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: bgl,
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &buffer,
                        offset: start as u64,
                        size: NonZeroU64::new(len as u64),
                    }),
                }],
            });
            let target = texture.create_view(&wgpu::TextureViewDescriptor {
                dimension: Some(wgpu::TextureViewDimension::D2),
                base_mip_level: mip,
                mip_level_count: Some(1),
                base_array_layer: layer,
                array_layer_count: Some(1),
                ..Default::default()
            });
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &[],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &target,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(0.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                ..Default::default()
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.draw(0..3, 0..1);
        }
        self.queue.submit([encoder.finish()]);
    }

    fn pipeline(
        &mut self,
        dim: Dim,
        kind: Kind,
    ) -> &(wgpu::ComputePipeline, wgpu::BindGroupLayout) {
        let device = &self.device;
        self.pipelines.entry((dim, kind)).or_insert_with(|| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("lookups"),
                source: wgpu::ShaderSource::Wgsl(shader_source(dim, kind).into()),
            });
            let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            };
            let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: None,
                entries: &[
                    wgpu::BindGroupLayoutEntry {
                        binding: 0,
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: wgpu::BindingType::Texture {
                            sample_type: match kind {
                                Kind::Float => wgpu::TextureSampleType::Float { filterable: true },
                                _ => wgpu::TextureSampleType::Depth,
                            },
                            view_dimension: dim.view(),
                            multisampled: false,
                        },
                        count: None,
                    },
                    wgpu::BindGroupLayoutEntry {
                        binding: 1,
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: wgpu::BindingType::Sampler(match kind {
                            Kind::DepthCompare => wgpu::SamplerBindingType::Comparison,
                            _ => wgpu::SamplerBindingType::Filtering,
                        }),
                        count: None,
                    },
                    storage(2, true),
                    storage(3, false),
                ],
            });
            let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[Some(&bgl)],
                immediate_size: 0,
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("lookups"),
                layout: Some(&layout),
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            (pipeline, bgl)
        })
    }

    /// Runs every group's lookups, in the given per-group order (`order[g]` lists lookup
    /// indices of group `g`), and returns the results per group in the groups' own order.
    ///
    /// # Panics
    /// On a wgpu error (validation errors panic through wgpu's default handler).
    pub fn run(
        &mut self,
        scenario: &Scenario,
        textures: &[GpuTexture],
        order: &[Vec<usize>],
    ) -> Vec<Vec<[f32; 4]>> {
        // Lay the lookups out group by group, each group starting GROUP_ALIGN-aligned.
        let mut starts = Vec::with_capacity(scenario.groups.len());
        let mut total = 0usize;
        for g in &scenario.groups {
            starts.push(total);
            total += g.lookups.len().next_multiple_of(GROUP_ALIGN);
        }
        let mut records = vec![0u8; total * LOOKUP_BYTES as usize];
        for (g, group) in scenario.groups.iter().enumerate() {
            let base = starts[g];
            let padded = group.lookups.len().next_multiple_of(GROUP_ALIGN);
            for slot in 0..padded {
                let at = (base + slot) * LOOKUP_BYTES as usize;
                let rec = &mut records[at..at + LOOKUP_BYTES as usize];
                match order[g].get(slot) {
                    Some(&i) => encode_lookup(&group.lookups[i], rec),
                    None => rec[60..64].copy_from_slice(&u32::MAX.to_le_bytes()),
                }
            }
        }
        let lookups = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("lookups"),
            size: records.len() as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&lookups, 0, &records);
        let results_size = total as u64 * RESULT_BYTES;
        let results = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("results"),
            size: results_size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: results_size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut binds = Vec::with_capacity(scenario.groups.len());
        for (g, group) in scenario.groups.iter().enumerate() {
            let spec = &scenario.textures[group.texture];
            let kind = match (spec.fmt.is_depth(), group.sampler.compare.is_some()) {
                (false, _) => Kind::Float,
                (true, false) => Kind::Depth,
                (true, true) => Kind::DepthCompare,
            };
            let sampler = self.device.create_sampler(&group.sampler.wgpu());
            let device = self.device.clone();
            let (pipeline, bgl) = self.pipeline(spec.dim, kind);
            let padded = group.lookups.len().next_multiple_of(GROUP_ALIGN) as u64;
            let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: bgl,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: wgpu::BindingResource::TextureView(&textures[group.texture].view),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::Sampler(&sampler),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: &lookups,
                            offset: starts[g] as u64 * LOOKUP_BYTES,
                            size: NonZeroU64::new(padded * LOOKUP_BYTES),
                        }),
                    },
                    wgpu::BindGroupEntry {
                        binding: 3,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: &results,
                            offset: starts[g] as u64 * RESULT_BYTES,
                            size: NonZeroU64::new(padded * RESULT_BYTES),
                        }),
                    },
                ],
            });
            binds.push((pipeline.clone(), bind, padded));
        }
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            for (pipeline, bind, padded) in &binds {
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, bind, &[]);
                pass.dispatch_workgroups(padded.div_ceil(64) as u32, 1, 1);
            }
        }
        encoder.copy_buffer_to_buffer(&results, 0, &readback, 0, results_size);
        self.queue.submit([encoder.finish()]);
        let slice = readback.slice(..);
        slice.map_async(wgpu::MapMode::Read, |r| r.expect("map readback"));
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("device poll");
        let bytes = slice.get_mapped_range().expect("mapped readback").to_vec();
        readback.unmap();
        let value = |i: usize| -> [f32; 4] {
            std::array::from_fn(|c| {
                let at = i * RESULT_BYTES as usize + 4 * c;
                f32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
            })
        };
        scenario
            .groups
            .iter()
            .enumerate()
            .map(|(g, group)| {
                let mut out = vec![[0.0; 4]; group.lookups.len()];
                for (slot, &i) in order[g].iter().enumerate() {
                    out[i] = value(starts[g] + slot);
                }
                out
            })
            .collect()
    }
}

/// Writes one lookup as the shader's `Lookup` struct.
fn encode_lookup(l: &Lookup, out: &mut [u8]) {
    let mut put = |at: usize, v: [u8; 4]| out[at..at + 4].copy_from_slice(&v);
    for (i, v) in l.coord.iter().enumerate() {
        put(4 * i, v.to_le_bytes());
    }
    for (i, v) in l.ddx.iter().enumerate() {
        put(16 + 4 * i, v.to_le_bytes());
    }
    for (i, v) in l.ddy.iter().enumerate() {
        put(32 + 4 * i, v.to_le_bytes());
    }
    put(48, l.level.to_le_bytes());
    put(52, l.dref.to_le_bytes());
    put(56, l.layer.to_le_bytes());
    put(60, l.op.code().to_le_bytes());
}

/// Each group's lookups in their own order.
#[must_use]
pub fn natural_order(groups: &[Group]) -> Vec<Vec<usize>> {
    groups
        .iter()
        .map(|g| (0..g.lookups.len()).collect())
        .collect()
}

/// Each group's lookups reversed: the same lookups meet other neighbours in the SIMD lanes.
#[must_use]
pub fn reversed_order(groups: &[Group]) -> Vec<Vec<usize>> {
    groups
        .iter()
        .map(|g| (0..g.lookups.len()).rev().collect())
        .collect()
}
