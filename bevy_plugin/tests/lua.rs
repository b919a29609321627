//! Lua system scripts (the `lua` feature, issue 7 item 4): scripts flag probes through the
//! `ShadowQuery` API every frame, agree with the components, and a failing, runaway or
//! memory-hungry script is logged and disabled while the app keeps running.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bevy_app::App;
use bevy_ecs::name::Name;
use bevy_ecs::prelude::*;
use bevy_penumbra::lua::{LuaScriptPlugin, LuaScriptStatus, ScriptFlags};
use bevy_penumbra::prelude::*;
use bevy_transform::prelude::*;
use glam::Vec3;
use support::*;

/// Every `log` record of the test binary (the plugin logs script failures at `error`).
static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, record: &log::Record) {
        LOG.lock()
            .unwrap()
            .push(format!("{} {}", record.level(), record.args()));
    }
    fn flush(&self) {}
}

fn capture_logs() {
    let _ = log::set_logger(&Capture);
    log::set_max_level(log::LevelFilter::Info);
}

/// Logged lines that mention `needle`.
fn logged(needle: &str) -> Vec<String> {
    LOG.lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(needle))
        .cloned()
        .collect()
}

const DARK_PROBES: &str = include_str!("../examples/dark_probes.luau");

/// A floor, a box over (0, 0, 0), a sun, a probe under the box and one in the open.
fn yard(scripts: LuaScriptPlugin) -> (App, Entity, Entity, Entity) {
    let mut app = app_with((PenumbraPlugin::default(), scripts));
    floor(&mut app);
    let crate_ = crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    app.world_mut().spawn((
        ShadowLight::directional(1.0).with_resolution(512),
        Transform::default().looking_to(Vec3::NEG_Y, Vec3::Z),
        Name::new("sun"),
    ));
    let under = probe(&mut app, Vec3::new(0.0, 0.5, 0.0));
    let open = probe(&mut app, Vec3::new(6.0, 0.5, 0.0));
    (app, crate_, under, open)
}

fn flags(app: &App, entity: Entity) -> Vec<String> {
    app.world()
        .get::<ScriptFlags>(entity)
        .map(|f| f.iter().map(str::to_owned).collect())
        .unwrap_or_default()
}

fn status(app: &App) -> LuaScriptStatus {
    app.world().resource::<LuaScriptStatus>().clone()
}

fn temp_root(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bevy_penumbra_lua_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_script_flags_dark_probes_and_follows_the_level_as_it_changes() {
    let (mut app, crate_, under, open) = yard(
        LuaScriptPlugin::new(std::env::temp_dir()).with_source("dark_probes.luau", DARK_PROBES),
    );
    app.update();
    assert_eq!(flags(&app, under), ["dark"]);
    assert!(flags(&app, open).is_empty());
    assert_eq!(status(&app).scripts[0].runs, 1);
    assert_eq!(status(&app).scripts[0].error, None);
    // The box moves away: the next frame the probe is lit and the flag is gone.
    move_to(&mut app, crate_, Vec3::new(-10.0, 3.0, 0.0));
    app.update();
    assert!(flags(&app, under).is_empty());
    assert_eq!(status(&app).scripts[0].runs, 2);
}

#[test]
fn scripts_see_what_shadow_query_sees() {
    let script = r#"
return function(world)
    local answers = {}
    for _, probe in world.probes() do
        local p = probe.position
        -- the component, the ad-hoc query and one light's query agree
        assert(world.exposure(p) == probe.total, "exposure")
        assert(world.litFraction(p) == probe.litFraction, "litFraction")
        assert(world.litFractionFrom("sun", p) == probe.litFraction, "by name")
        for _, light in world.lights() do
            assert(light.name == "sun")
            assert(world.litFractionFrom(light.entity, p) == probe.litFraction, "by entity")
        end
        world.setFlag(probe.entity, if probe.litFraction == 0 then "shadowed" else "lit")
    end
    -- a point outside the sun's map: unshadowed by it
    assert(world.litFraction({1000, 0, 1000}) == 1)
    -- SampleCmpLevelZero on the sun's map at its centre, reference 0 passes LESS_EQUAL
    assert(world.sampleCmp("sun", {0.5, 0.5}, 0) == 1)
    for _, viewer in world.viewers() do
        world.setFlag(viewer.entity, if world.canSee(viewer.entity, {6, 0.5, 0}) then "sees open" else "blind")
        assert(world.visibleFraction(viewer.entity, {6, 0.5, 0}, 0.2) > 0)
        assert(viewer.entity == viewer.entity and tostring(viewer.entity):find("Entity"))
    end
    assert(world.frame >= 1)
end
"#;
    let (mut app, _, under, open) =
        yard(LuaScriptPlugin::new(std::env::temp_dir()).with_source("agree.luau", script));
    let guard = app
        .world_mut()
        .spawn((
            Viewer::new(90f32.to_radians(), 30.0).with_resolution(128),
            Transform::from_xyz(10.0, 1.5, 0.0).looking_at(Vec3::new(0.0, 0.5, 0.0), Vec3::Y),
        ))
        .id();
    app.update();
    app.update();
    assert_eq!(status(&app).scripts[0].error, None, "{:?}", status(&app));
    assert_eq!(flags(&app, under), ["shadowed"]);
    assert_eq!(flags(&app, open), ["lit"]);
    let seen = with_query(&mut app, |q| {
        q.can_see(guard, Vec3::new(6.0, 0.5, 0.0)).unwrap()
    });
    assert!(seen);
    assert_eq!(flags(&app, guard), ["sees open"]);
}

#[test]
fn a_failing_script_is_logged_once_and_disabled_and_the_others_keep_running() {
    capture_logs();
    let boom = r#"
return function(world)
    if world.frame == 3 then
        error("boom at frame " .. world.frame)
    end
end
"#;
    let (mut app, _, under, _) = yard(
        LuaScriptPlugin::new(std::env::temp_dir())
            .with_source("boom.luau", boom)
            .with_source("dark_probes.luau", DARK_PROBES),
    );
    for _ in 0..6 {
        app.update();
    }
    let s = status(&app);
    let boom = s.script("boom.luau").unwrap();
    assert_eq!(boom.runs, 2);
    let error = boom.error.as_deref().unwrap();
    assert!(
        error.contains("boom.luau:4") && error.contains("boom at frame 3"),
        "{error}"
    );
    assert_eq!(s.script("dark_probes.luau").unwrap().runs, 6);
    assert_eq!(flags(&app, under), ["dark"]);
    let lines = logged("boom at frame 3");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("ERROR penumbra lua: boom.luau:4"),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("the script is disabled"));
}

#[test]
fn runaway_and_memory_hungry_scripts_stop_at_their_limits() {
    let spin = "return function(world) while true do end end";
    let bomb = r#"
return function(world)
    local t = {}
    -- Megabyte strings reach the 16 MiB limit in a few steps, long before the
    -- 100 ms timeout even on a loaded machine (1 KiB ones once took longer).
    for i = 1, 1e9 do t[i] = string.rep("x", 1e6) .. i end
end
"#;
    let (mut app, _, under, _) = yard(
        LuaScriptPlugin::new(std::env::temp_dir())
            .timeout(Duration::from_millis(100))
            .max_memory(16 << 20)
            .with_source("spin.luau", spin)
            .with_source("bomb.luau", bomb)
            .with_source("dark_probes.luau", DARK_PROBES),
    );
    let start = Instant::now();
    app.update();
    app.update();
    // Two runaway calls of at most 100 ms each, once: not a hang.
    assert!(start.elapsed() < Duration::from_secs(20));
    let s = status(&app);
    let spin = s.script("spin.luau").unwrap().error.clone().unwrap();
    assert!(
        spin.contains("spin.luau:1") && spin.contains("time"),
        "{spin}"
    );
    let bomb = s.script("bomb.luau").unwrap().error.clone().unwrap();
    assert!(bomb.contains("memory"), "{bomb}");
    assert_eq!(s.script("dark_probes.luau").unwrap().runs, 2);
    assert_eq!(flags(&app, under), ["dark"]);
}

#[test]
fn wrong_arguments_raise_lua_errors_that_name_the_function_and_line() {
    let cases = [
        (
            "world.litFraction(\"x\")",
            "world.litFraction: point: expected a vector",
        ),
        (
            "world.litFraction({0, 0/0, 0})",
            "expected finite coordinates",
        ),
        (
            "world.canSee(42, {0, 0, 0})",
            "world.canSee: viewer: expected an entity",
        ),
        (
            "world.litFractionFrom(\"moon\", {0, 0, 0})",
            "world.litFractionFrom: ",
        ),
        (
            "world.setFlag(nil, \"x\")",
            "world.setFlag: entity: expected an entity",
        ),
        (
            "world.visibleFraction(world.probes()[1].entity, {0,0,0}, -1)",
            "radius = -1",
        ),
        (
            "world.sampleCmp(\"sun\", {0.5, 0.5}, \"deep\")",
            "world.sampleCmp: reference: expected a number",
        ),
        (
            "world.visibleFraction(world.probes()[1].entity, {0,0,0}, 1e300)",
            "radius = 1e300",
        ),
        (
            "world.setFlag(world.probes()[1].entity, string.rep(\"x\", 300))",
            "flag: 300 bytes, at most 256",
        ),
        (
            "local e = world.probes()[1].entity for i = 1, 70000 do world.setFlag(e, \"f\" .. i) end",
            "more than 65536 flags set in one frame",
        ),
    ];
    // A long deadline: the flag-limit case makes 70,000 calls, which a loaded machine may not
    // finish within the default 50 ms.
    let mut plugin = LuaScriptPlugin::new(std::env::temp_dir()).timeout(Duration::from_secs(10));
    for (i, (call, _)) in cases.iter().enumerate() {
        plugin = plugin.with_source(
            format!("case{i}.luau"),
            format!("return function(world)\n{call}\nend"),
        );
    }
    let (mut app, ..) = yard(plugin);
    app.update();
    let s = status(&app);
    for (i, (call, expected)) in cases.iter().enumerate() {
        let state = s.script(&format!("case{i}.luau")).unwrap();
        let error = state
            .error
            .as_deref()
            .unwrap_or_else(|| panic!("{call} raised nothing"));
        assert!(
            error.contains(&format!("case{i}.luau:2")),
            "{call}: {error}"
        );
        assert!(error.contains(expected), "{call}: {error}");
    }
}

#[test]
fn scripts_load_from_the_root_with_require_and_bad_scripts_are_reported_at_startup() {
    capture_logs();
    let root = temp_root("files");
    std::fs::write(root.join("threshold.luau"), "return 0.5").unwrap();
    std::fs::write(
        root.join("dark.luau"),
        "local threshold = require(\"./threshold\")\nreturn function(world)\n  for _, p in world.probes() do world.setFlag(p.entity, \"dark\", p.total < threshold) end\nend\n",
    )
    .unwrap();
    std::fs::write(root.join("nothing.luau"), "return 42").unwrap();
    std::fs::write(
        root.join("broken.luau"),
        "return function(world)\n  if then\nend",
    )
    .unwrap();
    let outside = temp_root("outside").join("sneaky.luau");
    std::fs::write(&outside, DARK_PROBES).unwrap();
    let file = |name: &str| root.join(name);
    let (mut app, _, under, open) = yard(
        LuaScriptPlugin::new(&root)
            .with_file(file("dark.luau"))
            .with_file(file("nothing.luau"))
            .with_file(file("broken.luau"))
            .with_file(&outside)
            .with_file(file("missing.luau")),
    );
    app.update();
    assert_eq!(flags(&app, under), ["dark"]);
    assert!(flags(&app, open).is_empty());
    let s = status(&app);
    let error = |name: &Path| {
        s.script(&name.display().to_string())
            .unwrap()
            .error
            .clone()
            .unwrap_or_default()
    };
    assert_eq!(error(&file("dark.luau")), "");
    assert!(error(&file("nothing.luau")).contains("must return a function (got the number 42)"));
    assert!(
        error(&file("broken.luau")).contains("broken.luau:2"),
        "{}",
        error(&file("broken.luau"))
    );
    assert!(
        error(&outside).contains("outside its root"),
        "{}",
        error(&outside)
    );
    assert!(error(&file("missing.luau")).contains("cannot read the script"));
    assert_eq!(logged("must return a function").len(), 1);

    // A root that does not exist: one error, no script, the app runs.
    let (mut app, ..) =
        yard(LuaScriptPlugin::new(root.join("no_such_folder")).with_source("x.luau", DARK_PROBES));
    app.update();
    let s = status(&app);
    assert!(
        s.setup_error.as_deref().unwrap().contains("no_such_folder"),
        "{s:?}"
    );
    assert!(s.scripts.is_empty());
    let _ = std::fs::remove_dir_all(&root);
}

/// The stealth example's level script: seen in the dark is "seen by", seen in the light is also
/// "spotted by"; the flags follow the player.
#[test]
fn the_stealth_rules_script_spots_the_player_only_in_the_light() {
    let (mut app, _, _, _) = yard(LuaScriptPlugin::new(std::env::temp_dir()).with_source(
        "stealth_rules.luau",
        include_str!("../examples/stealth_rules.luau"),
    ));
    let player = app
        .world_mut()
        .spawn((
            LightProbe::point(),
            SightTarget {
                offset: Vec3::ZERO,
                radius: 0.0,
            },
            Transform::from_xyz(0.0, 0.5, 0.0),
        ))
        .id();
    app.world_mut().spawn((
        Name::new("guard"),
        Viewer::new(90f32.to_radians(), 30.0)
            .with_resolution(128)
            .with_targets([player]),
        Transform::from_xyz(10.0, 1.5, 0.0).looking_at(Vec3::new(0.0, 0.5, 0.0), Vec3::Y),
    ));
    app.update();
    app.update();
    assert_eq!(status(&app).scripts[0].error, None);
    assert_eq!(flags(&app, player), ["seen by guard"]);
    move_to(&mut app, player, Vec3::new(5.0, 0.5, 0.0));
    app.update();
    app.update();
    assert_eq!(flags(&app, player), ["seen by guard", "spotted by guard"]);
}

/// A script that fails after setting flags changes nothing: its flags of that call are dropped.
#[test]
fn a_failing_call_sets_no_flags() {
    let script = r#"
return function(world)
    for _, probe in world.probes() do
        world.setFlag(probe.entity, "seen")
    end
    if world.frame == 2 then
        error("late failure")
    end
end
"#;
    let (mut app, _, under, open) =
        yard(LuaScriptPlugin::new(std::env::temp_dir()).with_source("late.luau", script));
    app.update();
    assert_eq!(flags(&app, under), ["seen"]);
    // Frame 2 fails after flagging: remove the flags by hand, and they must stay removed.
    for e in [under, open] {
        app.world_mut().entity_mut(e).remove::<ScriptFlags>();
    }
    app.update();
    assert!(flags(&app, under).is_empty() && flags(&app, open).is_empty());
    assert!(
        status(&app).scripts[0]
            .error
            .as_deref()
            .unwrap()
            .contains("late failure")
    );
}

/// `{x, y, z}` with each coordinate written so Lua reads back the same f32.
fn lua_vec(v: Vec3) -> String {
    format!(
        "{{{:?}, {:?}, {:?}}}",
        f64::from(v.x),
        f64::from(v.y),
        f64::from(v.z)
    )
}

#[test]
fn a_scene_built_in_lua_and_in_bevy_gives_bit_equal_exposures() {
    // The same boxes and lights through the Bevy plugin and through a Lua `penumbra.scene()`:
    // both bind the engine's Lighting, so every exposure agrees to the bit, shadow edges and
    // the points outside the maps included (issue 14).
    let mut app = app();
    let boxes = [
        (Vec3::new(-10.0, -1.0, -10.0), Vec3::new(10.0, 0.0, 10.0)),
        (Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0)),
        (Vec3::new(3.0, 0.0, -4.0), Vec3::new(3.5, 3.0, 4.0)),
    ];
    for (min, max) in boxes {
        world_box(&mut app, min, max);
    }
    let sun = app
        .world_mut()
        .spawn((
            ShadowLight::directional(0.5)
                .with_resolution(256)
                .with_kernel(PcfKernel::PCF_3X3),
            Transform::default().looking_to(Vec3::new(0.4, -1.0, 0.25), Vec3::Y),
        ))
        .id();
    let lamp = app
        .world_mut()
        .spawn((
            ShadowLight::spot(35f32.to_radians(), 12.0, 30.0).with_resolution(128),
            Transform::from_xyz(1.0, 7.0, 2.0).looking_at(Vec3::new(0.5, 0.0, 0.0), Vec3::Z),
        ))
        .id();
    let bulb = app
        .world_mut()
        .spawn((
            ShadowLight::point(9.0, 12.0)
                .with_resolution(64)
                .with_kernel(PcfKernel::PCF_5X5),
            Transform::from_xyz(-4.0, 2.5, 1.5),
        ))
        .id();
    app.update();
    // The engine lights as Bevy placed them, written out for Lua bit for bit.
    let maps = app.world().resource::<ShadowMaps>();
    let kind = |e: Entity| maps.get(e).unwrap().light().kind.clone();
    let penumbra_core::shadow::LightKind::Directional {
        direction: sun_dir, ..
    } = kind(sun)
    else {
        panic!("sun")
    };
    let penumbra_core::shadow::LightKind::Spot {
        position: lamp_at,
        direction: lamp_dir,
        ..
    } = kind(lamp)
    else {
        panic!("lamp")
    };
    let mut points = Vec::new();
    for i in 0..24 {
        for j in 0..24 {
            let (x, z) = (-11.0 + i as f32 * 0.95, -11.0 + j as f32 * 0.95);
            points.push(Vec3::new(x, 0.0, z));
            points.push(Vec3::new(x + 0.3, 0.8, z - 0.2));
        }
    }
    points.extend(table_rows().into_iter().map(|r| Vec3::from(r.0)));
    let mut script = String::from("local scene = penumbra.scene()\n");
    for (min, max) in boxes {
        script += &format!("scene:addBox({}, {})\n", lua_vec(min), lua_vec(max));
    }
    let described = [
        (
            sun,
            format!(
                "{{kind = 'directional', direction = {}, intensity = 0.5, resolution = 256, \
                 kernel = '3x3'}}",
                lua_vec(sun_dir)
            ),
        ),
        (
            lamp,
            format!(
                "{{kind = 'spot', position = {}, direction = {}, angle = 70, range = 12, \
                 intensity = 30, resolution = 128}}",
                lua_vec(lamp_at),
                lua_vec(lamp_dir)
            ),
        ),
        (
            bulb,
            format!(
                "{{kind = 'point', position = {}, range = 9, intensity = 12, resolution = 64, \
                 kernel = '5x5'}}",
                lua_vec(Vec3::new(-4.0, 2.5, 1.5))
            ),
        ),
    ];
    // Lights are summed in each binding's handle order: the Lua scene adds them in the order
    // the plugin sums them (entity order), so the sums are the same sums.
    for light in maps.iter() {
        let (_, desc) = described
            .iter()
            .find(|(e, _)| *e == light.entity())
            .unwrap();
        script += &format!("scene:addLight({desc})\n");
    }
    let list: Vec<String> = points.iter().map(|&p| lua_vec(p)).collect();
    script += &format!(
        "local points = {{{}}}\nlocal single = {{}}\n\
         for i, p in ipairs(points) do single[i] = scene:lightAt(p, {{0, 1, 0}}).total end\n\
         return single, scene:lightAtBatch(points, {{0, 1, 0}})",
        list.join(", ")
    );
    let dir = temp_root("parity");
    let rt = penumbra_lua::Runtime::new(penumbra_lua::RuntimeOptions::new(&dir)).unwrap();
    let (single, batch): (Vec<f32>, Vec<f32>) = rt.eval(&script, "parity.luau").unwrap();
    let (mut lit, mut dark) = (0, 0);
    for (k, &p) in points.iter().enumerate() {
        let bevy = with_query(&mut app, |q| {
            q.probe(&[p], Some(Vec3::Y)).map_or(0.0, |e| e.total())
        });
        assert_eq!(
            single[k].to_bits(),
            bevy.to_bits(),
            "{p}: Lua {} Bevy {bevy}",
            single[k]
        );
        assert_eq!(batch[k].to_bits(), bevy.to_bits(), "batch {p}");
        if bevy == 0.0 {
            dark += 1;
        } else if bevy > 0.5 {
            lit += 1;
        }
    }
    // The scene has both, and soft edges between.
    assert!(lit > 50 && dark > 20, "{lit} lit, {dark} dark");
}

/// Updates `app` until `done` holds, for at most 20 s (file events take a moment to arrive).
fn update_until(app: &mut App, mut done: impl FnMut(&App) -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end {
        app.update();
        if done(app) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A script file, or a module it requires, that changes while the game runs is reloaded; a
/// reload that fails is logged and the previous version keeps running (issue 17).
#[test]
fn changed_script_files_reload_and_a_failing_reload_keeps_the_old_version() {
    capture_logs();
    let root = temp_root("reload");
    std::fs::write(root.join("threshold.luau"), "return 0.5").unwrap();
    let script = root.join("dark.luau");
    let body = |extra: &str| {
        format!(
            "local threshold = require(\"./threshold\")\n{extra}return function(world)\n  for _, p in world.probes() do world.setFlag(p.entity, \"dark\", p.total < threshold) end\nend\n"
        )
    };
    std::fs::write(&script, body("")).unwrap();
    let (mut app, _, under, open) = yard(LuaScriptPlugin::new(&root).with_file(&script));
    app.update();
    assert_eq!(flags(&app, under), ["dark"]);
    assert!(flags(&app, open).is_empty());

    // The required module changes: nothing is dark below a threshold of -1.
    std::fs::write(root.join("threshold.luau"), "return -1").unwrap();
    assert!(
        update_until(&mut app, |app| flags(app, under).is_empty()),
        "the module change was not picked up"
    );

    // A broken save: logged, the running version stays (and keeps its status).
    std::fs::write(&script, "return function(world)\n  if then\nend").unwrap();
    assert!(
        update_until(&mut app, |_| !logged("reloading failed").is_empty()),
        "the failed reload was not logged"
    );
    let failed = logged("reloading failed");
    assert!(failed[0].contains("dark.luau:2"), "{failed:?}");
    assert!(
        failed[0].contains("the previous version keeps running"),
        "{failed:?}"
    );
    let runs = status(&app).scripts[0].runs;
    app.update();
    assert_eq!(status(&app).scripts[0].error, None);
    assert_eq!(status(&app).scripts[0].runs, runs + 1);
    assert!(flags(&app, under).is_empty());

    // Fixed, with a threshold everything is below: both probes are dark.
    std::fs::write(root.join("threshold.luau"), "return 2").unwrap();
    std::fs::write(&script, body("-- fixed\n")).unwrap();
    assert!(
        update_until(&mut app, |app| flags(app, open) == ["dark"]),
        "the fixed script was not reloaded"
    );
    assert_eq!(flags(&app, under), ["dark"]);
    assert!(!logged("reloaded").is_empty());
    let _ = std::fs::remove_dir_all(&root);
}

/// A misspelt name on `world` or an entity gets the same did-you-mean error as the `penumbra`
/// types (issue 17).
#[test]
fn misspelt_world_names_get_suggestions() {
    capture_logs();
    let (mut app, ..) = yard(
        LuaScriptPlugin::new(std::env::temp_dir())
            .with_source("typo.luau", "return function(world)\n  for _, p in world.Probes() do end\nend\n")
            .with_source(
                "entity.luau",
                "return function(world)\n  local p = world.probes()[1]\n  print(p.entity.name)\nend\n",
            ),
    );
    app.update();
    let s = status(&app);
    let typo = s
        .script("typo.luau")
        .unwrap()
        .error
        .clone()
        .unwrap_or_default();
    assert!(
        typo.contains("typo.luau:2:")
            && typo.contains("World has no field or method 'Probes'; did you mean 'probes'?"),
        "{typo}"
    );
    let entity = s
        .script("entity.luau")
        .unwrap()
        .error
        .clone()
        .unwrap_or_default();
    assert!(
        entity.contains("entity.luau:3:")
            && entity.contains("Entity has no field or method 'name' (it has none)"),
        "{entity}"
    );
}
