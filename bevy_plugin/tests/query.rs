//! `ShadowQuery`: the same answers as the components, and no panics without an answer.

mod support;

use bevy_app::{App, PostUpdate};
use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemState;
use bevy_penumbra::prelude::*;
use bevy_transform::prelude::*;
use glam::Vec3;
use support::*;

/// A floor, two boxes, a sun, a spot and a point light, a grid of probes (some on shadow
/// edges) and a guard watching three targets.
fn level() -> (App, Vec<Entity>) {
    let mut app = app();
    floor(&mut app);
    crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    crate_box(&mut app, Vec3::new(-5.0, 1.0, 4.0));
    app.world_mut().spawn((
        ShadowLight::directional(1.0)
            .with_resolution(256)
            .with_kernel(PcfKernel::PCF_3X3),
        Transform::default().looking_to(Vec3::new(0.3, -1.0, 0.2), Vec3::Y),
        Name::new("sun"),
    ));
    app.world_mut().spawn((
        ShadowLight::spot(0.7, 14.0, 30.0).with_resolution(128),
        Transform::from_xyz(2.0, 7.0, 1.0).looking_at(Vec3::new(0.0, 0.0, 0.0), Vec3::Z),
        Name::new("lamp"),
    ));
    app.world_mut().spawn((
        ShadowLight::point(9.0, 12.0)
            .with_resolution(64)
            .with_kernel(PcfKernel::PCF_5X5),
        Transform::from_xyz(-3.0, 2.5, 1.0),
    ));
    let mut probes = Vec::new();
    for i in 0..9 {
        for j in 0..9 {
            let at = Vec3::new(
                -8.0 + 2.0 * i as f32,
                0.5 + 0.1 * j as f32,
                -8.0 + 2.0 * j as f32,
            );
            probes.push(probe(&mut app, at));
        }
    }
    (app, probes)
}

#[test]
fn shadow_query_agrees_with_exposure_components() {
    let (mut app, probes) = level();
    app.update();
    let points: Vec<Vec3> = probes
        .iter()
        .map(|&p| app.world().get::<GlobalTransform>(p).unwrap().translation())
        .collect();
    let components: Vec<Exposure> = probes.iter().map(|&p| exposure(&app, p)).collect();
    let (mut shadowed, mut partial) = (0, 0);
    with_query(&mut app, |q| {
        for (point, component) in points.iter().zip(&components) {
            let total = q.exposure(*point);
            let lit = q.lit_fraction(*point);
            assert_eq!(
                total.map(f32::to_bits),
                Some(component.total().to_bits()),
                "at {point}"
            );
            assert_eq!(
                lit.map(f32::to_bits),
                component.lit_fraction().map(f32::to_bits)
            );
            assert_eq!(q.probe(&[*point], None).as_ref(), Some(component));
            for share in component.lights() {
                // The share is reach·lit / reach, the map's own value to the last bit or two.
                let direct = q.lit_fraction_from(share.light, *point).unwrap();
                assert!(
                    (direct - share.lit_fraction).abs() <= 1e-6,
                    "{direct} vs {share:?}"
                );
                shadowed += usize::from(share.lit_fraction == 0.0);
                partial += usize::from(share.lit_fraction > 0.0 && share.lit_fraction < 1.0);
            }
        }
    });
    assert!(shadowed > 0, "the level has shadowed probes");
    assert!(partial + shadowed < points.len() * 3, "and lit ones");
}

#[test]
fn shadow_query_runs_in_game_systems_after_the_query_set() {
    #[derive(Resource, Default)]
    struct Seen(Vec<(Option<f32>, f32)>);

    fn compare(
        query: ShadowQuery,
        probes: Query<(&GlobalTransform, &Exposure)>,
        mut seen: ResMut<Seen>,
    ) {
        for (transform, exposure) in &probes {
            seen.0
                .push((query.exposure(transform.translation()), exposure.total()));
        }
    }

    let (mut app, probes) = level();
    app.init_resource::<Seen>()
        .add_systems(PostUpdate, compare.after(PenumbraSystems::Query));
    app.update();
    let seen = &app.world().resource::<Seen>().0;
    assert_eq!(seen.len(), probes.len());
    for (query, component) in seen {
        assert_eq!(*query, Some(*component));
    }
}

#[test]
fn no_answer_is_none_or_an_error_never_a_panic() {
    // No plugin at all.
    let mut bare = App::new();
    let mut state = SystemState::<ShadowQuery>::new(bare.world_mut());
    let q = state
        .get(bare.world())
        .expect("ShadowQuery is valid without the plugin");
    let nobody = Entity::from_raw_u32(7).unwrap();
    assert_eq!(q.lit_fraction(Vec3::ZERO), None);
    assert_eq!(q.exposure(Vec3::ZERO), None);
    assert_eq!(
        q.lit_fraction_from(nobody, Vec3::ZERO),
        Err(QueryError::NoMap(nobody))
    );
    assert_eq!(
        q.can_see(nobody, Vec3::ZERO),
        Err(QueryError::NoEyeMap(nobody))
    );
    assert_eq!(
        q.sample_cmp("sun", [0.5, 0.5], 0.5, ()),
        Err(QueryError::UnknownName("sun".into()))
    );

    // The plugin, before the first frame and after it.
    let (mut app, _) = level();
    assert_eq!(with_query(&mut app, |q| q.exposure(Vec3::ZERO)), None);
    app.update();
    let far = Vec3::new(500.0, 0.5, 500.0);
    with_query(&mut app, |q| {
        // Outside every map: unshadowed by the sun (its full intensity), past the spot and
        // point lights' ranges (nothing from them).
        assert_eq!(q.lit_fraction(far), Some(1.0), "outside every map");
        assert_eq!(q.exposure(far), Some(1.0));
        assert_eq!(q.exposure(Vec3::NAN), None);
        assert_eq!(q.lit_fraction_from("lamp", far), Ok(1.0));
        assert!(matches!(
            q.lit_fraction_from("sun", Vec3::INFINITY),
            Err(QueryError::NotFinite(_))
        ));
        assert_eq!(
            q.lit_fraction_from("moon", Vec3::ZERO),
            Err(QueryError::UnknownName("moon".into()))
        );
    });
}

#[test]
fn sample_cmp_is_the_shaders_sample_cmp_level_zero() {
    let (mut app, _) = level();
    app.update();
    with_query(&mut app, |q| {
        let sun = q.shadow_map("sun").unwrap();
        for (coord, reference) in [([0.5, 0.5], 0.3), ([0.25, 0.7], 0.9), ([1.5, -0.2], 0.5)] {
            let expected = sun
                .sampler()
                .sample_cmp_level_zero(Some(sun.texture()), coord, reference, ())
                .unwrap();
            assert_eq!(q.sample_cmp("sun", coord, reference, ()), Ok(expected));
        }
        // LESS_EQUAL against depths in [0, 1]: a reference of 0 always passes, outside the map
        // the OPAQUE_WHITE border is lit.
        assert_eq!(q.sample_cmp("sun", [0.5, 0.5], 0.0, ()), Ok(1.0));
        assert_eq!(q.sample_cmp("sun", [3.0, 3.0], 1.0, ()), Ok(1.0));
        assert_eq!(q.sample_cmp("sun", [0.5, 0.5], 0.0, [1, -1]), Ok(1.0));
        // The point light's cube: offsets are undefined on cubes (R40), a typed error.
        let cube = q
            .maps()
            .unwrap()
            .iter()
            .find(|m| m.name().is_none())
            .unwrap()
            .entity();
        assert!(q.sample_cmp(cube, [1.0, 0.0, 0.0], 0.5, ()).is_ok());
        assert!(matches!(
            q.sample_cmp(cube, [1.0, 0.0, 0.0], 0.5, [1, 0, 0]),
            Err(QueryError::Sample(_))
        ));
    });
}

/// Many probes of every shape — several points, a surface normal (in runs and alone), no
/// points at all — spread over several parallel tasks: each component equals `ShadowQuery::probe`
/// at the same points to the bit (the batched system and the one-probe query sum in the same
/// order).
#[test]
fn batched_exposure_system_equals_the_query_for_every_probe_shape() {
    let (mut app, _) = level();
    let mut spawned = Vec::new();
    for k in 0..900u32 {
        let at = Vec3::new(
            -9.0 + (k % 30) as f32 * 0.61,
            0.3 + (k % 7) as f32 * 0.3,
            -9.0 + (k / 30) as f32 * 0.6,
        );
        let probe = match k % 9 {
            0..=3 => LightProbe::point(),
            4 => LightProbe::body(1.8),
            5 | 6 => LightProbe::point().with_normal(Vec3::Y),
            7 => LightProbe::new([Vec3::X, Vec3::NEG_X]).with_normal(Vec3::new(0.0, 1.0, 1.0)),
            _ => LightProbe::new([]),
        };
        let id = app
            .world_mut()
            .spawn((probe.clone(), Transform::from_translation(at)))
            .id();
        spawned.push((id, probe));
    }
    app.update();
    let mut compared = 0;
    let cases: Vec<(Vec<Vec3>, Option<Vec3>, Exposure)> = spawned
        .iter()
        .map(|(id, probe)| {
            let transform = app.world().get::<GlobalTransform>(*id).unwrap();
            let points = probe
                .offsets
                .iter()
                .map(|&o| transform.transform_point(o))
                .collect();
            (points, probe.normal, exposure(&app, *id))
        })
        .collect();
    with_query(&mut app, |q| {
        for (points, normal, component) in &cases {
            let expected = q.probe(points, *normal).unwrap_or_default();
            assert_eq!(&expected, component, "at {points:?} normal {normal:?}");
            compared += 1;
        }
    });
    assert_eq!(compared, 900);
    let d = app.world().resource::<PenumbraDiagnostics>();
    assert_eq!(d.probes_updated, 81 + 900);
}
