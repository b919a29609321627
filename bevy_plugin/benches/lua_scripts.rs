//! What a Lua system script costs per frame (`lua` feature): the level of `probes.rs` (10,000
//! probes, 4 lights) with a script that flags every dark probe, run as a Bevy system.
//!
//! ```sh
//! cargo bench -p bevy_penumbra --features lua --bench lua_scripts
//! ```
//!
//! * `dark_probes_script` — one frame's call of the script: `world.probes()` builds 10,000
//!   entries and the script flags the dark ones (`setFlag`), timed by running the system alone.
//! * `point_queries_script` — 1,000 `world.litFraction` and 1,000 `world.exposure` calls from
//!   Lua in one frame.

use std::time::Duration;

use bevy_app::App;
use bevy_ecs::system::RunSystemOnce;
use bevy_penumbra::lua::{LuaScriptPlugin, LuaScriptStatus, run_lua_scripts};
use bevy_penumbra::prelude::*;
use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};
use bevy_transform::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use glam::Vec3;

const PROBES: usize = 10_000;

const DARK_PROBES: &str = include_str!("../examples/dark_probes.luau");

const POINT_QUERIES: &str = r#"
return function(world)
    local sum = 0
    for i = 1, 1000 do
        local p = vector.create((i % 40) - 20, 1, (i // 40) - 12)
        sum += (world.litFraction(p) or 0) + (world.exposure(p) or 0)
    end
    return sum
end
"#;

fn level(name: &str, script: &str) -> App {
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
    let mut app = App::new();
    app.add_plugins((
        TransformPlugin,
        PenumbraPlugin::default(),
        LuaScriptPlugin::new(std::env::temp_dir())
            .timeout(Duration::from_secs(5))
            .with_source(name, script),
    ));
    let world = app.world_mut();
    world.spawn((
        Occluder::cuboid(Vec3::new(60.0, 1.0, 60.0)),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    world.spawn((
        Occluder::cuboid(Vec3::new(10.0, 1.0, 10.0)),
        Transform::from_xyz(0.0, 6.0, 0.0),
    ));
    world.spawn((
        ShadowLight::directional(1.0).with_kernel(PcfKernel::PCF_3X3),
        Transform::default().looking_to(Vec3::new(-0.6, -1.0, 0.4), Vec3::Y),
    ));
    for i in 0..PROBES {
        let at = Vec3::new(
            (i % 100) as f32 * 0.4 - 20.0,
            0.5,
            (i / 100) as f32 * 0.4 - 20.0,
        );
        world.spawn((LightProbe::point(), Transform::from_translation(at)));
    }
    app.update();
    let status = app.world().resource::<LuaScriptStatus>();
    assert!(
        status.scripts.iter().all(|s| s.error.is_none()),
        "{status:?}"
    );
    app
}

fn scripts(c: &mut Criterion) {
    let mut group = c.benchmark_group("lua_system_scripts");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    for (name, script) in [
        ("dark_probes_script", DARK_PROBES),
        ("point_queries_script", POINT_QUERIES),
    ] {
        let mut app = level(name, script);
        group.bench_function(name, |b| {
            b.iter(|| app.world_mut().run_system_once(run_lua_scripts).unwrap());
        });
        let status = app.world().resource::<LuaScriptStatus>();
        assert!(
            status.scripts.iter().all(|s| s.error.is_none()),
            "{status:?}"
        );
    }
    group.finish();
}

criterion_group!(benches, scripts);
criterion_main!(benches);
