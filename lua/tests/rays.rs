//! `scene:raycast`, `raycastBatch`, `isInside` and `loadGltf` (issue 17): hand-computed hits,
//! Roblox's length rule, include/exclude lists, the batch equal to one call per ray, agreement
//! with the shadow queries' geometry, and glTF levels whose node names the hits report.

mod support;

use glam::{Mat4, Vec3};
use penumbra_core::gltf::write_glb;
use penumbra_core::raster::Mesh;
use support::{eval, fails_with, runtime};

const LEVEL: &str = "local scene = penumbra.scene()\n\
    local floor = scene:addBox({-10, -1, -10}, {10, 0, 10}, 'floor')\n\
    local crate = scene:addBox({-1, 0, -1}, {1, 2, 1})\n";

#[test]
fn a_ray_hits_the_top_of_a_box_with_its_position_normal_distance_and_name() {
    let (rt, _) = runtime("rays-hit");
    let hit: Vec<f64> = eval(
        &rt,
        &format!(
            "{LEVEL}local r = scene:raycast({{0.5, 6, 0.25}}, {{0, -10, 0}})\n\
             assert(r.occluder == crate and crate == 'box1' and floor == 'floor')\n\
             return {{r.position.x, r.position.y, r.position.z, r.normal.x, r.normal.y, r.normal.z, r.distance}}"
        ),
    );
    assert_eq!(hit, [0.5, 2.0, 0.25, 0.0, 1.0, 0.0, 4.0]);
    // From the side, at an angle: the face at x = 1, its normal towards the ray.
    let side: Vec<f64> = eval(
        &rt,
        &format!(
            "{LEVEL}local r = scene:raycast({{5, 1, 0}}, {{-8, 0, 0}})\n\
             return {{r.position.x, r.normal.x, r.distance}}"
        ),
    );
    assert_eq!(side, [1.0, 1.0, 4.0]);
}

#[test]
fn the_ray_goes_as_far_as_the_direction_or_max_distance() {
    let (rt, _) = runtime("rays-length");
    let (short, long, capped): (bool, f64, bool) = eval(
        &rt,
        &format!(
            "{LEVEL}local a = scene:raycast({{0, 6, 0}}, {{0, -3, 0}})\n\
             local b = scene:raycast({{0, 6, 0}}, {{0, -1, 0}}, {{maxDistance = 10}})\n\
             local c = scene:raycast({{0, 6, 0}}, {{0, -100, 0}}, {{maxDistance = 3.9}})\n\
             return a == nil, b.distance, c == nil"
        ),
    );
    assert!(short && capped);
    assert_eq!(long, 4.0);
    fails_with(
        &rt,
        &format!("{LEVEL}scene:raycast({{0, 6, 0}}, {{0, 0, 0}})"),
        &[
            "test.luau:4:",
            "Scene:raycast: direction: {0, 0, 0} has no length",
        ],
    );
    fails_with(
        &rt,
        &format!("{LEVEL}scene:raycast({{0, 6, 0}}, {{0, -1, 0}}, {{maxDistance = -1}})"),
        &["params.maxDistance = -1: expected a distance >= 0"],
    );
}

#[test]
fn include_and_exclude_lists_choose_the_occluders_by_name() {
    let (rt, _) = runtime("rays-filter");
    let (a, b, c): (String, String, bool) = eval(
        &rt,
        &format!(
            "{LEVEL}local a = scene:raycast({{0, 6, 0}}, {{0, -10, 0}}, {{exclude = {{crate}}}})\n\
             local b = scene:raycast({{0, 6, 0}}, {{0, -10, 0}}, {{include = {{'floor'}}}})\n\
             local c = scene:raycast({{0, 6, 0}}, {{0, -10, 0}}, {{include = {{'box1'}}, exclude = {{'box1'}}}})\n\
             return a.occluder, b.occluder .. ' ' .. string.format('%g', b.distance), c == nil"
        ),
    );
    assert_eq!(a, "floor");
    assert_eq!(b, "floor 6");
    assert!(c);
    fails_with(
        &rt,
        &format!("{LEVEL}scene:raycast({{0, 6, 0}}, {{0, -10, 0}}, {{exclude = {{'door'}}}})"),
        &["params.exclude[1]: the scene has no occluder named \"door\""],
    );
}

#[test]
fn the_batch_gives_what_one_call_per_ray_gives() {
    let (rt, _) = runtime("rays-batch");
    let same: bool = eval(
        &rt,
        &format!(
            "{LEVEL}scene:addMesh({{{{-3, 0, 3}}, {{3, 0, 3}}, {{0, 4, 3}}}}, {{1, 2, 3}}, nil, 'sail')\n\
             local origins, dirs = {{}}, {{}}\n\
             local seed = 7\n\
             local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648 return seed / 2147483648 end\n\
             for i = 1, 300 do\n\
               origins[i] = {{rnd() * 12 - 6, rnd() * 6, rnd() * 12 - 6}}\n\
               dirs[i] = {{rnd() * 2 - 1, rnd() * 2 - 1.5, rnd() * 2 - 1}}\n\
             end\n\
             local batch = scene:raycastBatch(origins, dirs, {{maxDistance = 20}})\n\
             local down = scene:raycastBatch(origins, {{0, -20, 0}})\n\
             local hits = 0\n\
             for i = 1, 300 do\n\
               local one = scene:raycast(origins[i], dirs[i], {{maxDistance = 20}})\n\
               local b = batch[i]\n\
               if one == nil then assert(b == false, i) else\n\
                 hits = hits + 1\n\
                 assert(b.occluder == one.occluder and b.distance == one.distance and b.triangle == one.triangle, i)\n\
                 for _, k in ipairs({{'x', 'y', 'z'}}) do\n\
                   assert(b.position[k] == one.position[k] and b.normal[k] == one.normal[k], i)\n\
                 end\n\
               end\n\
               local d = scene:raycast(origins[i], {{0, -20, 0}})\n\
               assert((d == nil and down[i] == false) or (d.distance == down[i].distance), i)\n\
             end\n\
             return hits > 100 and #batch == 300"
        ),
    );
    assert!(same);
    fails_with(
        &rt,
        &format!("{LEVEL}scene:raycastBatch({{{{0, 1, 0}}, {{0, 2, 0}}}}, {{{{0, -1, 0}}}})"),
        &["directions: 1 directions for 2 origins"],
    );
}

#[test]
fn is_inside_tells_points_in_crates_from_points_in_the_open() {
    let (rt, _) = runtime("rays-inside");
    let got: Vec<String> = eval(
        &rt,
        &format!(
            "{LEVEL}scene:addMesh({{{{0, 0, 0}}, {{1, 0, 0}}, {{0, 0, 1}}, {{0, 1, 0}}}}, {{1, 3, 2, 1, 2, 4, 2, 3, 4, 3, 1, 4}},\n\
               {{position = {{5, 0, 5}}, scale = 2}}, 'tetra')\n\
             local out = {{}}\n\
             for _, p in ipairs({{{{0, 1, 0}}, {{0, 3, 0}}, {{5, -0.5, 5}}, {{5.3, 0.3, 5.3}}, {{6.5, 0.6, 6.5}}}}) do\n\
               local inside, name = scene:isInside(p)\n\
               table.insert(out, tostring(inside) .. ' ' .. tostring(name))\n\
             end\n\
             return out"
        ),
    );
    assert_eq!(
        got,
        [
            "true box1",
            "false nil",
            "true floor",
            "true tetra",
            "false nil"
        ]
    );
}

/// The rays see the geometry the shadow maps are drawn from: a point the sun's map shadows has
/// an occluder on its way to the sun; a lit one has none.
#[test]
fn rays_towards_the_sun_agree_with_lit_fractions() {
    let (rt, _) = runtime("rays-sun");
    let agree: bool = eval(
        &rt,
        &format!(
            "{LEVEL}scene:addBox({{3, 3, 3}}, {{5, 4, 6}}, 'roof')\n\
             local to_sun = {{0.3, 1, 0.2}}\n\
             scene:addLight({{name = 'sun', kind = 'directional', direction = {{-0.3, -1, -0.2}}}})\n\
             local n, agreed = 0, 0\n\
             for x = -8, 8, 0.5 do for z = -8, 8, 0.5 do\n\
               local p = {{x, 0, z}}\n\
               local lit = scene:litFraction('sun', p, {{0, 1, 0}})\n\
               -- Off the crate's footprint (a ray starting on its faces touches them at once).\n\
               local open = math.abs(x) > 1 or math.abs(z) > 1\n\
               if open and (lit == 0 or lit == 1) then\n\
                 n = n + 1\n\
                 local hit = scene:raycast({{x, 0.01, z}}, to_sun, {{maxDistance = 100}})\n\
                 if (hit ~= nil) == (lit == 0) then agreed = agreed + 1 end\n\
               end\n\
             end end\n\
             return n > 800 and agreed == n"
        ),
    );
    assert!(agree);
}

#[test]
fn gltf_levels_load_with_their_node_names_and_bad_files_are_errors() {
    let (rt, dir) = runtime("rays-gltf");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("levels")).unwrap();
    let cube = Mesh::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0));
    let glb = write_glb(&[
        (
            "crate_a",
            &cube,
            Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0)),
        ),
        (
            "crate_b",
            &cube,
            Mat4::from_translation(Vec3::new(4.0, 1.0, 0.0)),
        ),
    ])
    .unwrap();
    std::fs::write(root.join("levels/yard.glb"), &glb).unwrap();
    std::fs::write(root.join("levels/broken.glb"), &glb[..glb.len() / 2]).unwrap();
    let got: Vec<String> = eval(
        &rt,
        "local scene = penumbra.scene()\n\
         local names = scene:loadGltf('levels/yard.glb', {position = {0, 0, 10}})\n\
         local hit = scene:raycast({4, 10, 10}, {0, -20, 0})\n\
         return {names[1], names[2], hit.occluder, string.format('%g', hit.position.y), tostring(scene.triangles)}",
    );
    assert_eq!(got, ["crate_a", "crate_b", "crate_b", "2", "24"]);
    fails_with(
        &rt,
        "local scene = penumbra.scene()\nscene:loadGltf('levels/broken.glb')",
        &["test.luau:2:", "Scene:loadGltf: levels/broken.glb:"],
    );
    fails_with(
        &rt,
        "local scene = penumbra.scene()\nscene:loadGltf('levels/none.glb')",
        &["Scene:loadGltf:", "none.glb"],
    );
}
