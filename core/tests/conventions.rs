//! Shadow conventions as data (issue 14): every convention against a case worked out by hand,
//! and the batched query equal to the scalar one, bit for bit, under each.

use std::f32::consts::FRAC_PI_2;
use std::sync::Arc;

use glam::camera::lh::{proj::directx as proj, view};
use glam::{Mat4, Vec3};
use penumbra_core::AddressMode;
use penumbra_core::raster::{CullMode, Mesh};
use penumbra_core::shadow::{
    Anchor, AxisTerm, BiasOrder, DepthConvention, KernelTap, Light, LightKind, Normals, OccluderId,
    OffsetUnits, PcfKernel, RasterConvention, Scene, ShadowBias, ShadowError, ShadowMap, SliceView,
    shadow_sampler,
};
use penumbra_core::shadow::{Lighting, Occluder};
use penumbra_testkit::Rng;

/// A view straight down from y = 10 over the square x, z in [−4, 4], depth 0..20: u = (x + 4)/8,
/// v = (4 − z)/8, depth = (10 − y)/20 (forward). With 8 texels a texel is one world unit.
fn down_view(depth: DepthConvention) -> SliceView {
    let view = view::look_to_mat4(Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y, Vec3::Z);
    let projection = match depth {
        DepthConvention::Forward => proj::orthographic(-4.0, 4.0, -4.0, 4.0, 0.0, 20.0),
        DepthConvention::Reverse => proj::orthographic(-4.0, 4.0, -4.0, 4.0, 20.0, 0.0),
    };
    SliceView { view, projection }
}

/// A sun straight down through [`down_view`], 8 texels, no receiver biases.
fn sun(depth: DepthConvention, address: AddressMode) -> Light {
    let mut light = Light::directional(Vec3::NEG_Y, 1.0)
        .with_resolution(8)
        .with_depth(depth)
        .with_sampler(shadow_sampler(depth, address))
        .with_views(vec![down_view(depth)]);
    light.bias = ShadowBias {
        receiver: 0.0,
        normal_offset: 0.0,
        ..ShadowBias::default()
    };
    light
}

/// A roof over everything at y in [4, 5] (depth 0.25 from above).
fn roof() -> Scene {
    let mut scene = Scene::default();
    scene.add(Occluder::cuboid(
        Vec3::new(-10.0, 4.0, -10.0),
        Vec3::new(10.0, 5.0, 10.0),
    ));
    scene
}

/// A floor with its top at y = 0.
fn floor() -> Scene {
    let mut scene = Scene::default();
    scene.add(Occluder::cuboid(
        Vec3::new(-10.0, -1.0, -10.0),
        Vec3::new(10.0, 0.0, 10.0),
    ));
    scene
}

/// Random points over `lo..hi`, the box's corners and edges of the map, and hostile values.
fn points(lo: Vec3, hi: Vec3) -> Vec<Vec3> {
    let mut rng = Rng::lcg64(7);
    let mut out: Vec<Vec3> = (0..3000).map(|_| rng.point(lo, hi)).collect();
    for x in [-4.0f32, -3.999, -3.9, 0.0, 3.9, 3.999, 4.0, 4.001] {
        for z in [-4.0f32, -3.95, 0.3, 3.95, 4.0] {
            out.push(Vec3::new(x, 0.0, z));
            out.push(Vec3::new(x, -0.3, z));
        }
    }
    out.extend([
        Vec3::NAN,
        Vec3::INFINITY,
        Vec3::new(1e30, 0.0, 0.0),
        Vec3::new(0.0, 1e-40, 0.0),
    ]);
    out
}

/// The batched query equals the scalar one for every point, without normals, with one shared
/// normal and with a normal per point.
fn assert_batch_matches(map: &ShadowMap, points: &[Vec3], what: &str) {
    let mut rng = Rng::lcg64(11);
    let per_point: Vec<Vec3> = points
        .iter()
        .enumerate()
        .map(|(i, _)| match i % 4 {
            0 => Vec3::ZERO,
            1 => Vec3::Y,
            _ => Vec3::new(rng.f32_unit() - 0.5, rng.f32_unit(), rng.f32_unit() - 0.5),
        })
        .collect();
    let mut out = vec![0.0f32; points.len()];
    for normals in [
        Normals::None,
        Normals::Shared(Vec3::new(0.2, 1.0, -0.1)),
        Normals::Each(&per_point),
    ] {
        map.lit_fractions(points, normals, &mut out);
        for (k, (&p, &lit)) in points.iter().zip(&out).enumerate() {
            let one = map.lit_fraction(p, normals.get(k));
            assert_eq!(
                lit.to_bits(),
                one.to_bits(),
                "{what}: {p} {normals:?}: batched {lit}, scalar {one}"
            );
        }
    }
}

// ---- depth direction --------------------------------------------------------------------------

#[test]
fn reverse_depth_clears_to_zero_draws_greater_and_compares_greater_equal() {
    for depth in [DepthConvention::Forward, DepthConvention::Reverse] {
        let map = ShadowMap::render(sun(depth, AddressMode::Border), &roof()).unwrap();
        let texel = |x: u32, y: u32| {
            let bytes = map.texture().subresource(0, 0);
            let i = ((y * 8 + x) * 4) as usize;
            f32::from_le_bytes(bytes[i..i + 4].try_into().unwrap())
        };
        // The roof's top (y = 5) is the nearest surface: depth (10 − 5)/20 forward, 1 − that
        // reversed (orthographic depth runs far → near).
        let want = match depth {
            DepthConvention::Forward => 0.25,
            DepthConvention::Reverse => 0.75,
        };
        assert!(
            (texel(3, 4) - want).abs() < 1e-6,
            "{depth:?}: {}",
            texel(3, 4)
        );
        // Under the roof: shadowed; above it: lit.
        assert_eq!(map.lit_fraction(Vec3::new(0.5, 0.0, 0.5), None), 0.0);
        assert_eq!(map.lit_fraction(Vec3::new(0.5, 6.0, 0.5), None), 1.0);
        assert_batch_matches(
            &map,
            &points(Vec3::new(-5.0, -1.0, -5.0), Vec3::new(5.0, 7.0, 5.0)),
            &format!("{depth:?}"),
        );
    }
    // An empty scene: reverse maps hold 0 (the far value) everywhere.
    let empty = ShadowMap::render(
        sun(DepthConvention::Reverse, AddressMode::Clamp),
        &Scene::default(),
    )
    .unwrap();
    assert!(empty.texture().subresource(0, 0).iter().all(|&b| b == 0));
    assert_eq!(empty.lit_fraction(Vec3::new(1.0, 0.0, 1.0), None), 1.0);
}

#[test]
fn reverse_depth_spot_lights_use_an_infinite_reverse_z_perspective() {
    // A spot 10 above the floor looking down: on the axis, reverse-Z depth is near / distance.
    let light = Light::spot(Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y, 0.5, 30.0, 1.0)
        .with_resolution(64)
        .with_depth(DepthConvention::Reverse);
    let map = ShadowMap::render(light.clone(), &floor()).unwrap();
    let near = 30.0f32 * 1e-3;
    let bytes = map.texture().subresource(0, 0);
    let i = ((32 * 64 + 32) * 4) as usize;
    let centre = f32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    assert!((centre - near / 10.0).abs() < 1e-6, "{centre}");
    // No far plane in the projection, but the map ends at the light's range (depth near /
    // range), as a forward map ends at its far plane: past it a receiver is outside.
    let inside = map.receiver_of(Vec3::new(0.0, -19.0, 0.0), None).unwrap();
    assert!(inside.2[2] >= near / 30.0, "{:?}", inside.2);
    assert!(map.receiver_of(Vec3::new(0.0, -21.0, 0.0), None).is_none());
    assert_eq!(map.lit_fraction(Vec3::new(0.0, -21.0, 0.0), None), 1.0);
    assert_eq!(map.lit_fraction(Vec3::new(0.0, 0.0, 0.0), None), 1.0);
    assert_eq!(map.lit_fraction(Vec3::new(0.0, -0.5, 0.0), None), 0.0);
    assert_batch_matches(
        &map,
        &points(Vec3::new(-8.0, -1.0, -8.0), Vec3::new(8.0, 9.0, 8.0)),
        "reverse spot",
    );
    // And point lights: a cube of infinite reverse-Z faces.
    let point = Light::point(Vec3::new(0.0, 3.0, 0.0), 20.0, 1.0)
        .with_resolution(32)
        .with_depth(DepthConvention::Reverse);
    let cube = ShadowMap::render(point, &floor()).unwrap();
    assert_eq!(cube.lit_fraction(Vec3::new(2.0, 0.0, 1.0), None), 1.0);
    assert_eq!(cube.lit_fraction(Vec3::new(2.0, -0.5, 1.0), None), 0.0);
    assert_batch_matches(
        &cube,
        &points(Vec3::new(-8.0, -1.0, -8.0), Vec3::new(8.0, 6.0, 8.0)),
        "reverse cube",
    );
}

// ---- address mode and the outside rule --------------------------------------------------------

#[test]
fn border_and_clamp_differ_only_where_a_tap_reaches_past_the_edge() {
    // A quarter texel inside the left edge, under the roof: the 2×2 footprint takes texel −1
    // (weight 1/4) and texel 0 (weight 3/4). BORDER reads −1 as lit, CLAMP as texel 0.
    let receiver = Vec3::new(-4.0 + 0.25, 0.0, 0.5);
    for depth in [DepthConvention::Forward, DepthConvention::Reverse] {
        let border = ShadowMap::render(sun(depth, AddressMode::Border), &roof()).unwrap();
        let clamp = ShadowMap::render(sun(depth, AddressMode::Clamp), &roof()).unwrap();
        assert_eq!(border.lit_fraction(receiver, None), 0.25, "{depth:?}");
        assert_eq!(clamp.lit_fraction(receiver, None), 0.0, "{depth:?}");
        // Past the edge the point is outside the map: unshadowed under either mode.
        let outside = Vec3::new(-4.0 - 0.25, 0.0, 0.5);
        assert_eq!(border.lit_fraction(outside, None), 1.0);
        assert_eq!(clamp.lit_fraction(outside, None), 1.0);
        // Beyond the depth range (below y = −10) too.
        assert_eq!(clamp.lit_fraction(Vec3::new(0.0, -10.5, 0.0), None), 1.0);
        let pts = points(Vec3::new(-5.0, -1.0, -5.0), Vec3::new(5.0, 6.0, 5.0));
        assert_batch_matches(&border, &pts, &format!("border {depth:?}"));
        assert_batch_matches(&clamp, &pts, &format!("clamp {depth:?}"));
    }
}

// ---- receiver biases --------------------------------------------------------------------------

#[test]
fn receiver_bias_moves_towards_the_light_in_world_units() {
    let below = Vec3::new(0.5, -0.05, 0.5); // just under the floor's top
    let mut light = sun(DepthConvention::Forward, AddressMode::Border);
    let map = ShadowMap::render(light.clone(), &floor()).unwrap();
    assert_eq!(map.lit_fraction(below, None), 0.0);
    light.bias.receiver = 0.1;
    let map = ShadowMap::render(light, &floor()).unwrap();
    let (_, p, _) = map.receiver_of(below, None).unwrap();
    assert_eq!(p, below + Vec3::new(0.0, 0.1, 0.0));
    assert_eq!(map.lit_fraction(below, None), 1.0);
}

#[test]
fn normal_offset_is_in_texels_or_world_units() {
    let below = Vec3::new(0.5, -0.05, 0.5);
    let up = Some(Vec3::new(0.0, 2.0, 0.0)); // normalized by the query
    let mut light = sun(DepthConvention::Forward, AddressMode::Border);
    for (amount, units, lit) in [
        (0.1, OffsetUnits::Texels, 1.0), // a texel is one world unit here: 0.1 up
        (0.01, OffsetUnits::Texels, 0.0),
        (0.1, OffsetUnits::World, 1.0),
        (0.01, OffsetUnits::World, 0.0),
    ] {
        light.bias.normal_offset = amount;
        light.bias.normal_units = units;
        let map = ShadowMap::render(light.clone(), &floor()).unwrap();
        let (_, p, _) = map.receiver_of(below, up).unwrap();
        assert!(
            (p.y - (-0.05 + amount)).abs() < 1e-6,
            "{units:?} {amount}: {p}"
        );
        assert_eq!(map.lit_fraction(below, up), lit, "{units:?} {amount}");
        assert_batch_matches(
            &map,
            &points(Vec3::new(-5.0, -1.0, -5.0), Vec3::new(5.0, 1.0, 5.0)),
            &format!("{units:?} {amount}"),
        );
    }
}

#[test]
fn bias_order_takes_the_direction_to_the_light_after_or_before_the_normal_offset() {
    let position = Vec3::new(0.0, 10.0, 0.0);
    let p = Vec3::new(3.0, 0.0, 0.0);
    let n = Vec3::X;
    let mut light = Light::spot(position, Vec3::NEG_Y, 0.8, 30.0, 1.0).with_resolution(64);
    light.bias.normal_offset = 1.0;
    light.bias.normal_units = OffsetUnits::World;
    light.bias.receiver = 1.0;
    let moved = |order: BiasOrder| {
        let mut l = light.clone();
        l.bias.order = order;
        let map = ShadowMap::render(l, &floor()).unwrap();
        assert_batch_matches(
            &map,
            &points(Vec3::new(-6.0, -1.0, -6.0), Vec3::new(6.0, 8.0, 6.0)),
            &format!("{order:?}"),
        );
        map.receiver_of(p, Some(n)).unwrap().1
    };
    // Normal first: to (4, 0, 0), then one unit towards the light from there.
    let q = p + n;
    let normal_first = q + (position - q).normalize();
    // Depth first: one unit towards the light from (3, 0, 0), then the normal.
    let depth_first = p + (position - p).normalize() + n;
    assert!(moved(BiasOrder::NormalFirst).distance(normal_first) < 1e-5);
    assert!(moved(BiasOrder::DepthFirst).distance(depth_first) < 1e-5);
    assert!(normal_first.distance(depth_first) > 0.01);
}

// ---- rasterizer state -------------------------------------------------------------------------

#[test]
fn cull_mode_and_winding_decide_which_side_of_an_open_mesh_casts() {
    // One triangle over the square at y = 4, counter-clockwise on the map's screen (u right,
    // v down): (−10, −10) → (10, −10) → (10, 10) in (x, z) lands at screen points
    // (−0.75, 1.75)·8, (1.75, 1.75)·8, (1.75, −0.75)·8, whose y-down cross product is negative.
    let tri = Mesh::new(
        vec![
            Vec3::new(-10.0, 4.0, -10.0),
            Vec3::new(10.0, 4.0, -10.0),
            Vec3::new(10.0, 4.0, 10.0),
        ],
        vec![0, 1, 2],
    )
    .unwrap();
    let mut scene = Scene::default();
    scene.add(Occluder::mesh(Arc::new(tri), Mat4::IDENTITY));
    let under = Vec3::new(2.0, 0.0, -2.0); // inside the triangle's shadow (x > z)
    for (cull, ccw, drawn) in [
        (CullMode::None, false, true),
        (CullMode::Back, false, false), // CW fronts: the CCW triangle is a back face
        (CullMode::Back, true, true),
        (CullMode::Front, false, true),
        (CullMode::Front, true, false),
    ] {
        let light =
            sun(DepthConvention::Forward, AddressMode::Border).with_raster(RasterConvention {
                cull,
                front_counter_clockwise: ccw,
                depth_clip: true,
            });
        let map = ShadowMap::render(light, &scene).unwrap();
        let want = if drawn { 0.0 } else { 1.0 };
        assert_eq!(map.lit_fraction(under, None), want, "{cull:?} ccw={ccw}");
        assert_batch_matches(
            &map,
            &points(Vec3::new(-5.0, -1.0, -5.0), Vec3::new(5.0, 5.0, 5.0)),
            &format!("{cull:?} {ccw}"),
        );
    }
}

#[test]
fn depth_clip_off_pancakes_casters_in_front_of_the_near_plane() {
    // A slab above the view's near plane (y > 10): clipped with depth clip, clamped to depth 0
    // (and so casting) without.
    let mut scene = Scene::default();
    scene.add(Occluder::cuboid(
        Vec3::new(-10.0, 11.0, -10.0),
        Vec3::new(10.0, 12.0, 10.0),
    ));
    for (clip, want) in [(true, 1.0), (false, 0.0)] {
        let light =
            sun(DepthConvention::Forward, AddressMode::Border).with_raster(RasterConvention {
                depth_clip: clip,
                ..RasterConvention::default()
            });
        let map = ShadowMap::render(light, &scene).unwrap();
        assert_eq!(
            map.lit_fraction(Vec3::new(0.5, 0.0, 0.5), None),
            want,
            "{clip}"
        );
    }
}

// ---- kernels ----------------------------------------------------------------------------------

#[test]
fn castano_13_weighs_nine_bilinear_taps_by_hand() {
    // Under the roof 0.8 texels from the left edge (t = 0.8: anchor texel 0.5, f = 0.3) and
    // mid-height in v. The u terms at f = 0.3: weights 3.1, 7, 1.9 at texel positions
    // 0.5 + (2.4/3.1 − 2), 0.5 + 3.3/7, 0.5 + (0.3/1.9 + 2): only the first tap's footprint
    // (texels −2, −1) lies past the edge, reading BORDER as lit. The v weights sum to 12, so
    // the lit fraction is 3.1 · 12 / 144.
    let light =
        sun(DepthConvention::Forward, AddressMode::Border).with_kernel(PcfKernel::CASTANO_13);
    let map = ShadowMap::render(light, &roof()).unwrap();
    let lit = map.lit_fraction(Vec3::new(-4.0 + 0.8, 0.0, 0.0), None);
    assert!((lit - 3.1 * 12.0 / 144.0).abs() < 1e-5, "{lit}");
    // Clamped, every tap reads the roof.
    let clamp =
        sun(DepthConvention::Forward, AddressMode::Clamp).with_kernel(PcfKernel::CASTANO_13);
    let map2 = ShadowMap::render(clamp, &roof()).unwrap();
    assert_eq!(
        map2.lit_fraction(Vec3::new(-4.0 + 0.8, 0.0, 0.0), None),
        0.0
    );
    // In the open the weights sum to 144 (to within rounding).
    let open = map.lit_fraction(Vec3::new(0.3, 6.0, 0.7), None);
    assert!((open - 1.0).abs() < 1e-5 && open <= 1.0, "{open}");
    assert_batch_matches(
        &map,
        &points(Vec3::new(-5.0, -1.0, -5.0), Vec3::new(5.0, 6.0, 5.0)),
        "castano",
    );
}

#[test]
fn kernels_are_data_and_every_one_batches_bit_exactly() {
    // A 2-tap kernel of our own, weighted 3:1, on a floor whose shadow edge is a crate's.
    let own = PcfKernel::new(
        "skewed",
        Anchor::Sample,
        vec![
            KernelTap {
                u: AxisTerm {
                    weight: [3.0, 0.0],
                    offset: [-1.5, 0.0],
                    shift: 0.0,
                },
                v: AxisTerm::fixed(0.0),
            },
            KernelTap {
                u: AxisTerm::fixed(1.0),
                v: AxisTerm::fixed(0.5),
            },
        ],
        0.25,
    )
    .unwrap();
    let mut scene = floor();
    scene.add(Occluder::cuboid(
        Vec3::new(-1.0, 0.0, -1.0),
        Vec3::new(1.0, 2.0, 1.0),
    ));
    let base = Light::directional(Vec3::new(0.3, -1.0, 0.2), 1.0).with_resolution(128);
    let pts = points(Vec3::new(-6.0, -0.5, -6.0), Vec3::new(6.0, 2.5, 6.0));
    for kernel in [
        PcfKernel::HARDWARE_2X2,
        PcfKernel::PCF_3X3,
        PcfKernel::PCF_5X5,
        PcfKernel::CASTANO_13,
        own,
    ] {
        let name = kernel.name().to_owned();
        let map = ShadowMap::render(base.clone().with_kernel(kernel), &scene).unwrap();
        assert_batch_matches(&map, &pts, &name);
        // Cascades too.
        let cascades = Light::cascaded(Vec3::new(0.3, -1.0, 0.2), Vec3::ZERO, vec![3.0, 8.0], 1.0)
            .with_resolution(64)
            .with_kernel(map.kernel().clone());
        let cmap = ShadowMap::render(cascades, &scene).unwrap();
        assert_batch_matches(&cmap, &pts, &format!("{name} cascades"));
    }
    // A texel-grid kernel on a point light is refused with the kernel named.
    let refused = ShadowMap::render(
        Light::point(Vec3::Y, 10.0, 1.0).with_kernel(PcfKernel::CASTANO_13),
        &scene,
    );
    assert!(matches!(refused, Err(ShadowError::Kernel(m)) if m.contains("castano13")));
}

// ---- caller-supplied views --------------------------------------------------------------------

#[test]
fn caller_supplied_cube_views_render_the_fitted_map_and_wrong_ones_are_refused() {
    let position = Vec3::new(0.5, 3.0, -0.25);
    let range = 20.0;
    let near = (range * 1e-3f32).max(1e-3);
    let projection = proj::perspective(FRAC_PI_2, 1.0, near, range);
    // D3D's faces +X, −X, +Y, −Y, +Z, −Z with their up vectors (SPEC R99).
    let faces = [
        (Vec3::X, Vec3::Y),
        (Vec3::NEG_X, Vec3::Y),
        (Vec3::Y, Vec3::NEG_Z),
        (Vec3::NEG_Y, Vec3::Z),
        (Vec3::Z, Vec3::Y),
        (Vec3::NEG_Z, Vec3::Y),
    ];
    let views: Vec<SliceView> = faces
        .iter()
        .map(|&(f, up)| SliceView {
            view: view::look_to_mat4(position, f, up),
            projection,
        })
        .collect();
    let mut scene = floor();
    scene.add(Occluder::cuboid(
        Vec3::new(2.0, 0.0, -1.0),
        Vec3::new(3.0, 2.0, 1.0),
    ));
    let fitted = ShadowMap::render(
        Light::point(position, range, 1.0).with_resolution(32),
        &scene,
    )
    .unwrap();
    let given = ShadowMap::render(
        Light::point(position, range, 1.0)
            .with_resolution(32)
            .with_views(views.clone()),
        &scene,
    )
    .unwrap();
    assert_eq!(fitted.view_proj(), given.view_proj());
    for face in 0..6 {
        assert_eq!(
            fitted.texture().subresource(0, face),
            given.texture().subresource(0, face)
        );
    }
    // Faces swapped, a face upside down, the wrong count: refused, naming the problem.
    let mut swapped = views.clone();
    swapped.swap(0, 1);
    let mut flipped = views.clone();
    flipped[4].view = view::look_to_mat4(position, Vec3::Z, Vec3::NEG_Y);
    for (bad, what) in [
        (swapped, "cube face 0"),
        (flipped, "cube face 4"),
        (views[..5].to_vec(), "5 views given"),
    ] {
        let r = ShadowMap::render(Light::point(position, range, 1.0).with_views(bad), &scene);
        assert!(
            matches!(&r, Err(ShadowError::Views(m)) if m.contains(what)),
            "{what}: {r:?}"
        );
    }
    // A spot light through a caller's view and projection: a perspective map whose normal
    // offset is measured at the receiver's depth.
    let spot_view = SliceView {
        view: view::look_to_mat4(Vec3::new(0.0, 8.0, 0.0), Vec3::NEG_Y, Vec3::Z),
        projection: proj::perspective(1.2, 1.0, 0.05, 30.0),
    };
    assert!(spot_view.is_perspective() && !down_view(DepthConvention::Forward).is_perspective());
    let spot = Light::spot(Vec3::new(0.0, 8.0, 0.0), Vec3::NEG_Y, 0.6, 30.0, 1.0)
        .with_resolution(64)
        .with_views(vec![spot_view]);
    let map = ShadowMap::render(spot, &scene).unwrap();
    assert!(matches!(map.light().kind, LightKind::Spot { .. }));
    assert_batch_matches(
        &map,
        &points(Vec3::new(-5.0, -1.0, -5.0), Vec3::new(5.0, 4.0, 5.0)),
        "caller spot",
    );
}

// ---- Lighting ---------------------------------------------------------------------------------

#[test]
fn lighting_renders_lazily_and_drops_only_maps_a_change_can_reach() {
    let mut lighting = Lighting::new();
    lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-30.0, -1.0, -30.0),
        Vec3::new(30.0, 0.0, 30.0),
    ));
    let sun = lighting.add_light(Light::directional(Vec3::NEG_Y, 1.0).with_resolution(64));
    let east = lighting.add_light(
        Light::spot(Vec3::new(20.0, 5.0, 0.0), Vec3::NEG_Y, 0.6, 8.0, 10.0).with_resolution(32),
    );
    let west =
        lighting.add_light(Light::point(Vec3::new(-20.0, 3.0, 0.0), 6.0, 10.0).with_resolution(16));
    assert_eq!(
        lighting.maps_rendered(),
        (0, 0),
        "nothing renders before a query"
    );
    assert_eq!(lighting.pending_lights(), vec![sun, east, west]);
    let e = lighting.exposure(Vec3::new(20.0, 0.0, 0.0), None).unwrap();
    // Only the lights that reach the point rendered: the sun and the east lamp.
    assert_eq!(lighting.maps_rendered().0, 2);
    assert_eq!(
        e.lights().iter().map(|s| s.light).collect::<Vec<_>>(),
        vec![sun, east]
    );
    let generation = lighting.light_generation();
    // A crate near the west light: the sun (fitted to the scene) and the west light's map
    // (not rendered yet) are affected; the east lamp's map stays.
    let crate_id = lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-21.0, 0.0, -1.0),
        Vec3::new(-19.0, 1.0, 1.0),
    ));
    assert!(lighting.light_generation() > generation);
    assert!(lighting.rendered_map(east).is_some());
    assert!(lighting.rendered_map(sun).is_none());
    lighting.exposure(Vec3::new(20.0, 0.0, 0.0), None).unwrap();
    assert_eq!(lighting.maps_rendered().0, 3, "only the sun re-rendered");
    // Moving the crate away from everything but the sun.
    lighting.set_occluder(
        crate_id,
        Occluder::cuboid(Vec3::new(0.0, 0.0, 25.0), Vec3::new(1.0, 1.0, 26.0)),
    );
    assert!(lighting.rendered_map(east).is_some());
    // The same light again: no change; another light: its map goes.
    let same = lighting.light(east).unwrap().clone();
    lighting.set_light(east, same);
    assert!(lighting.rendered_map(east).is_some());
    lighting.set_light(
        east,
        Light::spot(Vec3::new(20.0, 6.0, 0.0), Vec3::NEG_Y, 0.6, 8.0, 10.0),
    );
    assert!(lighting.rendered_map(east).is_none());
    // Removed things are gone, and unknown handles are errors, not panics.
    lighting.remove_light(west);
    assert_eq!(
        lighting.map(west).err(),
        Some(ShadowError::UnknownHandle("light"))
    );
    assert!(lighting.remove_occluder(OccluderId(999)).is_none());
    assert_eq!(lighting.light_count(), 2);
}

#[test]
fn lighting_keeps_render_errors_but_not_interruptions() {
    let mut lighting = Lighting::new();
    let sun = lighting.add_light(Light::directional(Vec3::NEG_Y, 1.0));
    // Nothing to fit the map to: an error that stays until the scene changes.
    assert_eq!(lighting.map(sun).err(), Some(ShadowError::EmptyScene));
    assert_eq!(lighting.map_error(sun), Some(&ShadowError::EmptyScene));
    // The query leaves the light out (and says nothing reaches).
    assert_eq!(lighting.exposure(Vec3::ZERO, None).unwrap().total(), 0.0);
    lighting.add_occluder(Occluder::cuboid(Vec3::splat(-1.0), Vec3::ZERO));
    assert_eq!(lighting.map_error(sun), None);
    // A deadline that has passed stops a whole render (an eye's map); the next query renders.
    let eye = lighting.add_eye(penumbra_core::shadow::Viewer::new(
        Vec3::new(0.0, 3.0, 3.0),
        Vec3::NEG_Z,
        1.0,
        20.0,
    ));
    let past = std::time::Instant::now() - std::time::Duration::from_secs(1);
    let stopped =
        penumbra_core::deadline::with_deadline(Some(past), || lighting.eye_map(eye).err());
    assert_eq!(stopped, Some(ShadowError::Interrupted));
    assert!(lighting.eye_map(eye).is_ok());
    // A light's map is drawn tile by tile as queries need it: a query whose tiles the
    // deadline stops is interrupted, keeps nothing half drawn, and the next one answers.
    let at = Vec3::new(-0.5, -0.5, -0.5);
    let late =
        penumbra_core::deadline::with_deadline(Some(past), || lighting.lit_fraction(sun, at, None));
    assert_eq!(late, Err(ShadowError::Interrupted));
    assert_eq!(
        lighting.map(sun).unwrap().tiles_drawn().map(|d| d.0),
        Some(0)
    );
    assert_eq!(lighting.lit_fraction(sun, at, None), Ok(0.0));
    // A negative intensity is refused with the light's description.
    let dim = lighting.add_light(Light::directional(Vec3::NEG_Y, -1.0));
    assert!(matches!(lighting.map(dim), Err(ShadowError::Light(_))));
}

#[test]
fn lighting_exposures_equal_one_point_exposures_and_probes_average_points() {
    let mut lighting = Lighting::new();
    lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-10.0, -1.0, -10.0),
        Vec3::new(10.0, 0.0, 10.0),
    ));
    lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-1.0, 0.0, -1.0),
        Vec3::new(1.0, 2.0, 1.0),
    ));
    lighting.add_light(Light::directional(Vec3::new(0.3, -1.0, 0.2), 0.5).with_resolution(256));
    lighting.add_light(
        Light::spot(Vec3::new(2.0, 6.0, 1.0), Vec3::NEG_Y, 0.7, 14.0, 30.0)
            .with_resolution(128)
            .with_kernel(PcfKernel::PCF_3X3),
    );
    lighting.add_light(Light::point(Vec3::new(-3.0, 2.5, 1.0), 9.0, 12.0).with_resolution(32));
    let pts = points(Vec3::new(-8.0, -0.2, -8.0), Vec3::new(8.0, 3.0, 8.0));
    let normals: Vec<Vec3> = pts
        .iter()
        .enumerate()
        .map(|(i, _)| if i % 3 == 0 { Vec3::Y } else { Vec3::ZERO })
        .collect();
    let mut out = vec![0.0; pts.len()];
    let mut scratch = Default::default();
    lighting
        .exposures(&pts, Normals::Each(&normals), &mut out, &mut scratch)
        .unwrap();
    for (k, (&p, &e)) in pts.iter().zip(&out).enumerate() {
        let n = Some(normals[k]).filter(|n| *n != Vec3::ZERO);
        let one = lighting.exposure(p, n).unwrap().total();
        assert_eq!(e.to_bits(), one.to_bits(), "{p}");
    }
    // A probe of two points: per light, irradiance = Σ u·f / 2, unshadowed = Σ u / 2.
    let (a, b) = (Vec3::new(4.0, 0.0, 4.0), Vec3::new(0.0, 0.0, 0.0));
    let probe = lighting.probe_exposure(&[a, b], None).unwrap();
    for share in probe.lights() {
        let light = lighting.light(share.light).unwrap();
        let map = lighting.map(share.light).unwrap();
        let (ua, ub) = (light.unshadowed(a), light.unshadowed(b));
        let lit = ua * map.lit_fraction(a, None) + ub * map.lit_fraction(b, None);
        assert!((share.irradiance - lit / 2.0).abs() < 1e-5);
        assert!((share.unshadowed - (ua + ub) / 2.0).abs() < 1e-5);
    }
}

#[test]
fn a_change_in_a_frustum_corner_past_the_range_sphere_still_drops_the_map() {
    for depth in [DepthConvention::Forward, DepthConvention::Reverse] {
        let mut lighting = Lighting::new();
        lighting.add_occluder(Occluder::cuboid(
            Vec3::new(-30.0, -1.0, -30.0),
            Vec3::new(30.0, 0.0, 30.0),
        ));
        let spot = lighting.add_light(
            Light::spot(Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y, 0.7, 10.0, 1.0)
                .with_resolution(16)
                .with_depth(depth),
        );
        // Every tile drawn (the texture asks for the whole map).
        let all = lighting.map(spot).unwrap().texture().clone();
        let drawn = |l: &Lighting| l.rendered_map(spot).and_then(|m| m.tiles_drawn());
        let (tiles, count) = drawn(&lighting).unwrap();
        assert_eq!(tiles, count);
        // Near the map's far corner: 9.5 down, 90 % of the way to the frustum's edge in x and
        // z, so more than the range (10) from the light yet inside the map: its tile is
        // forgotten (a 16² map is one tile).
        let t = 0.7f32.tan() * 9.5 * 0.9;
        let corner = Vec3::new(t, 0.5, t);
        assert!(corner.distance(Vec3::new(0.0, 10.0, 0.0)) > 10.0);
        let generation = lighting.light_generation();
        lighting.add_occluder(Occluder::cuboid(corner, corner + Vec3::splat(0.1)));
        assert_eq!(drawn(&lighting).map(|d| d.0), Some(0), "{depth:?}");
        assert_ne!(lighting.light_generation(), generation);
        let redrawn = lighting.map(spot).unwrap().texture().clone();
        let fresh = ShadowMap::render(lighting.light(spot).unwrap().clone(), lighting.scene());
        assert_eq!(
            redrawn.bytes(),
            fresh.unwrap().texture().bytes(),
            "{depth:?}"
        );
        assert_eq!(all.bytes().len(), redrawn.bytes().len());
        // Far outside the frustum: nothing forgotten.
        let generation = lighting.light_generation();
        lighting.add_occluder(Occluder::cuboid(
            Vec3::new(25.0, 0.0, 25.0),
            Vec3::new(26.0, 1.0, 26.0),
        ));
        assert_eq!(drawn(&lighting), Some((1, 1)), "{depth:?}");
        assert_eq!(lighting.light_generation(), generation);
    }
}

#[test]
fn reversing_a_light_flips_its_depth_bias_so_it_still_pushes_casters_away() {
    let forward = Light::spot(Vec3::ZERO, Vec3::NEG_Y, 0.5, 10.0, 1.0);
    let reverse = forward.clone().with_depth(DepthConvention::Reverse);
    assert_eq!(
        reverse.bias.raster.slope_scaled_depth_bias,
        -forward.bias.raster.slope_scaled_depth_bias
    );
    assert_eq!(
        reverse.sampler.comparison_func,
        DepthConvention::Reverse.comparison()
    );
    // Setting the same convention again changes nothing; going back restores the bias.
    let again = reverse.clone().with_depth(DepthConvention::Reverse);
    assert_eq!(again.bias, reverse.bias);
    assert_eq!(
        reverse.with_depth(DepthConvention::Forward).bias,
        forward.bias
    );
}
