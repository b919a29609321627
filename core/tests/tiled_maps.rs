//! A `Lighting`'s maps are drawn tile by tile as queries need them and redrawn only where an
//! occluder moved. For random scenes, random moves and random query sets, every answer (one
//! point at a time and batched) is bit-identical to the answer of a map freshly rendered whole
//! from the same scene — directional, cascaded, spot (forward and reverse depth) and point
//! lights, CLAMP, BORDER and WRAP samplers, D32 and D16, map sizes that end in part-tiles, points
//! at map borders, cube edges and cascade edges. A static scene draws no tile twice.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use penumbra_core::raster::Mesh;
use penumbra_core::shadow::{
    DepthConvention, Light, LightId, Lighting, Normals, Occluder, OccluderId, PcfKernel, ShadowMap,
};
use penumbra_core::{AddressMode, Format};
use penumbra_testkit::Rng;

fn crate_at(rng: &mut Rng, mesh: &Arc<Mesh>) -> Occluder {
    Occluder::mesh(
        Arc::clone(mesh),
        Mat4::from_translation(rng.point(Vec3::new(-9.0, 0.0, -9.0), Vec3::new(9.0, 2.0, 9.0)))
            * Mat4::from_rotation_y(rng.f32_in(0.0, 6.3))
            * Mat4::from_scale(Vec3::new(
                rng.f32_in(0.3, 2.0),
                rng.f32_in(0.3, 3.0),
                rng.f32_in(0.3, 2.0),
            )),
    )
}

fn lights(rng: &mut Rng) -> Vec<Light> {
    let sampler = |mode: AddressMode, light: Light| {
        let mut s = light.sampler;
        s.address_u = mode;
        s.address_v = mode;
        light.with_sampler(s)
    };
    vec![
        Light::directional(Vec3::new(0.3, -1.0, 0.2), 1.0)
            .with_resolution(200)
            .with_kernel(PcfKernel::PCF_3X3),
        sampler(
            AddressMode::Wrap,
            Light::directional(Vec3::new(-0.4, -1.0, 0.1), 1.0)
                .with_resolution(130)
                .with_kernel(PcfKernel::PCF_5X5),
        ),
        Light::cascaded(
            Vec3::new(0.2, -1.0, -0.3),
            rng.point(Vec3::splat(-2.0), Vec3::splat(2.0)),
            vec![3.0, 7.0, 14.0],
            1.0,
        )
        .with_resolution(128),
        Light::spot(
            Vec3::new(1.0, 8.0, -1.0),
            Vec3::new(0.1, -1.0, 0.2),
            0.8,
            16.0,
            20.0,
        )
        .with_resolution(150)
        .with_kernel(PcfKernel::PCF_3X3),
        sampler(
            AddressMode::Border,
            Light::spot(
                Vec3::new(-3.0, 6.0, 2.0),
                Vec3::new(0.3, -1.0, -0.1),
                0.6,
                14.0,
                20.0,
            )
            .with_resolution(100)
            .with_depth(DepthConvention::Reverse)
            .with_format(Format::D16Unorm),
        ),
        Light::point(Vec3::new(0.5, 3.0, 0.5), 12.0, 20.0)
            .with_resolution(70)
            .with_kernel(PcfKernel::PCF_3X3),
    ]
}

/// Random points over the scene, some with normals, plus points near map and cascade edges.
fn queries(rng: &mut Rng, n: usize) -> (Vec<Vec3>, Vec<Vec3>) {
    let mut pts = Vec::with_capacity(n);
    for k in 0..n {
        let p = match k % 4 {
            // Near the ground's edge (the directional maps' borders).
            0 => Vec3::new(
                if rng.f32_unit() < 0.5 { -11.9 } else { 11.9 } + rng.f32_in(-0.3, 0.3),
                rng.f32_in(-0.5, 0.5),
                rng.f32_in(-12.0, 12.0),
            ),
            _ => rng.point(Vec3::new(-12.0, -0.5, -12.0), Vec3::new(12.0, 4.0, 12.0)),
        };
        pts.push(p);
    }
    let normals = (0..n)
        .map(|k| {
            if k % 3 == 0 {
                Vec3::new(0.1, 1.0, 0.0)
            } else {
                Vec3::ZERO
            }
        })
        .collect();
    (pts, normals)
}

/// Compares every light's tiled answers with a fresh whole map's; returns the lights (by
/// position in `ids`) with some shadow among the answers.
fn check(
    lighting: &Lighting,
    ids: &[LightId],
    pts: &[Vec3],
    normals: &[Vec3],
    what: &str,
) -> Vec<bool> {
    let mut shadowed = Vec::new();
    for &id in ids {
        let light = lighting.light(id).unwrap().clone();
        let fresh = ShadowMap::render(light, lighting.scene()).unwrap();
        let tiled = lighting.map(id).unwrap();
        assert!(
            tiled.tiles_drawn().is_some(),
            "{what}: light {id:?} is tiled"
        );
        // Batched, then one point at a time.
        let mut a = vec![0.0; pts.len()];
        let mut b = vec![0.0; pts.len()];
        tiled.lit_fractions(pts, Normals::Each(normals), &mut a);
        fresh.lit_fractions(pts, Normals::Each(normals), &mut b);
        for (k, &p) in pts.iter().enumerate().step_by(7) {
            let n = Some(normals[k]).filter(|n| *n != Vec3::ZERO);
            assert_eq!(
                tiled.lit_fraction(p, n).to_bits(),
                fresh.lit_fraction(p, n).to_bits(),
                "{what}: light {id:?}, one point {p}"
            );
        }
        for (k, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(
                x.to_bits(),
                y.to_bits(),
                "{what}: light {id:?}, point {}",
                pts[k]
            );
        }
        shadowed.push(b.iter().any(|&f| f < 1.0));
    }
    shadowed
}

fn level(rng: &mut Rng) -> (Lighting, Vec<OccluderId>, Arc<Mesh>) {
    let mut lighting = Lighting::new();
    lighting.set_threads(2);
    lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-12.0, -1.0, -12.0),
        Vec3::new(12.0, 0.0, 12.0),
    ));
    let cube = Arc::new(Mesh::cuboid(Vec3::splat(-0.5), Vec3::splat(0.5)));
    let crates = (0..25)
        .map(|_| lighting.add_occluder(crate_at(rng, &cube)))
        .collect();
    (lighting, crates, cube)
}

#[test]
fn tiled_answers_equal_fresh_whole_maps_through_random_moves() {
    let mut rng = Rng::lcg64(0x5eed_7175);
    let (mut lighting, mut crates, cube) = level(&mut rng);
    let ids: Vec<LightId> = lights(&mut rng)
        .into_iter()
        .map(|l| lighting.add_light(l))
        .collect();
    let (pts, normals) = queries(&mut rng, 300);
    // Some answers are shadowed for every light: the check is not vacuous.
    let shadowed = check(&lighting, &ids, &pts, &normals, "first frame");
    assert!(shadowed.iter().all(|&s| s), "{shadowed:?}");
    for step in 0..12 {
        // Move some crates (replace), sometimes add or remove one.
        for _ in 0..3 {
            let k = (rng.f32_unit() * crates.len() as f32) as usize % crates.len();
            lighting.set_occluder(crates[k], crate_at(&mut rng, &cube));
        }
        if step % 4 == 1 {
            crates.push(lighting.add_occluder(crate_at(&mut rng, &cube)));
        }
        if step % 4 == 3 {
            let gone = crates.remove(0);
            lighting.remove_occluder(gone);
        }
        // A different subset of the queries each time, so some tiles stay undrawn.
        let start = (step * 37) % 200;
        let (p, n) = (&pts[start..start + 100], &normals[start..start + 100]);
        let _ = check(&lighting, &ids, p, n, &format!("step {step}"));
    }
    // The whole texture of each tiled map is the fresh map's.
    for &id in &ids {
        let fresh = ShadowMap::render(lighting.light(id).unwrap().clone(), lighting.scene());
        assert_eq!(
            lighting.map(id).unwrap().texture().bytes(),
            fresh.unwrap().texture().bytes(),
            "{id:?}"
        );
    }
}

#[test]
fn a_static_scene_draws_no_tile_twice_and_a_move_redraws_only_near_it() {
    let mut rng = Rng::lcg64(0xface);
    let (mut lighting, crates, cube) = level(&mut rng);
    let sun = lighting.add_light(
        Light::directional(Vec3::new(0.2, -1.0, 0.1), 1.0)
            .with_resolution(1024)
            .with_kernel(PcfKernel::PCF_3X3),
    );
    // Bounds given: the sun's square does not follow the scene.
    let (pts, normals) = queries(&mut rng, 200);
    let mut out = vec![0.0; pts.len()];
    let map = lighting.map(sun).unwrap();
    map.lit_fractions(&pts, Normals::Each(&normals), &mut out);
    let (drawn, all) = map.tiles_drawn().unwrap();
    assert!(drawn < all / 2, "{drawn} of {all} tiles for 200 points");
    let first = lighting.tile_stats();
    assert_eq!(first.tiles_rendered, drawn as u64);
    assert!(
        first.wall > std::time::Duration::ZERO,
        "tiles were drawn, so their wall time counts: {first:?}"
    );
    assert_eq!(map.tile_rows_drawn(), Some(first.rows_rendered));
    for _ in 0..3 {
        lighting
            .map(sun)
            .unwrap()
            .lit_fractions(&pts, Normals::Each(&normals), &mut out);
    }
    assert_eq!(lighting.tile_stats(), first, "no tile pass, no tile time");
    // Points without their normals' offsets read other texels of the same tiles: the rows
    // they add are drawn once, and asking again draws nothing.
    let mut added = None;
    for round in 0..3 {
        for &p in &pts[..20] {
            lighting.lit_fraction(sun, p, None).unwrap();
        }
        let now = lighting.tile_stats();
        assert_eq!(now.tiles_rendered, first.tiles_rendered, "no tile started");
        assert_eq!(
            lighting.map(sun).unwrap().tile_rows_drawn(),
            Some(now.rows_rendered),
            "no row drawn twice"
        );
        let rows = *added.get_or_insert(now.rows_rendered);
        assert_eq!(
            now.rows_rendered, rows,
            "round {round}: nothing drawn again"
        );
    }
    // One crate moves a little: a few tiles are forgotten, and only those are drawn again.
    let moved = Occluder::mesh(
        Arc::clone(&cube),
        lighting.occluder(crates[3]).unwrap().transform * Mat4::from_translation(Vec3::X * 0.2),
    );
    lighting.set_occluder(crates[3], moved);
    let forgot = lighting.tile_stats().tiles_invalidated;
    assert!((1..=16).contains(&forgot), "{forgot} tiles forgotten");
    lighting
        .map(sun)
        .unwrap()
        .lit_fractions(&pts, Normals::Each(&normals), &mut out);
    let again = lighting.tile_stats().tiles_rendered - first.tiles_rendered;
    assert!(again <= forgot, "{again} tiles redrawn, {forgot} forgotten");
    let fresh = ShadowMap::render(lighting.light(sun).unwrap().clone(), lighting.scene()).unwrap();
    let mut want = vec![0.0; pts.len()];
    fresh.lit_fractions(&pts, Normals::Each(&normals), &mut want);
    assert_eq!(
        out.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|f| f.to_bits()).collect::<Vec<_>>()
    );
}

/// Few points on big maps: most tiles stay undrawn, so a tap whose footprint reaches a tile
/// it did not ask for would read an undrawn tile (and differ from the whole map).
#[test]
fn sparse_queries_on_big_maps_read_only_tiles_they_drew() {
    let mut rng = Rng::lcg64(0xb16);
    let mut shadowed = vec![false; 6];
    for round in 0..6 {
        let (mut lighting, _, _) = level(&mut rng);
        let big: Vec<Light> = lights(&mut rng)
            .into_iter()
            .map(|l| {
                let n = if matches!(l.kind, penumbra_core::shadow::LightKind::Point { .. }) {
                    300
                } else {
                    1000
                };
                l.with_resolution(n)
            })
            .collect();
        let ids: Vec<LightId> = big.into_iter().map(|l| lighting.add_light(l)).collect();
        let (mut pts, mut normals) = queries(&mut rng, 24);
        // Points seen from the point light along directions near its cube's edges and corners.
        let centre = Vec3::new(0.5, 3.0, 0.5);
        for _ in 0..12 {
            let mut d = Vec3::new(1.0, 1.0, 1.0);
            let keep = (rng.f32_unit() * 3.0) as usize % 3;
            d[keep] = rng.f32_in(-1.0, 1.0);
            let d = d * Vec3::new(
                if rng.f32_unit() < 0.5 { -1.0 } else { 1.0 },
                -1.0,
                if rng.f32_unit() < 0.5 { -1.0 } else { 1.0 },
            );
            pts.push(centre + d.normalize() * rng.f32_in(2.0, 4.0));
            normals.push(Vec3::ZERO);
        }
        let s = check(&lighting, &ids, &pts, &normals, &format!("round {round}"));
        for (a, b) in shadowed.iter_mut().zip(s) {
            *a |= b;
        }
        for &id in &ids {
            let (drawn, all) = lighting.map(id).unwrap().tiles_drawn().unwrap();
            assert!(drawn < all, "round {round}: {id:?} drew {drawn} of {all}");
        }
    }
    assert!(shadowed.iter().all(|&s| s), "{shadowed:?}");
}

/// The level with every light of [`lights`] added.
fn lit_level(rng: &mut Rng) -> (Lighting, Vec<LightId>) {
    let (mut lighting, _, _) = level(rng);
    let ids = lights(rng)
        .into_iter()
        .map(|l| lighting.add_light(l))
        .collect();
    (lighting, ids)
}

/// `n` random coordinates of `map`: directions for a cube, else positions a little past the
/// map's edges in a random slice.
fn map_coords(rng: &mut Rng, map: &ShadowMap, n: usize) -> Vec<Vec3> {
    let cube = matches!(
        map.light().kind,
        penumbra_core::shadow::LightKind::Point { .. }
    );
    let slices = map.view_proj().len() as f32;
    (0..n)
        .map(|_| {
            if cube {
                rng.point(Vec3::splat(-1.0), Vec3::splat(1.0))
            } else {
                Vec3::new(
                    rng.f32_in(-0.05, 1.05),
                    rng.f32_in(-0.05, 1.05),
                    (rng.f32_unit() * slices).floor(),
                )
            }
        })
        .collect()
}

/// `compare_many` and `compare_batch` give, coordinate by coordinate, the bits of `compare` on a
/// map rendered whole — 2D slices, cascades and cube directions, near edges and past them.
#[test]
fn compare_many_equals_single_compares_on_whole_maps() {
    let mut rng = Rng::lcg64(0xc0e);
    let (lighting, ids) = lit_level(&mut rng);
    for &id in &ids {
        let tiled = lighting.map(id).unwrap();
        let fresh = ShadowMap::render(tiled.light().clone(), lighting.scene()).unwrap();
        let slices = tiled.view_proj().len() as f32;
        let coords = map_coords(&mut rng, tiled, 200);
        for reference in [0.2f32, 0.5, 0.9] {
            let mut got = vec![0.0; coords.len()];
            tiled.compare_many(&coords, reference, &mut got);
            for (c, g) in coords.iter().zip(&got) {
                assert_eq!(
                    g.to_bits(),
                    fresh.compare(*c, reference).to_bits(),
                    "{id:?} at {c}"
                );
            }
        }
        // A reference per coordinate, through the batched path, on the tiled and the whole
        // map: non-finite and off-map coordinates and references too.
        let mut coords = coords;
        coords.extend([
            Vec3::new(f32::NAN, 0.5, 0.0),
            Vec3::new(0.5, f32::INFINITY, 1.0),
            Vec3::new(1e-40, 0.5, slices - 1.0),
            Vec3::new(0.5, 0.5, slices + 3.0),
            Vec3::new(0.5, 0.5, -2.7),
        ]);
        let refs: Vec<f32> = (0..coords.len())
            .map(|k| match k % 11 {
                0 => f32::NAN,
                1 => -0.0,
                _ => rng.f32_in(-0.1, 1.1),
            })
            .collect();
        for map in [tiled, &fresh] {
            let mut got = vec![0.0; coords.len()];
            map.compare_batch(&coords, &refs, &mut got);
            for ((c, r), g) in coords.iter().zip(&refs).zip(&got) {
                assert_eq!(
                    g.to_bits(),
                    fresh.compare(*c, *r).to_bits(),
                    "{id:?} compare_batch at {c}, reference {r}"
                );
            }
        }
    }
}

/// Occluders that keep moving over the same tiles (a door, a patrolling guard): each such tile
/// keeps what the other occluders drew there and draws only the moving ones again — and every
/// answer stays the bits of a map rendered whole, as other occluders also move over those tiles
/// (the kept drawing is made again without them), come and go (every layer is dropped), and
/// several occluders move in one frame.
#[test]
fn tiles_under_moving_occluders_redraw_over_kept_layers_with_the_whole_maps_bits() {
    let mut rng = Rng::lcg64(0x1a7e);
    let (mut lighting, mut crates, cube) = level(&mut rng);
    let ids: Vec<LightId> = lights(&mut rng)
        .into_iter()
        .map(|l| lighting.add_light(l))
        .collect();
    let (pts, normals) = queries(&mut rng, 300);
    // Two "doors" swinging round hinges near the middle, where the queries are dense.
    let door = |angle: f32, at: Vec3| {
        Occluder::mesh(
            Arc::clone(&cube),
            Mat4::from_translation(at)
                * Mat4::from_rotation_y(angle)
                * Mat4::from_translation(Vec3::new(0.5, 0.5, 0.0))
                * Mat4::from_scale(Vec3::new(1.0, 2.0, 0.1)),
        )
    };
    let (hinge_a, hinge_b) = (Vec3::new(1.0, 0.0, 1.0), Vec3::new(-2.0, 0.0, 0.5));
    let a = lighting.add_occluder(door(0.0, hinge_a));
    let b = lighting.add_occluder(door(1.0, hinge_b));
    let _ = check(&lighting, &ids, &pts, &normals, "doors shut");
    for step in 0..16 {
        let angle = 0.15 * step as f32;
        lighting.set_occluder(a, door(angle, hinge_a));
        if step % 2 == 0 {
            lighting.set_occluder(b, door(1.0 - angle, hinge_b));
        }
        // Now and then a crate moves over the doors' tiles too, or one comes or goes.
        if step % 5 == 2 {
            let k = step % crates.len();
            let near = Occluder::mesh(
                Arc::clone(&cube),
                Mat4::from_translation(hinge_a + Vec3::new(rng.f32_in(-1.0, 1.0), 0.5, 0.5)),
            );
            lighting.set_occluder(crates[k], near);
        }
        if step == 9 {
            crates.push(lighting.add_occluder(crate_at(&mut rng, &cube)));
        }
        if step == 12 {
            let gone = crates.remove(1);
            lighting.remove_occluder(gone);
        }
        let _ = check(&lighting, &ids, &pts, &normals, &format!("step {step}"));
    }
    let stats = lighting.tile_stats();
    assert!(
        stats.tiles_layered > stats.tiles_rendered / 10,
        "most redraws under the doors are over layers: {stats:?}"
    );
}

/// `draw_tiles_for` draws every tile that comparisons at its coordinates read: comparisons
/// made afterwards draw none, and answer as the map rendered whole.
#[test]
fn draw_tiles_for_draws_what_the_comparisons_read() {
    let mut rng = Rng::lcg64(0xd7a3);
    let (lighting, ids) = lit_level(&mut rng);
    for &id in &ids {
        let tiled = lighting.map(id).unwrap();
        let fresh = ShadowMap::render(tiled.light().clone(), lighting.scene()).unwrap();
        let coords = map_coords(&mut rng, tiled, 150);
        tiled.draw_tiles_for(&coords);
        let (drawn, rows) = tiled
            .tile_stats()
            .map(|s| (s.tiles_rendered, s.rows_rendered))
            .unwrap();
        assert!(drawn > 0, "{id:?}: tiles drawn");
        let refs: Vec<f32> = (0..coords.len()).map(|_| rng.f32_in(0.0, 1.0)).collect();
        let mut got = vec![0.0; coords.len()];
        tiled.compare_batch(&coords, &refs, &mut got);
        assert_eq!(
            tiled.tile_stats().unwrap().rows_rendered,
            rows,
            "{id:?}: no row drawn after draw_tiles_for"
        );
        for (c, r) in coords.iter().zip(&refs).step_by(5) {
            assert_eq!(
                tiled.compare(*c, *r).to_bits(),
                fresh.compare(*c, *r).to_bits(),
                "{id:?} at {c}"
            );
        }
        assert_eq!(
            tiled.tile_stats().unwrap().tiles_rendered,
            drawn,
            "{id:?}: no tile drawn after draw_tiles_for"
        );
        for ((c, r), g) in coords.iter().zip(&refs).zip(&got) {
            assert_eq!(
                g.to_bits(),
                fresh.compare(*c, *r).to_bits(),
                "{id:?} at {c}"
            );
        }
    }
}

/// `drawn_tiles` reports the rows a query's taps read and nothing else, and `drawn_picture`
/// shows them warm over the depths, the rest cool; a map drawn whole is warm throughout.
#[test]
fn drawn_tiles_and_their_picture_show_the_rows_queries_read() {
    let mut rng = Rng::lcg64(0xd4a3);
    let (mut lighting, _, _) = level(&mut rng);
    // 200 texels: six whole tiles and one of 8 texels along each side.
    let light = Light::directional(Vec3::new(0.3, -1.0, 0.2), 1.0).with_resolution(200);
    let sun = lighting.add_light(light.clone());
    let map = lighting.map(sun).unwrap();
    let none = map.drawn_tiles();
    assert_eq!((none.tiles(), none.tile_rows(), none.texels()), (0, 0, 0));
    assert_eq!(
        (none.resolution(), none.tiles_across(), none.slices()),
        (200, 7, 1)
    );
    // One bilinear comparison (R4) between texels 99/100 and 40/41, another across the
    // last tile's part: each reads a 2×2 footprint (its rows 40, 41 and 196, 197).
    let _ = map.compare(Vec3::new(100.0 / 200.0, 41.0 / 200.0, 0.0), 0.5);
    let _ = map.compare(Vec3::new(198.0 / 200.0, 197.0 / 200.0, 0.0), 0.5);
    let drawn = map.drawn_tiles();
    assert_eq!(drawn.tiles(), map.tiles_drawn().unwrap().0);
    assert_eq!(drawn.tile_rows(), map.tile_rows_drawn().unwrap());
    for (x, y) in [
        (99, 40),
        (100, 40),
        (99, 41),
        (100, 41),
        (197, 196),
        (198, 197),
    ] {
        assert!(drawn.texel(0, x, y), "texel ({x}, {y}) was read");
    }
    // Rows are whole across their tile, and nothing far from the taps is drawn.
    assert!(drawn.texel(0, 96, 40) && drawn.texel(0, 127, 41));
    for (x, y) in [
        (10, 10),
        (100, 100),
        (150, 41),
        (100, 70),
        (199, 199),
        (200, 40),
    ] {
        assert!(!drawn.texel(0, x, y), "texel ({x}, {y}) was not read");
    }
    assert!(drawn.rows(0, 3, 1).count_ones() >= 2 && drawn.rows(0, 0, 0) == 0);
    assert_eq!(drawn.rows(1, 3, 1), 0, "no second slice");
    assert_eq!(drawn.rows(0, 7, 0), 0, "no eighth tile");
    // Texels: 32 per row of a whole tile, 8 per row of the last column's tiles.
    let width = |tx: u32| if tx == 6 { 8 } else { 32 };
    let texels: u64 = (0..7)
        .flat_map(|ty| (0..7).map(move |tx| (tx, ty)))
        .map(|(tx, ty)| u64::from(drawn.rows(0, tx, ty).count_ones()) * width(tx))
        .sum();
    assert_eq!(drawn.texels(), texels);
    assert_eq!((drawn.slice_texels(0), drawn.slice_texels(1)), (texels, 0));
    assert!(texels > 0 && texels < 200 * 200 / 10, "{texels}");

    let picture = penumbra_core::picture::drawn_picture(map);
    assert_eq!(picture.dimensions(), (200, 200));
    let warm = |x: u32, y: u32| {
        let p = picture.get_pixel(x, y).0;
        p[0] > p[2]
    };
    let outline = penumbra_core::picture::DRAWN_TILE_OUTLINE;
    for y in 0..200 {
        for x in 0..200 {
            assert_eq!(warm(x, y), drawn.texel(0, x, y), "pixel ({x}, {y})");
            // Drawn tiles are outlined where their edge texels are not drawn.
            let edge = |v: u32| v.is_multiple_of(32) || v % 32 == 31 || v == 199;
            let outlined =
                !drawn.texel(0, x, y) && drawn.rows(0, x / 32, y / 32) != 0 && (edge(x) || edge(y));
            assert_eq!(
                *picture.get_pixel(x, y) == outline,
                outlined,
                "pixel ({x}, {y})"
            );
        }
    }
    // The picture drew every tile; what it showed as drawn was the state before it.
    let (all, total) = map.tiles_drawn().unwrap();
    assert_eq!(all, total);
    let whole = penumbra_core::picture::drawn_picture(map);
    assert!(whole.pixels().all(|p| p.0[0] > p.0[2]));

    let fresh = ShadowMap::render(light, lighting.scene()).unwrap();
    let all = fresh.drawn_tiles();
    assert_eq!(
        all,
        map.drawn_tiles(),
        "every row of every tile, cut ones too"
    );
    assert_eq!(
        (all.tiles(), all.tile_rows(), all.texels()),
        (49, 7 * 200, 200 * 200)
    );
    let whole_map = penumbra_core::picture::drawn_picture(&fresh);
    assert_eq!(whole_map, whole, "a map drawn whole is drawn throughout");
}
