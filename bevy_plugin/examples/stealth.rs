//! A headless stealth level: walls and pillars, a sun and two spot lights, two patrolling
//! guards, and a player sneaking through.
//!
//! Each tick prints how exposed the player is (light by light) and which guards see them; at the
//! end `penumbra-out/stealth.png` shows the level from above: lit ground bright, shadow dark,
//! the guards' view cones (occluded by walls) in red, and the player's path coloured by exposure
//! (green in the dark, red in the light; white rings where a guard saw them).
//!
//! The detection rule — a guard notices the player only in their view *and* in the light — is
//! the level script `stealth_rules.luau`, run every frame as a Bevy system by
//! `bevy_penumbra::lua::LuaScriptPlugin`; it sets `ScriptFlags` on the player that `report` reads.
//!
//! ```sh
//! cargo run --release --example stealth      # from the workspace root
//! ```

use std::fmt::Write as _;

use bevy_app::{App, PostUpdate, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use bevy_ecs::system::{SystemParam, SystemState};
use bevy_penumbra::lua::{LuaScriptPlugin, LuaScriptStatus, ScriptFlags};
use bevy_penumbra::prelude::*;
use bevy_transform::prelude::*;
use glam::{Vec2, Vec3};
use image::{Rgb, RgbImage};

/// Simulation steps; one step is 0.1 s of game time.
const TICKS: u32 = 120;
/// The level spans −HALF..HALF on x and z.
const HALF: f32 = 20.0;
/// Picture size in pixels.
const SIZE: u32 = 640;
/// Eye height of the guards.
const EYE: f32 = 1.7;

/// The step being simulated.
#[derive(Resource, Default)]
struct Tick(u32);

/// Walks the entity along a path on the floor: `speed` metres per tick from `start` metres in,
/// looping or back and forth, facing where it goes.
#[derive(Component)]
struct Walker {
    path: Vec<Vec2>,
    start: f32,
    speed: f32,
    looped: bool,
    height: f32,
}

#[derive(Component)]
struct Player;

/// Whether a guard saw the player at one tick.
#[derive(Clone, Copy, PartialEq)]
enum Sighted {
    No,
    InTheDark,
    Spotted,
}

/// Where the player was, how exposed, and whether seen, tick by tick, for the picture.
#[derive(Resource, Default)]
struct Trail(Vec<(Vec3, f32, Sighted)>);

fn main() {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        TransformPlugin,
        PenumbraPlugin::default(),
        // The level's detection rule, sandboxed (the script root is the working folder).
        LuaScriptPlugin::new(".")
            .with_source("stealth_rules.luau", include_str!("stealth_rules.luau")),
    ))
    .init_resource::<Tick>()
    .init_resource::<Trail>()
    .add_systems(Update, walk)
    .add_systems(PostUpdate, report.after(PenumbraSystems::Writeback));
    build_level(app.world_mut());

    for tick in 0..TICKS {
        app.world_mut().resource_mut::<Tick>().0 = tick;
        app.update();
    }

    if let Some(failed) = app
        .world()
        .resource::<LuaScriptStatus>()
        .scripts
        .iter()
        .find_map(|s| s.error.clone())
    {
        eprintln!("stealth: the level script failed: {failed}");
        std::process::exit(1);
    }
    let d = app.world().resource::<PenumbraDiagnostics>().clone();
    println!(
        "\n{} frames: {} shadow maps and {} eye maps rendered in all; last frame: rasterize {:?}, queries {:?}",
        d.frames,
        d.total_shadow_maps_rendered,
        d.total_eye_maps_rendered,
        d.rasterize_time(),
        d.query_time()
    );
    let path = std::path::Path::new("penumbra-out").join("stealth.png");
    match draw(app.world_mut()).and_then(|picture| {
        std::fs::create_dir_all("penumbra-out")?;
        picture.save(&path).map_err(std::io::Error::other)
    }) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => {
            eprintln!("stealth: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
}

fn wall(world: &mut World, center: Vec3, size: Vec3) {
    world.spawn((Occluder::cuboid(size), Transform::from_translation(center)));
}

fn build_level(world: &mut World) {
    // The floor's top is y = 0.
    wall(
        world,
        Vec3::new(0.0, -0.5, 0.0),
        Vec3::new(2.0 * HALF, 1.0, 2.0 * HALF),
    );
    for (center, size) in [
        (Vec3::new(-6.0, 1.5, -6.0), Vec3::new(12.0, 3.0, 0.6)),
        (Vec3::new(8.0, 1.5, -5.0), Vec3::new(0.6, 3.0, 14.0)),
        (Vec3::new(5.0, 1.5, 8.0), Vec3::new(18.0, 3.0, 0.6)),
        (Vec3::new(-10.0, 1.5, 8.0), Vec3::new(0.6, 3.0, 12.0)),
    ] {
        wall(world, center, size);
    }
    for (x, z) in [
        (-6.0, 2.0),
        (0.0, 2.0),
        (4.0, -1.0),
        (-2.0, 12.0),
        (12.0, 12.0),
        (14.0, -10.0),
    ] {
        wall(world, Vec3::new(x, 2.0, z), Vec3::new(1.0, 4.0, 1.0));
    }

    world.spawn((
        Name::new("sun"),
        ShadowLight::directional(0.6).with_kernel(PcfKernel::PCF_3X3),
        Transform::default().looking_to(Vec3::new(-1.0, -0.8, 0.6), Vec3::Y),
    ));
    for (name, at, target) in [
        (
            "lamp_west",
            Vec3::new(-2.5, 6.0, -2.0),
            Vec3::new(-1.5, 0.0, -1.0),
        ),
        (
            "lamp_east",
            Vec3::new(11.0, 6.0, 3.0),
            Vec3::new(11.0, 0.0, 1.0),
        ),
    ] {
        world.spawn((
            Name::new(name),
            ShadowLight::spot(0.65, 14.0, 40.0).with_kernel(PcfKernel::PCF_3X3),
            Transform::from_translation(at).looking_at(target, Vec3::Y),
        ));
    }

    // Along the shadowed side of the walls where it can, across the lamp-lit yard where it must.
    let path: Vec<Vec2> = [
        (-15.0, 17.0),
        (-11.3, 14.0),
        (-11.3, 3.0),
        (-8.0, -4.7),
        (-1.5, -4.7),
        (0.5, -1.0),
        (6.8, -3.0),
        (6.8, -13.0),
        (12.0, -16.0),
        (17.0, -17.0),
    ]
    .map(|(x, z)| Vec2::new(x, z))
    .to_vec();
    let player = world
        .spawn((
            Player,
            Name::new("player"),
            LightProbe::body(1.8),
            SightTarget {
                offset: Vec3::new(0.0, 1.2, 0.0),
                radius: 0.3,
            },
            Walker {
                // The walk takes the whole run.
                speed: path_length(&path) / (TICKS - 1) as f32,
                start: 0.0,
                path,
                looped: false,
                height: 0.0,
            },
            Transform::default(),
        ))
        .id();

    // Timed so that one guard looks at the player hiding in a shadow and the other catches
    // them in the sun near the exit.
    for (name, path, start, looped) in [
        (
            "guard_north",
            vec![(-14.0, -10.0), (4.0, -10.0), (4.0, -3.0), (-14.0, -3.0)],
            8.9,
            true,
        ),
        ("guard_east", vec![(14.0, -13.0), (14.0, 6.0)], 34.0, false),
    ] {
        world.spawn((
            Name::new(name),
            Viewer::new(80f32.to_radians(), 14.0).with_targets([player]),
            Walker {
                path: path.into_iter().map(|(x, z)| Vec2::new(x, z)).collect(),
                start,
                speed: 0.35,
                looped,
                height: EYE,
            },
            Transform::default(),
        ));
    }
}

fn path_length(path: &[Vec2]) -> f32 {
    path.windows(2).map(|w| w[0].distance(w[1])).sum()
}

/// Position and heading `distance` metres along `path` (round and round, or back and forth).
fn along(path: &[Vec2], distance: f32, looped: bool) -> (Vec2, Vec2) {
    let mut points = path.to_vec();
    if looped && let Some(&first) = path.first() {
        points.push(first);
    }
    let Some(&start) = points.first() else {
        return (Vec2::ZERO, Vec2::NEG_Y);
    };
    let total = path_length(&points);
    if total <= 0.0 {
        return (start, Vec2::NEG_Y);
    }
    let cycle = if looped { total } else { 2.0 * total };
    let mut d = distance.rem_euclid(cycle);
    let backwards = d > total;
    if backwards {
        d = cycle - d;
    }
    let mut place = (start, Vec2::NEG_Y);
    for w in points.windows(2) {
        let len = w[0].distance(w[1]);
        let dir = (w[1] - w[0]).normalize_or(Vec2::NEG_Y);
        place = (w[0] + dir * d.min(len), if backwards { -dir } else { dir });
        if d <= len {
            break;
        }
        d -= len;
    }
    place
}

fn walk(tick: Res<Tick>, mut walkers: Query<(&Walker, &mut Transform)>) {
    for (walker, mut transform) in &mut walkers {
        let (at, heading) = along(
            &walker.path,
            walker.start + walker.speed * tick.0 as f32,
            walker.looped,
        );
        *transform = Transform::from_xyz(at.x, walker.height, at.y)
            .looking_to(Vec3::new(heading.x, 0.0, heading.y), Vec3::Y);
    }
}

fn report(
    tick: Res<Tick>,
    players: Query<(&GlobalTransform, &Exposure, Option<&ScriptFlags>), With<Player>>,
    names: Query<&Name>,
    mut trail: ResMut<Trail>,
) {
    for (transform, exposure, flags) in &players {
        let at = transform.translation();
        let mut line = format!(
            "tick {:3}  player ({:6.2}, {:6.2})  exposure {:5.2} (lit {:3.0}%)",
            tick.0,
            at.x,
            at.z,
            exposure.total(),
            100.0 * exposure.lit_fraction().unwrap_or(0.0)
        );
        for share in exposure.lights() {
            let name = names.get(share.light).map_or("light", Name::as_str);
            let _ = write!(line, "  {name} {:.2}", share.irradiance);
        }
        // What the level script decided this frame.
        let flagged = |prefix: &str| -> Vec<&str> {
            flags
                .into_iter()
                .flat_map(ScriptFlags::iter)
                .filter_map(|f| f.strip_prefix(prefix))
                .collect()
        };
        let (seen_by, spotted_by) = (flagged("seen by "), flagged("spotted by "));
        let sighting = if seen_by.is_empty() {
            line.push_str("  | unseen");
            Sighted::No
        } else if spotted_by.is_empty() {
            let _ = write!(
                line,
                "  | in view of {}, hidden by the dark",
                seen_by.join(", ")
            );
            Sighted::InTheDark
        } else {
            let _ = write!(line, "  | SPOTTED by {}", spotted_by.join(", "));
            Sighted::Spotted
        };
        println!("{line}");
        trail.0.push((at, exposure.total(), sighting));
    }
}

/// 0..1 brightness for an exposure (lights add up past 1).
fn tone(exposure: f32) -> f32 {
    1.0 - (-1.5 * exposure.max(0.0)).exp()
}

fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    std::array::from_fn(|i| a[i] + (b[i] - a[i]) * t.clamp(0.0, 1.0))
}

fn rgb(c: [f32; 3]) -> Rgb<u8> {
    Rgb(c.map(|v| v.round().clamp(0.0, 255.0) as u8))
}

fn to_pixel(p: Vec3) -> (i64, i64) {
    let s = SIZE as f32 / (2.0 * HALF);
    (((p.x + HALF) * s) as i64, ((p.z + HALF) * s) as i64)
}

fn to_world(px: u32, py: u32, y: f32) -> Vec3 {
    let s = 2.0 * HALF / SIZE as f32;
    Vec3::new(
        (px as f32 + 0.5) * s - HALF,
        y,
        (py as f32 + 0.5) * s - HALF,
    )
}

fn disc(img: &mut RgbImage, center: Vec3, radius: i64, color: [f32; 3]) {
    let (cx, cy) = to_pixel(center);
    for dy in -radius..=radius {
        for dx in -radius..=radius {
            let (x, y) = (cx + dx, cy + dy);
            if dx * dx + dy * dy <= radius * radius
                && (0..SIZE as i64).contains(&x)
                && (0..SIZE as i64).contains(&y)
            {
                img.put_pixel(x as u32, y as u32, rgb(color));
            }
        }
    }
}

fn segment(img: &mut RgbImage, a: Vec3, b: Vec3, width: i64, color: [f32; 3]) {
    let steps = (to_pixel(a).0 - to_pixel(b).0)
        .abs()
        .max((to_pixel(a).1 - to_pixel(b).1).abs())
        .max(1);
    for i in 0..=steps {
        disc(img, a.lerp(b, i as f32 / steps as f32), width, color);
    }
}

/// Everything the picture needs, read from the world after the run.
#[derive(SystemParam)]
struct Scene<'w, 's> {
    query: ShadowQuery<'w>,
    occluders: Query<'w, 's, (&'static Occluder, &'static GlobalTransform)>,
    viewers: Query<'w, 's, (Entity, &'static GlobalTransform), With<Viewer>>,
    lights: Query<'w, 's, (&'static ShadowLight, &'static GlobalTransform)>,
    walkers: Query<'w, 's, &'static Walker>,
    trail: Res<'w, Trail>,
}

/// The level from above: exposure of the ground, occluder tops, view cones, lights and the path.
fn draw(world: &mut World) -> std::io::Result<RgbImage> {
    let mut state = SystemState::<Scene>::new(world);
    let Scene {
        query,
        occluders,
        viewers,
        lights,
        walkers,
        trail,
    } = state.get(world).map_err(std::io::Error::other)?;
    let tops: Vec<_> = occluders
        .iter()
        .map(|(o, t)| o.world_bounds(t))
        .filter(|b| b.max.y > 0.01)
        .collect();

    let mut img = RgbImage::new(SIZE, SIZE);
    for py in 0..SIZE {
        for px in 0..SIZE {
            let ground = to_world(px, py, 0.02);
            let top = tops
                .iter()
                .filter(|b| {
                    ground.x >= b.min.x
                        && ground.x <= b.max.x
                        && ground.z >= b.min.z
                        && ground.z <= b.max.z
                })
                .map(|b| b.max.y)
                .fold(None, |m: Option<f32>, h| Some(m.map_or(h, |m| m.max(h))));
            let mut color = match top {
                Some(h) => mix([70.0; 3], [150.0; 3], h / 4.0),
                None => {
                    let e = query
                        .probe(&[ground], Some(Vec3::Y))
                        .map_or(0.0, |e| e.total());
                    mix([18.0, 20.0, 42.0], [250.0, 226.0, 150.0], tone(e))
                }
            };
            if top.is_none() {
                let chest = to_world(px, py, 1.2);
                let watched = viewers
                    .iter()
                    .any(|(eye, _)| query.can_see(eye, chest).unwrap_or(false));
                if watched {
                    color = mix(color, [230.0, 40.0, 40.0], 0.45);
                }
            }
            img.put_pixel(px, py, rgb(color));
        }
    }

    for walker in &walkers {
        if walker.height > 0.0 {
            let mut route: Vec<Vec3> = walker
                .path
                .iter()
                .map(|p| Vec3::new(p.x, 0.0, p.y))
                .collect();
            if walker.looped {
                route.extend(route.first().copied());
            }
            for w in route.windows(2) {
                segment(&mut img, w[0], w[1], 0, [160.0, 70.0, 70.0]);
            }
        }
    }
    for (light, at) in &lights {
        // The sun has no position to draw.
        if !matches!(light.kind, ShadowLightKind::Directional { .. }) {
            disc(&mut img, at.translation(), 5, [255.0, 240.0, 90.0]);
        }
    }
    for (_, eye) in &viewers {
        let at = eye.translation();
        segment(
            &mut img,
            at,
            at + *eye.forward() * 2.5,
            1,
            [255.0, 60.0, 60.0],
        );
        disc(&mut img, at, 6, [200.0, 20.0, 20.0]);
    }
    for w in trail.0.windows(2) {
        let (a, e, _) = w[0];
        let (b, _, _) = w[1];
        segment(
            &mut img,
            a,
            b,
            2,
            mix([40.0, 220.0, 90.0], [255.0, 40.0, 40.0], tone(e)),
        );
    }
    for &(at, _, sighted) in &trail.0 {
        match sighted {
            Sighted::No => {}
            Sighted::InTheDark => {
                disc(&mut img, at, 4, [150.0; 3]);
                disc(&mut img, at, 2, [40.0, 220.0, 90.0]);
            }
            Sighted::Spotted => {
                disc(&mut img, at, 4, [255.0; 3]);
                disc(&mut img, at, 2, [255.0, 40.0, 40.0]);
            }
        }
    }
    if let (Some(first), Some(last)) = (trail.0.first(), trail.0.last()) {
        disc(&mut img, first.0, 5, [40.0, 220.0, 90.0]);
        disc(&mut img, last.0, 5, [90.0, 160.0, 255.0]);
    }
    Ok(img)
}
