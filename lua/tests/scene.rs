//! `penumbra.scene()` from Lua: geometry (boxes, meshes, OBJ files), lights, eyes, the queries
//! (checked against the engine called directly) and the pictures; every function's wrong-type
//! and out-of-range arguments give a clear error. The scripts run under Luau and Lua 5.4.

mod support;

use glam::Vec3;
use penumbra_core::shadow::{
    Light, Occluder, PcfKernel, Scene, ShadowMap, Viewer, exposure, exposure_part,
};
use support::{eval, fails_with, run, runtime, write};

/// A 20 m floor with a 2 m box on it, a sun and a spot light, in Lua.
const LEVEL: &str = "local scene = penumbra.scene()\n\
    scene:addBox({-10, -1, -10}, {10, 0, 10})\n\
    scene:addBox({x = -1, y = 0, z = -1}, {x = 1, y = 2, z = 1})\n\
    local sun = scene:addLight({kind = 'directional', name = 'sun', direction = {0.3, -1, 0.2}, \
                                intensity = 0.5, resolution = 512})\n\
    local lamp = scene:addLight({kind = 'spot', position = {4, 5, 4}, direction = {0, -1, 0}, \
                                 angle = 80, range = 15, intensity = 20, resolution = 256, \
                                 kernel = '3x3'})\n";

/// The same level built in Rust.
fn level() -> (Scene, Vec<ShadowMap>) {
    let mut scene = Scene::default();
    scene.add(Occluder::cuboid(
        Vec3::new(-10.0, -1.0, -10.0),
        Vec3::new(10.0, 0.0, 10.0),
    ));
    scene.add(Occluder::cuboid(
        Vec3::new(-1.0, 0.0, -1.0),
        Vec3::new(1.0, 2.0, 1.0),
    ));
    let sun = Light::directional(Vec3::new(0.3, -1.0, 0.2), 0.5).with_resolution(512);
    let lamp = Light::spot(
        Vec3::new(4.0, 5.0, 4.0),
        Vec3::new(0.0, -1.0, 0.0),
        40f32.to_radians(),
        15.0,
        20.0,
    )
    .with_resolution(256)
    .with_kernel(PcfKernel::PCF_3X3);
    let lights = [sun, lamp]
        .into_iter()
        .map(|l| ShadowMap::render(l, &scene).unwrap())
        .collect();
    (scene, lights)
}

/// Points on the floor and in the air, some under the box, some in the lamp's cone.
fn points() -> Vec<[f32; 3]> {
    let mut out = Vec::new();
    for i in 0..9 {
        for j in 0..9 {
            let (x, z) = (-6.0 + 1.5 * i as f32, -6.0 + 1.5 * j as f32);
            out.push([x, 0.0, z]);
            out.push([x + 0.25, 0.7, z - 0.25]);
        }
    }
    out
}

fn lua_points(points: &[[f32; 3]]) -> String {
    let items: Vec<String> = points
        .iter()
        .map(|p| format!("{{{}, {}, {}}}", p[0], p[1], p[2]))
        .collect();
    format!("local points = {{{}}}\n", items.join(", "))
}

// ---- queries --------------------------------------------------------------------------------

#[test]
fn light_at_is_dark_under_a_box_and_lit_in_the_open() {
    let (rt, _) = runtime("scene-light-at");
    let (under, open, sun, lamp, n): (f32, f32, f32, f32, usize) = eval(
        &rt,
        &format!(
            "{LEVEL}local under = scene:lightAt({{0, 0, 0}})\n\
             local open = scene:lightAt({{-6, 0, -6}}, {{0, 1, 0}})\n\
             local n = 0\n\
             for _ in pairs(open.lights) do n = n + 1 end\n\
             return under.total, open.total, open.lights.sun, open.lights.spot2, n"
        ),
    );
    assert_eq!(under, 0.0);
    assert_eq!((open, sun, lamp, n), (0.5, 0.5, 0.0, 2));
}

#[test]
fn light_at_and_its_batch_give_the_engines_exposure_bit_for_bit() {
    let (rt, _) = runtime("scene-exposure");
    let (_, lights) = level();
    let pts = points();
    for normal in [None, Some([0.0f32, 1.0, 0.0])] {
        let arg = normal.map_or("nil".to_owned(), |n| {
            format!("{{{}, {}, {}}}", n[0], n[1], n[2])
        });
        let (single, batch, parts): (Vec<f32>, Vec<f32>, Vec<f32>) = eval(
            &rt,
            &format!(
                "{LEVEL}{}local single, parts = {{}}, {{}}\n\
                 for i, p in ipairs(points) do\n\
                   local r = scene:lightAt(p, {arg})\n\
                   single[i] = r.total\n\
                   parts[2 * i - 1], parts[2 * i] = r.lights.sun, r.lights.spot2\n\
                 end\n\
                 return single, scene:lightAtBatch(points, {arg}), parts",
                lua_points(&pts)
            ),
        );
        let normal = normal.map(Vec3::from);
        for (i, p) in pts.iter().enumerate() {
            let want = exposure(&lights, Vec3::from(*p), normal);
            assert_eq!(single[i].to_bits(), want.to_bits(), "{p:?}");
            assert_eq!(batch[i].to_bits(), want.to_bits(), "batch {p:?}");
            let part = exposure_part(&lights[0], Vec3::from(*p), normal);
            assert_eq!(parts[2 * i], part, "sun at {p:?}");
        }
        assert!(single.contains(&0.0) && single.iter().any(|&e| e > 1.0));
    }
}

#[test]
fn lit_fraction_takes_a_light_name_or_handle() {
    let (rt, _) = runtime("scene-lit-fraction");
    let (_, lights) = level();
    let (a, b, c): (f32, f32, f32) = eval(
        &rt,
        &format!(
            "{LEVEL}return scene:litFraction('sun', {{0, 0, 0}}), \
             scene:litFraction(sun, {{-6, 0, -6}}, {{0, 1, 0}}), \
             scene:litFraction(lamp, {{3, 0, 3.5}})"
        ),
    );
    assert_eq!((a, b), (0.0, 1.0));
    let want = lights[1].lit_fraction(Vec3::new(3.0, 0.0, 3.5), None);
    assert_eq!(c, want);
}

#[test]
fn adding_geometry_drops_the_rendered_maps() {
    let (rt, _) = runtime("scene-invalidate");
    let (before, after): (f32, f32) = eval(
        &rt,
        &format!(
            "{LEVEL}local before = scene:lightAt({{-6, 0, -6}}).total\n\
             scene:addBox({{-8, 3, -8}}, {{-4, 3.5, -4}})\n\
             return before, scene:lightAt({{-6, 0, -6}}).total"
        ),
    );
    assert_eq!((before, after), (0.5, 0.0));
}

/// The scene's maps are drawn tile by tile as queries need them and redrawn where a new box
/// lands: after every addition, the batch answers equal those of maps freshly rendered whole
/// from the same boxes.
#[test]
fn boxes_added_between_queries_give_the_answers_of_freshly_rendered_maps() {
    let (rt, _) = runtime("scene-tiles");
    let (mut scene, maps) = level();
    let lights: Vec<Light> = maps.iter().map(|m| m.light().clone()).collect();
    let pts = points();
    // Boxes on the floor, inside the first fit (so the sun's square stays), one per step.
    let boxes: Vec<([f32; 3], [f32; 3])> = (0..6)
        .map(|k| {
            let (x, z) = (-7.0 + 2.3 * k as f32, 5.0 - 1.9 * k as f32);
            ([x, 0.0, z], [x + 0.9, 0.4 + 0.3 * k as f32, z + 1.4])
        })
        .collect();
    let lua_boxes: Vec<String> = boxes
        .iter()
        .map(|(a, b)| {
            format!(
                "{{{{{}, {}, {}}}, {{{}, {}, {}}}}}",
                a[0], a[1], a[2], b[0], b[1], b[2]
            )
        })
        .collect();
    let results: Vec<Vec<f32>> = eval(
        &rt,
        &format!(
            "{LEVEL}{}local boxes = {{{}}}\n\
             local out = {{}}\n\
             for i, b in ipairs(boxes) do\n\
               -- a few answers first, so some tiles are drawn before the box lands\n\
               scene:lightAt(points[i * 7], {{0, 1, 0}})\n\
               scene:addBox(b[1], b[2])\n\
               out[i] = scene:lightAtBatch(points, {{0, 1, 0}})\n\
             end\n\
             return out",
            lua_points(&pts),
            lua_boxes.join(", ")
        ),
    );
    assert_eq!(results.len(), boxes.len());
    let mut shadowed = 0;
    for (step, (lo, hi)) in boxes.iter().enumerate() {
        scene.add(Occluder::cuboid(Vec3::from(*lo), Vec3::from(*hi)));
        let fresh: Vec<ShadowMap> = lights
            .iter()
            .map(|l| ShadowMap::render(l.clone(), &scene).unwrap())
            .collect();
        for (i, p) in pts.iter().enumerate() {
            let want = exposure(&fresh, Vec3::from(*p), Some(Vec3::Y));
            assert_eq!(
                results[step][i].to_bits(),
                want.to_bits(),
                "step {step}, {p:?}"
            );
            shadowed += usize::from(want == 0.0);
        }
    }
    assert!(shadowed > 0);
}

#[test]
fn can_see_is_false_through_a_wall_and_true_in_the_open() {
    let (rt, _) = runtime("scene-can-see");
    let (wall, open, behind, aside, around, fraction): (bool, bool, bool, bool, bool, f32) = eval(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addBox({-10, -1, -10}, {10, 0, 10})\n\
         scene:addBox({-1, 0, 4}, {1, 3, 4.5})\n\
         local guard = scene:addEye({name = 'guard', position = {0, 1.7, 0}, direction = {0, 0, 1}, \
                                     fov = 90, range = 15})\n\
         assert(guard.name == 'guard' and guard.fov == 90 and guard.range == 15)\n\
         assert(guard.position.y > 1.69 and guard.direction.z == 1)\n\
         assert(scene:eye('guard') ~= nil and scene:eye('nobody') == nil)\n\
         local wall = scene:canSee(guard, {0, 1, 6})\n\
         local open = scene:canSee(guard, {3, 1, 6})\n\
         local behind = scene:canSee(guard, {0, 1, -5})\n\
         local aside = scene:canSee({0, 1.7, 0}, {0, 1, -5}, {direction = {0, 0, -1}, fov = 60})\n\
         local around = scene:canSee({0, 1.7, 0}, {0, 1, -5}, {range = 8})\n\
         local _, fraction = scene:canSee(guard, {1, 1, 6}, {radius = 0.5})\n\
         return wall, open, behind, aside, around, fraction",
    );
    assert!(!wall && open && !behind && aside && around);
    // The same eye in Rust sees the same part of the half-hidden target.
    let mut scene = Scene::default();
    scene.add(Occluder::cuboid(
        Vec3::new(-10.0, -1.0, -10.0),
        Vec3::new(10.0, 0.0, 10.0),
    ));
    scene.add(Occluder::cuboid(
        Vec3::new(-1.0, 0.0, 4.0),
        Vec3::new(1.0, 3.0, 4.5),
    ));
    let eye = Viewer::new(Vec3::new(0.0, 1.7, 0.0), Vec3::Z, 90f32.to_radians(), 15.0)
        .render(&scene)
        .unwrap();
    assert_eq!(
        fraction,
        eye.visible_fraction(Vec3::new(1.0, 1.0, 6.0), 0.5)
    );
    assert!(fraction > 0.0 && fraction < 1.0);
}

#[test]
fn probe_path_walks_the_polyline_at_the_spacing() {
    let (rt, _) = runtime("scene-probe-path");
    let (distances, xs, zs, same): (Vec<f32>, Vec<f32>, Vec<f32>, bool) = eval(
        &rt,
        &format!(
            "{LEVEL}local rows = scene:probePath({{{{-6, 0, -6}}, {{4, 0, -6}}, {{4, 0, -1}}}}, 4, \
                                                  {{normal = {{0, 1, 0}}}})\n\
             local d, xs, zs, same = {{}}, {{}}, {{}}, true\n\
             for i, row in ipairs(rows) do\n\
               d[i], xs[i], zs[i] = row.distance, row.pos.x, row.pos.z\n\
               local p = {{row.pos.x, row.pos.y, row.pos.z}}\n\
               same = same and scene:lightAt(p, {{0, 1, 0}}).total == row.exposure\n\
             end\n\
             return d, xs, zs, same"
        ),
    );
    assert_eq!(distances, [0.0, 4.0, 8.0, 12.0, 15.0]);
    assert_eq!(xs, [-6.0, -2.0, 2.0, 4.0, 4.0]);
    assert_eq!(zs, [-6.0, -6.0, -6.0, -4.0, -1.0]);
    assert!(same);
    let one: usize = eval(
        &rt,
        "local s = penumbra.scene()\ns:addBox({0, 0, 0}, {1, 1, 1})\n\
         return #s:probePath({{5, 0, 5}}, 1)",
    );
    assert_eq!(one, 1);
}

#[test]
fn point_lights_shadow_all_around() {
    let (rt, _) = runtime("scene-point");
    let (lit, shadowed, kind): (f32, f32, String) = eval(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addBox({-10, -1, -10}, {10, 0, 10})\n\
         scene:addBox({2, 0, -1}, {3, 3, 1})\n\
         local bulb = scene:addLight({kind = 'point', name = 'bulb', position = {0, 1, 0}, \
                                      range = 12, intensity = 5, resolution = 128})\n\
         return scene:litFraction('bulb', {-4, 0, 0}, {0, 1, 0}), \
                scene:litFraction(bulb, {5, 0, 0}, {0, 1, 0}), bulb.kind",
    );
    assert_eq!((lit, shadowed, kind.as_str()), (1.0, 0.0, "point"));
}

// ---- geometry -------------------------------------------------------------------------------

#[test]
fn meshes_with_a_transform_cast_shadows_like_boxes() {
    let (rt, _) = runtime("scene-mesh");
    let (under, open, tris, occluders): (f32, f32, usize, usize) = eval(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addBox({-10, -1, -10}, {10, 0, 10})\n\
         -- a unit quad (two triangles, indices from 1), flat numbers, scaled and lifted\n\
         scene:addMesh({-0.5, 0, -0.5,  0.5, 0, -0.5,  0.5, 0, 0.5,  -0.5, 0, 0.5},\n\
                       {1, 2, 3, 1, 3, 4},\n\
                       {position = {3, 2, 3}, scale = 2, rotation = {0, 45, 0}})\n\
         scene:addLight({kind = 'directional', direction = {0, -1, 0}, resolution = 256})\n\
         return scene:lightAt({3, 0, 3}).total, scene:lightAt({-5, 0, -5}).total, \
                scene.triangles, scene.occluders",
    );
    assert_eq!((under, open, tris, occluders), (0.0, 1.0, 14, 2));
}

#[test]
fn obj_files_load_from_the_root_with_polygons_and_negative_indices() {
    let (rt, dir) = runtime("scene-obj");
    write(
        &dir,
        "root/models/slab.obj",
        "# a 2x2 slab, top face as a quad\nmtllib slab.mtl\no slab\n\
         v -1 1 -1\nv 1 1 -1\nv 1 1 1\nv -1 1 1\nvt 0 0\nvn 0 1 0\n\
         f 1/1/1 2/1/1 3/1/1 4/1/1\nf -4 -2 -3\n",
    );
    let (tris, under, open): (usize, f32, f32) = eval(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addBox({-10, -1, -10}, {10, 0, 10})\n\
         local tris = scene:loadObj('models/slab.obj', {position = {2, 0, 0}})\n\
         scene:addLight({kind = 'directional', direction = {0, -1, 0}, resolution = 256})\n\
         return tris, scene:lightAt({2, 0, 0}).total, scene:lightAt({-2, 0, 0}).total",
    );
    assert_eq!((tris, under, open), (3, 0.0, 1.0));
}

#[test]
fn obj_errors_name_the_file_and_line() {
    let (rt, dir) = runtime("scene-obj-errors");
    write(
        &dir,
        "root/bad.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 7\n",
    );
    write(&dir, "root/empty.obj", "v 0 0 0\n");
    write(&dir, "root/nan.obj", "v 0 0 0\nv 0 nan 0\n");
    let s = "local scene = penumbra.scene()\n";
    fails_with(
        &rt,
        &format!("{s}scene:loadObj('bad.obj')"),
        &[
            "test.luau:2: Scene:loadObj: bad.obj:5: face vertex index 7 does not exist (3 vertices so far)",
        ],
    );
    fails_with(
        &rt,
        &format!("{s}scene:loadObj('nan.obj')"),
        &["Scene:loadObj: nan.obj:2: vertex y = \"nan\" is not a finite number"],
    );
    fails_with(
        &rt,
        &format!("{s}scene:loadObj('empty.obj')"),
        &["Scene:loadObj: empty.obj: no faces"],
    );
    fails_with(
        &rt,
        &format!("{s}scene:loadObj('missing.obj')"),
        &["Scene:loadObj: path:", "missing.obj: No such file"],
    );
    fails_with(
        &rt,
        &format!("{s}scene:loadObj('../outside.obj')"),
        &["Scene:loadObj: path:", "goes up with '..'"],
    );
    fails_with(
        &rt,
        &format!("{s}scene:loadObj('bad.obj', {{size = 2}})"),
        &["Scene:loadObj: transform: unknown field the string \"size\""],
    );
}

#[test]
fn geometry_arguments_are_checked() {
    let (rt, _) = runtime("scene-geometry-errors");
    let s = "local scene = penumbra.scene()\n";
    let cases: [(&str, &[&str]); 12] = [
        (
            "scene:addBox('a', {1, 1, 1})",
            &["Scene:addBox: min: expected a vector, {x, y, z}"],
        ),
        (
            "scene:addBox({1, 1}, {1, 1, 1})",
            &["Scene:addBox: min: expected", "got a table of 2"],
        ),
        (
            "scene:addBox({0, 0, 0}, {x = 1, y = 1})",
            &["Scene:addBox: max:", "without `z`"],
        ),
        (
            "scene:addBox({0, 0, 0}, {1, 'up', 1})",
            &["Scene:addBox: max[2]: expected a number"],
        ),
        (
            "scene:addBox({0, 0, 0}, {1, 1, math.huge})",
            &["Scene:addBox: max = (1, 1, inf): expected finite"],
        ),
        (
            "scene.addBox({0, 0, 0}, {1, 1, 1})",
            &["Scene:addBox: call it as a method, with ':'"],
        ),
        (
            "scene:addMesh({0, 0, 0, 1, 0, 0, 0, 1, 0}, {1, 2})",
            &["Scene:addMesh: indices: expected three indices per triangle, got 2"],
        ),
        (
            "scene:addMesh({0, 0, 0, 1, 0, 0, 0, 1, 0}, {1, 2, 4})",
            &["Scene:addMesh: indices[3] = 4: expected 1 to 3 (indices start at 1)"],
        ),
        (
            "scene:addMesh({0, 0, 0, 1, 0, 0, 0, 1, 0}, {0, 1, 2})",
            &["indices[1] = 0: expected 1 to 3"],
        ),
        (
            "scene:addMesh({0, 0, 0, 1, 0}, {1, 1, 1})",
            &["Scene:addMesh: positions: a flat array holds three numbers per point, but has 5"],
        ),
        (
            "scene:addMesh({{0, 0, 0}}, {1, 1, 1}, {scale = 'big'})",
            &["Scene:addMesh: transform.scale: expected a vector"],
        ),
        ("penumbra.scene(1)", &["penumbra.scene: takes no arguments"]),
    ];
    for (source, parts) in cases {
        fails_with(&rt, &format!("{s}{source}"), parts);
    }
}

#[test]
fn light_descriptions_are_checked() {
    let (rt, _) = runtime("scene-light-errors");
    let s = "local scene = penumbra.scene()\nscene:addBox({0, 0, 0}, {1, 1, 1})\n";
    let cases: [(&str, &[&str]); 14] = [
        (
            "scene:addLight('sun')",
            &["Scene:addLight: desc: expected a table, got the string \"sun\""],
        ),
        (
            "scene:addLight({direction = {0, -1, 0}})",
            &["desc.kind is missing"],
        ),
        (
            "scene:addLight({kind = 'area'})",
            &["desc.kind: \"area\" is not one of \"directional\", \"spot\", \"point\""],
        ),
        (
            "scene:addLight({kind = 'directional'})",
            &["desc.direction is missing: a directional light needs one"],
        ),
        (
            "scene:addLight({kind = 'directional', direction = {0, 0, 0}})",
            &["desc.direction: the direction is zero"],
        ),
        (
            "scene:addLight({kind = 'directional', direction = {0, -1, 0}, position = {0, 5, 0}})",
            &["desc.position: a directional light has no position"],
        ),
        (
            "scene:addLight({kind = 'point', position = {0, 5, 0}, direction = {0, -1, 0}})",
            &["desc.direction: a point light has no direction"],
        ),
        (
            "scene:addLight({kind = 'spot', position = {0, 5, 0}, direction = {0, -1, 0}, angle = 200})",
            &["desc.angle = 200: expected the cone's full angle in degrees, in (0, 176]"],
        ),
        (
            "scene:addLight({kind = 'spot', position = {0, 5, 0}, direction = {0, -1, 0}, angle = 60, innerAngle = 90})",
            &["desc.innerAngle = 90"],
        ),
        (
            "scene:addLight({kind = 'point', position = {0, 5, 0}, range = -1})",
            &["desc.range = -1: expected a distance > 0"],
        ),
        (
            "scene:addLight({kind = 'directional', direction = {0, -1, 0}, resolution = 0})",
            &["desc.resolution = 0: expected 1 to 8192 texels"],
        ),
        (
            "scene:addLight({kind = 'directional', direction = {0, -1, 0}, kernel = '4x4'})",
            &["desc.kernel: \"4x4\" is not one of \"2x2\", \"3x3\", \"5x5\""],
        ),
        (
            "scene:addLight({kind = 'directional', direction = {0, -1, 0}, colour = 'red'})",
            &["desc: unknown field the string \"colour\""],
        ),
        (
            "scene:addLight({kind = 'directional', name = 'a', direction = {0, -1, 0}})\n\
          scene:addLight({kind = 'point', name = 'a', position = {0, 5, 0}})",
            &["desc.name: the scene already has a light named \"a\""],
        ),
    ];
    for (source, parts) in cases {
        fails_with(&rt, &format!("{s}{source}"), parts);
    }
}

#[test]
fn query_arguments_are_checked() {
    let (rt, _) = runtime("scene-query-errors");
    let s = "local scene = penumbra.scene()\nscene:addBox({-5, -1, -5}, {5, 0, 5})\n\
             local sun = scene:addLight({kind = 'directional', name = 'sun', direction = {0, -1, 0}, \
                                         resolution = 64})\n\
             local guard = scene:addEye({name = 'g', position = {0, 2, 0}, direction = {1, 0, 0}})\n";
    let cases: [(&str, &[&str]); 16] = [
        (
            "scene:lightAt()",
            &[
                "Scene:lightAt: pos: expected a vector, {x, y, z} or {x = .., y = .., z = ..}, got nil",
            ],
        ),
        (
            "scene:lightAt({0, 0, 0}, 'up')",
            &["Scene:lightAt: normal: expected a vector"],
        ),
        (
            "scene:lightAtBatch(5)",
            &["Scene:lightAtBatch: points: expected a table, got the number 5"],
        ),
        (
            "scene:lightAtBatch({{0, 0, 0}, {1, 'a', 0}})",
            &["Scene:lightAtBatch: points[2][2]: expected a number"],
        ),
        (
            "scene:litFraction('moon', {0, 0, 0})",
            &["Scene:litFraction: light: the scene has no light named \"moon\" (it has \"sun\")"],
        ),
        (
            "scene:litFraction(3, {0, 0, 0})",
            &["Scene:litFraction: light: expected a light name or a Light, got the number 3"],
        ),
        (
            "local other = penumbra.scene()\n\
          other:addBox({0, 0, 0}, {1, 1, 1})\n\
          other:litFraction(sun, {0, 0, 0})",
            &["Scene:litFraction: light: the light belongs to another scene"],
        ),
        (
            "scene:canSee(guard, {1, 1, 1}, {fov = 30})",
            &["Scene:canSee: params.fov: the eye was given its fov by scene:addEye"],
        ),
        (
            "scene:canSee({0, 2, 0}, {1, 1, 1}, {fov = 90})",
            &["params.fov = 90 needs a direction"],
        ),
        (
            "scene:canSee({0, 2, 0}, {1, 1, 1}, {direction = {1, 0, 0}, fov = 400})",
            &["params.fov = 400: expected degrees in (0, 360]"],
        ),
        (
            "scene:canSee({0, 2, 0}, {1, 1, 1}, {radius = -1})",
            &["params.radius = -1: expected >= 0"],
        ),
        (
            "scene:canSee(sun, {1, 1, 1})",
            &["Scene:canSee: eye: expected an Eye, an eye's name or a position, got a Light"],
        ),
        (
            "scene:addEye({name = 'g', position = {0, 2, 0}})",
            &["Scene:addEye: desc.name: the scene already has an eye named \"g\""],
        ),
        (
            "scene:addEye({direction = {1, 0, 0}})",
            &["Scene:addEye: desc.position is missing"],
        ),
        (
            "scene:probePath({{0, 0, 0}, {1, 0, 0}}, 0)",
            &["Scene:probePath: spacing = 0: expected a distance > 0"],
        ),
        (
            "scene:probePath({}, 1)",
            &["Scene:probePath: points: the path is empty"],
        ),
    ];
    for (source, parts) in cases {
        fails_with(&rt, &format!("{s}{source}"), parts);
    }
    fails_with(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addLight({kind = 'directional', direction = {0, -1, 0}})\n\
         scene:lightAt({0, 0, 0})",
        &[
            "Scene:lightAt: light \"directional1\": the scene has no occluders",
            "`bounds`",
        ],
    );
}

#[test]
fn directional_lights_may_cover_given_bounds() {
    let (rt, _) = runtime("scene-bounds");
    let lit: f32 = eval(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addLight({kind = 'directional', direction = {0, -1, 0}, resolution = 64, \
                         bounds = {min = {-4, -1, -4}, max = {4, 4, 4}}})\n\
         local a = scene:lightAt({0, 0, 0}).total\n\
         scene:addBox({-1, 1, -1}, {1, 2, 1})\n\
         assert(scene:lightAt({0, 0, 0}).total == 0)\n\
         return a",
    );
    assert_eq!(lit, 1.0);
}

#[test]
fn shadow_maps_count_against_the_budget() {
    let (rt, _) = runtime("scene-budget");
    fails_with(
        &rt,
        "local scene = penumbra.scene()\nscene:addBox({0, 0, 0}, {1, 1, 1})\n\
         scene:addLight({kind = 'directional', name = 'sun', direction = {0, -1, 0}, resolution = 8192})\n\
         scene:lightAt({0, 0, 0})",
        &[
            "Scene:lightAt: the shadow map of light \"sun\" of 268435456 bytes does not fit",
            "64 MB",
        ],
    );
    // A picture's working memory counts too: a 2048² sun's map (16 MB) fits, its drawn-tiles
    // picture (12 bytes a texel) does not beside it.
    fails_with(
        &rt,
        "local scene = penumbra.scene()\nscene:addBox({0, 0, 0}, {1, 1, 1})\n\
         scene:addLight({kind = 'directional', name = 'sun', direction = {0, -1, 0}, resolution = 2048})\n\
         scene:lightAt({0, 0, 0})\n\
         scene:saveDrawnTiles('sun', 'tiles.png')",
        &[
            "Scene:saveDrawnTiles: the drawn-tiles picture of 50331648 bytes does not fit",
            "64 MB",
        ],
    );
}

// ---- pictures and files ---------------------------------------------------------------------

fn decode(path: &std::path::Path) -> image::DynamicImage {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(!bytes.is_empty());
    image::load_from_memory_with_format(&bytes, image::ImageFormat::Png).unwrap()
}

#[test]
fn pictures_are_written_as_pngs() {
    let (rt, dir) = runtime("scene-pictures");
    run(
        &rt,
        &format!(
            "{LEVEL}local guard = scene:addEye({{name = 'g', position = {{-6, 1.7, -6}}, \
                                                  direction = {{1, 0, 1}}, fov = 70, range = 14}})\n\
             local rows = scene:probePath({{{{-6, 0, 6}}, {{6, 0, 6}}}}, 2)\n\
             assert(scene:saveShadowMap('sun', 'maps/sun.png') == '{out}/maps/sun.png')\n\
             scene:saveShadowMap(lamp, 'lamp.png')\n\
             scene:addLight({{kind = 'point', name = 'bulb', position = {{0, 3, 4}}, resolution = 32}})\n\
             scene:saveShadowMap('bulb', 'bulb.png')\n\
             scene:saveLitMap('lit.png', {{width = 200, probes = rows, threshold = 0.3}})\n\
             scene:saveLitMap('lit-part.png', {{min = {{-5, 0, -5}}, max = {{5, 0, 0}}, width = 100, \
                                              height = 0.5, normal = false, peak = 2}})\n\
             scene:saveView(guard, 'view.png', {{width = 120, targets = rows}})\n\
             scene:saveView(guard, 'view-depth.png', {{mode = 'depth'}})\n\
             scene:saveView({{0, 1.7, 5}}, 'around.png', {{range = 8, width = 64}})\n\
             scene:saveView({{0, 1.7, 5}}, 'around-depth.png', {{range = 8, resolution = 16, mode = 'depth'}})",
            out = dir.join("out").display()
        ),
    );
    let out = dir.join("out");
    let size = |name: &str| {
        let img = decode(&out.join(name));
        (img.width(), img.height())
    };
    assert_eq!(size("maps/sun.png"), (512, 512));
    assert_eq!(size("lamp.png"), (256, 256));
    assert_eq!(size("bulb.png"), (6 * 32, 32));
    assert_eq!(size("lit.png"), (200, 200));
    assert_eq!(size("lit-part.png"), (100, 50));
    assert_eq!(size("view.png"), (120, 120));
    assert_eq!(size("view-depth.png"), (512, 512));
    assert_eq!(size("around.png"), (64, 64));
    assert_eq!(size("around-depth.png"), (6 * 16, 16));
}

/// `tileStats` counts what the queries drew of a map (asking draws nothing), and
/// `saveDrawnTiles` shows those texels warm over the depths; it draws the rest to do so.
#[test]
fn tile_stats_and_the_drawn_tiles_picture_show_what_queries_drew() {
    let (rt, dir) = runtime("scene-drawn-tiles");
    let stats = "local function stats(light)\n\
                     local s = scene:tileStats(light)\n\
                     return s.resolution, s.slices, s.tiles, s.tilesDrawn, s.rowsDrawn, \
                            s.texelsDrawn\n\
                 end\n";
    let (before, one, lamp, after): (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) = eval(
        &rt,
        &format!(
            "{LEVEL}{stats}\
             local before = {{stats('sun')}}\n\
             scene:litFraction('sun', {{6, 0, -6}})\n\
             local one, lamp = {{stats(sun)}}, {{stats(lamp)}}\n\
             assert(scene:saveDrawnTiles('sun', 'drawn.png') == '{out}/drawn.png')\n\
             return before, one, lamp, {{stats('sun')}}",
            out = dir.join("out").display()
        ),
    );
    assert_eq!(before, [512, 1, 256, 0, 0, 0]);
    let [_, _, _, tiles, rows, texels] = one[..] else {
        panic!("{one:?}")
    };
    assert!((1..=4).contains(&tiles), "{one:?}");
    assert!((2..4 * 32).contains(&rows), "{one:?}");
    assert_eq!(texels, 32 * rows);
    assert_eq!(lamp, [256, 1, 64, 0, 0, 0], "the lamp was not asked");
    assert_eq!(after, [512, 1, 256, 256, 256 * 32, 512 * 512]);
    let img = decode(&dir.join("out/drawn.png")).into_rgb8();
    assert_eq!(img.dimensions(), (512, 512));
    let warm = img.pixels().filter(|p| p.0[0] > p.0[2]).count();
    assert_eq!(
        warm, texels as usize,
        "warm pixels are the texels drawn before"
    );

    // A point light's six cube faces, side by side; a map no query made yet counts nothing.
    let (unmade, bulb): (Vec<u32>, Vec<u32>) = eval(
        &rt,
        &format!(
            "{LEVEL}{stats}\
             scene:addLight({{kind = 'point', name = 'bulb', position = {{0, 3, 4}}, \
                              resolution = 40}})\n\
             local unmade = {{stats('bulb')}}\n\
             scene:litFraction('bulb', {{3, 0, 4}})\n\
             scene:litFraction('bulb', {{0, 0, 9}})\n\
             local bulb = {{stats('bulb')}}\n\
             scene:saveDrawnTiles('bulb', 'bulb.png')\n\
             return unmade, bulb"
        ),
    );
    // 40 texels: a whole tile and one of 8 along each side of each face.
    assert_eq!(unmade, [40, 6, 24, 0, 0, 0]);
    let [_, _, _, tiles, _, texels] = bulb[..] else {
        panic!("{bulb:?}")
    };
    assert!((2..24).contains(&tiles), "{bulb:?}");
    let img = decode(&dir.join("out/bulb.png")).into_rgb8();
    assert_eq!(img.dimensions(), (6 * 40, 40));
    let warm = img.pixels().filter(|p| p.0[0] > p.0[2]).count();
    assert_eq!(warm, texels as usize, "{bulb:?}");
}

#[test]
fn picture_arguments_are_checked() {
    let (rt, _) = runtime("scene-picture-errors");
    let s = format!("{LEVEL}local guard = scene:addEye({{position = {{0, 2, 0}}}})\n");
    let cases: [(&str, &[&str]); 10] = [
        (
            "scene:saveDrawnTiles('moon', 'm.png')",
            &["Scene:saveDrawnTiles: light: the scene has no light named \"moon\""],
        ),
        ("scene:tileStats(42)", &["Scene:tileStats: light:"]),
        (
            "scene:saveShadowMap('moon', 'm.png')",
            &["Scene:saveShadowMap: light: the scene has no light named \"moon\""],
        ),
        (
            "scene:saveShadowMap('sun')",
            &["Scene:saveShadowMap: path: expected a string, got nil"],
        ),
        (
            "scene:saveShadowMap('sun', '../x.png')",
            &["Scene:saveShadowMap: path:", "goes up with '..'"],
        ),
        (
            "scene:saveLitMap('a.png', {width = 5})",
            &["Scene:saveLitMap: options.width = 5: expected 16 to 4096 pixels"],
        ),
        (
            "scene:saveLitMap('a.png', {min = {0, 0, 0}})",
            &["options.min and options.max go together"],
        ),
        (
            "scene:saveLitMap('a.png', {min = {0, 0, 0}, max = {0, 0, 5}})",
            &["in x and z is empty"],
        ),
        (
            "scene:saveLitMap('a.png', {probes = {{pos = 'here'}}})",
            &["options.probes[1].pos: expected a vector"],
        ),
        (
            "scene:saveView(guard, 'v.png', {mode = 'xray'})",
            &["Scene:saveView: options.mode: \"xray\" is not one of \"map\", \"depth\""],
        ),
    ];
    for (source, parts) in cases {
        fails_with(&rt, &format!("{s}{source}"), parts);
    }
    let dir = support::scratch("scene-picture-no-out");
    let no_out =
        penumbra_lua::Runtime::new(penumbra_lua::RuntimeOptions::new(dir.join("root"))).unwrap();
    fails_with(
        &no_out,
        &format!("{LEVEL}scene:saveShadowMap('sun', 's.png')"),
        &["Scene:saveShadowMap: no output folder"],
    );
}

#[test]
fn write_csv_writes_named_columns_and_expands_positions() {
    let (rt, dir) = runtime("scene-csv");
    run(
        &rt,
        &format!(
            "{LEVEL}local rows = scene:probePath({{{{-6, 0, -6}}, {{-6, 0, 0}}}}, 3)\n\
             rows[2].note = 'under \"the\" lamp, maybe'\n\
             assert(penumbra.writeCsv('probes.csv', rows) == '{out}/probes.csv')\n\
             penumbra.writeCsv('picked.csv', rows, {{'exposure', 'pos', 'note'}})\n\
             local light = scene:lightAt({{-6, 0, -6}})\n\
             penumbra.writeCsv('lights.csv', {{light}}, {{'total', 'lights.sun', 'lights.spot2'}})\n\
             penumbra.writeCsv('plain.csv', {{{{a = 1, b = true, c = 0.1}}, {{a = 2}}}})",
            out = dir.join("out").display()
        ),
    );
    let read = |name: &str| std::fs::read_to_string(dir.join("out").join(name)).unwrap();
    assert_eq!(
        read("probes.csv"),
        "distance,exposure,pos.x,pos.y,pos.z\n0,0.5,-6,0,-6\n3,0.5,-6,0,-3\n6,0.5,-6,0,0\n"
    );
    assert_eq!(
        read("picked.csv"),
        "exposure,pos.x,pos.y,pos.z,note\n0.5,-6,0,-6,\n\
         0.5,-6,0,-3,\"under \"\"the\"\" lamp, maybe\"\n0.5,-6,0,0,\n"
    );
    assert_eq!(
        read("lights.csv"),
        "total,lights.sun,lights.spot2\n0.5,0.5,0\n"
    );
    assert_eq!(read("plain.csv"), "a,b,c\n1,true,0.1\n2,,\n");
    fails_with(
        &rt,
        "penumbra.writeCsv('x.csv', {{a = {1, 2}}}, {'a'})",
        &["penumbra.writeCsv: rows[1].a: a table is not a CSV cell"],
    );
    fails_with(
        &rt,
        "penumbra.writeCsv('x.csv', {1, 2})",
        &["penumbra.writeCsv: rows[1]: expected a table, got the number 1"],
    );
    fails_with(
        &rt,
        "penumbra.writeCsv('x.csv', {})",
        &["penumbra.writeCsv: no columns"],
    );
    fails_with(
        &rt,
        "penumbra.writeCsv('x.csv', {{a = 1}}, {'a', 2})",
        &["penumbra.writeCsv: columns[2]: expected a string"],
    );
}

#[test]
fn handles_print_what_they_are() {
    let (rt, _) = runtime("scene-tostring");
    let (scene, sun, eye): (String, String, String) = eval(
        &rt,
        &format!(
            "{LEVEL}local eye = scene:addEye({{position = {{0, 2, 0}}}})\n\
             assert(sun.name == 'sun' and sun.kind == 'directional' and sun.resolution == 512)\n\
             assert(sun.position == nil and sun.direction.y == -1 and sun.kernel == '2x2')\n\
             assert(lamp.name == 'spot2' and lamp.position.x == 4 and lamp.intensity == 20)\n\
             assert(eye.fov == 360 and eye.direction == nil and eye.name == 'eye1')\n\
             assert(scene:light('sun').name == 'sun' and scene:light('moon') == nil)\n\
             local lo, hi = scene:bounds()\n\
             assert(lo.x == -10 and hi.y == 2)\n\
             assert(penumbra.scene():bounds() == nil)\n\
             return tostring(scene), tostring(sun), tostring(eye)"
        ),
    );
    assert_eq!(scene, "Scene(2 occluders, 24 triangles, 2 lights, 1 eyes)");
    assert_eq!(
        (sun.as_str(), eye.as_str()),
        ("Light(\"sun\", directional)", "Eye(\"eye1\")")
    );
}

#[test]
fn frame_marks_take_no_arguments() {
    let (rt, _) = runtime("scene-frame-mark");
    run(&rt, "penumbra.frameMark()");
    fails_with(
        &rt,
        "penumbra.frameMark('stage')",
        &["penumbra.frameMark: takes no arguments"],
    );
}

// ---- the shared exposure table (issue 14) ---------------------------------------------------

include!("../../core/tests/data/outside_map.rs");

#[test]
fn the_shared_exposure_table_holds_in_lua() {
    let (rt, _) = runtime("scene-table");
    let rows = table_rows();
    let pts: Vec<[f32; 3]> = rows.iter().map(|r| r.0).collect();
    let (single, batch): (Vec<f32>, Vec<f32>) = eval(
        &rt,
        &format!(
            "local scene = penumbra.scene()\n\
             scene:addBox({{-10, -1, -10}}, {{10, 0, 10}})\n\
             scene:addBox({{-1, 0, -1}}, {{1, 2, 1}})\n\
             scene:addLight({{kind = 'directional', name = 'sun', direction = {{0, -1, 0}}, \
                              intensity = 0.5, resolution = 256, \
                              bounds = {{min = {{-10, -1, -10}}, max = {{10, 2, 10}}}}}})\n\
             scene:addLight({{kind = 'spot', name = 'lamp', position = {{0, 6, 0}}, \
                              direction = {{0, -1, 0}}, angle = 60, range = 10, intensity = 20, \
                              resolution = 128}})\n\
             {}local single = {{}}\n\
             for i, p in ipairs(points) do single[i] = scene:lightAt(p).total end\n\
             return single, scene:lightAtBatch(points)",
            lua_points(&pts)
        ),
    );
    for (i, (p, want, why)) in rows.iter().enumerate() {
        assert_eq!(
            single[i].to_bits(),
            want.to_bits(),
            "{p:?} ({why}): {}",
            single[i]
        );
        assert_eq!(batch[i].to_bits(), want.to_bits(), "batch {p:?} ({why})");
    }
}

/// Top-down pictures outline a mesh by its triangles' silhouette, not its bounding box, and
/// draw probes as points with `joined = false` (issue 17).
#[test]
fn lit_maps_outline_meshes_by_their_silhouette_and_can_draw_points_only() {
    let (rt, dir) = runtime("scene-silhouette");
    run(
        &rt,
        "local scene = penumbra.scene()\n\
         -- A prism over the triangle (0,0) (4,0) (0,4) of the xz plane, 2 high.\n\
         scene:addMesh({{0, 0, 0}, {4, 0, 0}, {0, 0, 4}, {0, 2, 0}, {4, 2, 0}, {0, 2, 4}},\n\
           {1, 3, 2, 4, 5, 6, 1, 2, 5, 1, 5, 4, 2, 3, 6, 2, 6, 5, 3, 1, 4, 3, 4, 6})\n\
         scene:addLight({name = 'sun', kind = 'directional', direction = {0.3, -1, 0.2}})\n\
         local probes = {{pos = {-0.5, 0, 4.5}}, {pos = {4.5, 0, 4.5}}}\n\
         scene:saveLitMap('joined.png', {min = {-1, 0, -1}, max = {5, 0, 5}, width = 120, probes = probes})\n\
         scene:saveLitMap('points.png', {min = {-1, 0, -1}, max = {5, 0, 5}, width = 120, probes = probes, joined = false})",
    );
    let out = dir.join("out");
    let joined = decode(&out.join("joined.png")).to_rgb8();
    let points = decode(&out.join("points.png")).to_rgb8();
    let outline = image::Rgb([80u8, 200, 255]);
    // 20 pixels a unit from (-1, -1). The box corner (4, 4) and the middle of its right side
    // (4, 2) lie outside the triangle: no outline there.
    let px = |x: f32, z: f32| (((x + 1.0) * 20.0) as u32, ((z + 1.0) * 20.0) as u32);
    for (x, z) in [(4.0, 2.0), (3.9, 3.9), (2.0, 4.0)] {
        let (u, v) = px(x, z);
        assert_ne!(*joined.get_pixel(u, v), outline, "no outline at ({x}, {z})");
    }
    // The hypotenuse x + z = 4 and the legs are outlined (within a pixel).
    let near = |x: f32, z: f32| {
        let (u, v) = px(x, z);
        (u.saturating_sub(1)..=u + 1)
            .any(|a| (v.saturating_sub(1)..=v + 1).any(|b| *joined.get_pixel(a, b) == outline))
    };
    for (x, z) in [(2.0, 2.0), (1.0, 3.0), (3.0, 1.0), (0.0, 2.0), (2.0, 0.0)] {
        assert!(near(x, z), "outline near ({x}, {z})");
    }
    // Between the two probes: the joining line, or nothing with joined = false.
    let (u, v) = px(2.0, 4.5);
    assert_eq!(*joined.get_pixel(u, v), image::Rgb([255, 255, 255]));
    assert_ne!(*points.get_pixel(u, v), image::Rgb([255, 255, 255]));
}
