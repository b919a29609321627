//! What a script pays for the scene API: `scene:lightAt` calls per second from Luau (one call,
//! one point, a result table; points as `{x, y, z}` tables and as vectors), and points and
//! lookups per second through the batch API (`scene:lightAtBatch`,
//! `Sampler:sampleCmpLevelZeroBatch`).
//!
//! ```sh
//! cargo bench -p penumbra_lua --bench lua
//! ```
//!
//! The scene is the demo's courtyard (11 boxes, a 2048² sun, two 1024² spot lights); its maps
//! and batches are built before timing starts.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use penumbra_lua::mlua::Function;
use penumbra_lua::{Runtime, RuntimeOptions};

/// Points per call of the batch benches, and calls per iteration of the `lightAt` bench.
const N: usize = 4096;

/// The courtyard, 4096 floor points in it, and the functions the benches call.
const SETUP: &str = r#"
local scene = penumbra.scene()
scene:addBox({ -20, -1, -20 }, { 20, 0, 20 })
scene:addBox({ -20, 0, -20 }, { 20, 4, -19 })
scene:addBox({ -20, 0, -19 }, { -19, 4, 20 })
scene:addBox({ -6, 0, -2 }, { -1, 3, -1 })
scene:addBox({ 4, 0, 4 }, { 6, 1.5, 6 })
scene:addBox({ 6.5, 0, 4.5 }, { 7.5, 1, 5.5 })
scene:addBox({ -12, 0, 8 }, { -10, 2, 10 })
for _, at in ipairs({ { -8, -10 }, { 0, -10 }, { 8, -10 }, { 12, 2 } }) do
    scene:addBox({ at[1] - 0.5, 0, at[2] - 0.5 }, { at[1] + 0.5, 5, at[2] + 0.5 })
end
scene:addLight({ kind = "directional", name = "sun", direction = { 0.8, -0.55, 0.45 }, intensity = 0.35 })
scene:addLight({ kind = "spot", name = "lamp-east", position = { 10, 6, 8 }, direction = { -0.3, -1, -0.2 },
    angle = 80, range = 18, intensity = 25 })
scene:addLight({ kind = "spot", name = "lamp-west", position = { -10, 6, -6 }, direction = { 0.2, -1, 0.3 },
    angle = 69, range = 18, intensity = 25 })

local n = ...
local points, seed = {}, 12345
local function random() -- Park and Miller's minimal standard generator, exact in doubles
    seed = (seed * 16807) % 2147483647
    return seed / 2147483647
end
for i = 1, n do
    points[i] = { -19 + 38 * random(), 0, -19 + 38 * random() }
end
local up = { 0, 1, 0 }
-- Luau vectors (Lua 5.4 has none: there the "vectors" bench repeats the tables one).
local vpoints, vup = points, up
if vector then
    vpoints, vup = {}, vector.create(0, 1, 0)
    for i = 1, n do
        vpoints[i] = vector.create(points[i][1], points[i][2], points[i][3])
    end
end

-- A 2048² depth texture and n uv pairs (flat) for the sampler batch.
local depth = penumbra.texture({ format = "R32_FLOAT", width = 2048, height = 2048 })
depth:fill(function(x, y) return ((x * 7 + y * 13) % 1024) / 1024 end)
local pcf = penumbra.sampler({ filter = "COMPARISON_MIN_MAG_LINEAR_MIP_POINT", comparisonFunc = "LESS_EQUAL" })
local uv = {}
for i = 1, n do
    uv[2 * i - 1], uv[2 * i] = random(), random()
end

-- Render the maps and build the batches before timing.
scene:lightAt(points[1], up)
scene:lightAtBatch(points, up)
pcf:sampleCmpLevelZeroBatch(depth, uv, 0.5)

local function lightAt()
    local sum = 0
    for i = 1, n do
        sum = sum + scene:lightAt(points[i], up).total
    end
    return sum
end
local function lightAtVectors()
    local sum = 0
    for i = 1, n do
        sum = sum + scene:lightAt(vpoints[i], vup).total
    end
    return sum
end
local function lightAtBatch()
    return #scene:lightAtBatch(points, up)
end
local function samplerBatch()
    return #pcf:sampleCmpLevelZeroBatch(depth, uv, 0.5)
end
return lightAt, lightAtVectors, lightAtBatch, samplerBatch
"#;

fn bench(c: &mut Criterion) {
    let root = std::env::temp_dir().join(format!("penumbra-lua-bench-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let runtime = Runtime::new(
        RuntimeOptions::new(&root)
            .max_memory(1 << 30)
            .timeout(Duration::from_secs(60)),
    )
    .unwrap();
    let setup = runtime
        .lua()
        .load(SETUP)
        .set_name("bench")
        .into_function()
        .unwrap();
    let (light_at, light_at_vectors, light_at_batch, sampler_batch): (
        Function,
        Function,
        Function,
        Function,
    ) = setup.call(N).unwrap();

    let mut group = c.benchmark_group("lua");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Elements(N as u64));
    group.bench_function("scene_lightAt_calls", |b| {
        b.iter(|| black_box(light_at.call::<f64>(()).unwrap()));
    });
    group.bench_function("scene_lightAt_calls_vectors", |b| {
        b.iter(|| black_box(light_at_vectors.call::<f64>(()).unwrap()));
    });
    group.bench_function("scene_lightAtBatch_points", |b| {
        b.iter(|| black_box(light_at_batch.call::<usize>(()).unwrap()));
    });
    group.bench_function("sampleCmpLevelZeroBatch_lookups", |b| {
        b.iter(|| black_box(sampler_batch.call::<usize>(()).unwrap()));
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&root);
}

criterion_group!(benches, bench);
criterion_main!(benches);
