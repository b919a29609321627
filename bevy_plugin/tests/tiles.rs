//! The plugin's maps are drawn tile by tile as probes need them and redrawn only where an
//! occluder moved: through random moves over many frames, every probe's answer equals the one
//! a map freshly rendered whole from the same scene gives, and a still scene draws no tile.

mod support;

use bevy_penumbra::prelude::*;
use bevy_transform::prelude::*;
use glam::Vec3;
use penumbra_core::shadow::ShadowMap;
use penumbra_testkit::Rng;
use support::*;

#[test]
fn moving_crates_give_the_answers_of_freshly_rendered_maps_every_frame() {
    let mut rng = Rng::lcg64(0x7e57);
    let mut app = app();
    floor(&mut app);
    let crates: Vec<_> = (0..12)
        .map(|_| {
            let at = Vec3::new(rng.f32_in(-15.0, 15.0), 1.0, rng.f32_in(-15.0, 15.0));
            crate_box(&mut app, at)
        })
        .collect();
    let sun = app
        .world_mut()
        .spawn((
            ShadowLight::directional(1.0).with_resolution(1024),
            Transform::default().looking_to(Vec3::new(0.3, -1.0, 0.2), Vec3::Z),
        ))
        .id();
    let lamp = app
        .world_mut()
        .spawn((
            ShadowLight::spot(0.7, 25.0, 30.0).with_resolution(512),
            Transform::from_xyz(2.0, 10.0, -1.0).looking_at(Vec3::ZERO, Vec3::Z),
        ))
        .id();
    let probes: Vec<_> = (0..60)
        .map(|_| {
            let at = Vec3::new(rng.f32_in(-18.0, 18.0), 0.1, rng.f32_in(-18.0, 18.0));
            (probe(&mut app, at), at)
        })
        .collect();
    let mut shadowed = 0;
    for frame in 0..10 {
        if frame > 0 {
            for _ in 0..3 {
                let k = (rng.f32_unit() * crates.len() as f32) as usize % crates.len();
                let at = Vec3::new(rng.f32_in(-15.0, 15.0), 1.0, rng.f32_in(-15.0, 15.0));
                move_to(&mut app, crates[k], at);
            }
        }
        app.update();
        let maps = app.world().resource::<ShadowMaps>();
        let lighting = maps.lighting();
        for light in [sun, lamp] {
            let map = maps.get(light).expect("rendered").map();
            assert!(map.tiles_drawn().is_some(), "tiled");
            let fresh = ShadowMap::render(map.light().clone(), lighting.scene()).unwrap();
            for &(entity, at) in &probes {
                let got = exposure(&app, entity);
                // A probe outside the lamp's cone has no share of it.
                let Some(share) = got.light(light) else {
                    continue;
                };
                let want = fresh.lit_fraction(at, None);
                assert_eq!(
                    share.lit_fraction.to_bits(),
                    want.to_bits(),
                    "frame {frame}, light {light:?}, probe at {at}"
                );
                shadowed += usize::from(want < 1.0);
            }
        }
    }
    assert!(shadowed > 20, "{shadowed}");
    // Nothing moves: no tile is drawn, none forgotten.
    app.update();
    app.update();
    let d = diagnostics(&app);
    assert_eq!((d.tiles_rendered, d.tiles_invalidated), (0, 0), "{d:?}");
    assert_eq!(d.shadow_maps_rendered, 0);
}
