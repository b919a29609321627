//! The exposure rule (issue 14) against the shared table `tests/data/outside_map.txt`, which
//! the Lua and Bevy tests read too: the same scene through each layer gives the same bits.

use glam::Vec3;
use penumbra_core::shadow::{Aabb, Light, LightKind, Lighting, Occluder};

include!("data/outside_map.rs");

/// The rows with their points as vectors.
fn rows() -> Vec<(Vec3, f32, String)> {
    table_rows()
        .into_iter()
        .map(|(p, e, why)| (Vec3::from(p), e, why))
        .collect()
}

/// The table's scene.
fn lighting() -> Lighting {
    let mut lighting = Lighting::new();
    lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-10.0, -1.0, -10.0),
        Vec3::new(10.0, 0.0, 10.0),
    ));
    lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-1.0, 0.0, -1.0),
        Vec3::new(1.0, 2.0, 1.0),
    ));
    let mut sun = Light::directional(Vec3::NEG_Y, 0.5).with_resolution(256);
    if let LightKind::Directional { bounds, .. } = &mut sun.kind {
        *bounds = Some(Aabb {
            min: Vec3::new(-10.0, -1.0, -10.0),
            max: Vec3::new(10.0, 2.0, 10.0),
        });
    }
    lighting.add_light(sun);
    lighting.add_light(
        Light::spot(
            Vec3::new(0.0, 6.0, 0.0),
            Vec3::NEG_Y,
            30f32.to_radians(),
            10.0,
            20.0,
        )
        .with_resolution(128),
    );
    lighting
}

#[test]
fn the_shared_exposure_table_holds_in_core() {
    let lighting = lighting();
    let rows = rows();
    assert_eq!(rows.len(), 8);
    let points: Vec<Vec3> = rows.iter().map(|r| r.0).collect();
    let mut batch = vec![0.0; points.len()];
    lighting
        .exposures(&points, None, &mut batch, &mut Default::default())
        .unwrap();
    for ((p, want, why), got) in rows.iter().zip(batch) {
        let one = lighting.exposure(*p, None).unwrap().total();
        assert_eq!(
            one.to_bits(),
            want.to_bits(),
            "{p} ({why}): {one} = {:08x}",
            one.to_bits()
        );
        assert_eq!(got.to_bits(), want.to_bits(), "batched {p} ({why})");
    }
    // The lamp's row by hand: the sun's 0.5 plus the lamp's unshadowed light (cone 1 inside the
    // inner angle, inverse-square falloff windowed at the range).
    let lamp = lighting.lights().nth(1).unwrap().1;
    let d = Vec3::new(2.5, -6.0, 0.0).length();
    let window = (1.0 - (d / 10.0).powi(4)).clamp(0.0, 1.0);
    let by_hand = 0.5 + 20.0 * window * window / (d * d);
    let row = rows
        .iter()
        .find(|r| r.0 == Vec3::new(2.5, 0.0, 0.0))
        .unwrap();
    assert!((row.1 - by_hand).abs() < 1e-6, "{} vs {by_hand}", row.1);
    assert_eq!(
        lamp.unshadowed(Vec3::new(0.0, 7.0, 0.0)),
        0.0,
        "behind the lamp"
    );
}
