//! Static samplers from RON: clear errors for bad tables, lookups by register and by name, and
//! lights that follow the table.
#![cfg(feature = "ron")]

mod support;

use bevy_penumbra::prelude::*;
use bevy_penumbra::samplers::SamplerTableError;
use bevy_penumbra::shadow::MapError;
use bevy_transform::prelude::*;
use glam::Vec3;
use penumbra_core::shadow::ShadowError;
use support::*;

/// A pixel-shader table: the engine's PCF sampler at s0, and samplers that always pass or never
/// pass the depth test.
const TABLE: &str = r#"(samplers: {
    "pcf": (Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT, ComparisonFunc: LESS_EQUAL,
            AddressU: BORDER, AddressV: BORDER, AddressW: BORDER, BorderColor: OPAQUE_WHITE,
            ShaderRegister: 0, ShaderVisibility: PIXEL),
    "always": (Filter: COMPARISON_MIN_MAG_MIP_POINT, ComparisonFunc: ALWAYS,
               ShaderRegister: 1, RegisterSpace: 2, ShaderVisibility: PIXEL),
    "never": (Filter: COMPARISON_MIN_MAG_MIP_POINT, ComparisonFunc: NEVER, ShaderRegister: 2),
    "linear": (Filter: MIN_MAG_MIP_LINEAR, ShaderRegister: 3),
})"#;

#[test]
fn an_invalid_entry_fails_with_a_message_naming_it() {
    let bad = r#"(samplers: {
        "pcf": (Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT),
        "shadow": (Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT, ComparisonFunc: NONE, ShaderRegister: 1),
    })"#;
    let err = PenumbraPlugin::default()
        .try_with_sampler_ron(bad)
        .unwrap_err();
    assert!(matches!(err, SamplerTableError::Invalid { path: None, .. }));
    assert_eq!(
        err.to_string(),
        "bevy_penumbra: invalid static sampler table: static sampler 1 (shadow): ComparisonFunc = \
         NONE: comparison filter COMPARISON_MIN_MAG_LINEAR_MIP_POINT needs NEVER..ALWAYS (1..8) \
         (SPEC R11; DXC root-signature validator)"
    );
}

#[test]
fn a_syntax_error_reports_line_and_column() {
    let err = StaticSamplers::from_ron("(samplers: {\n  \"pcf\": (Filter: NOT_A_FILTER),\n})")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("bevy_penumbra: invalid static sampler table: RON 2:"),
        "{err}"
    );
    assert!(err.contains("NOT_A_FILTER"), "{err}");
}

#[test]
fn two_samplers_on_one_register_are_rejected() {
    let err = StaticSamplers::from_ron(
        r#"(samplers: {
            "a": (Filter: COMPARISON_MIN_MAG_MIP_POINT, ShaderRegister: 4, ShaderVisibility: ALL),
            "b": (Filter: COMPARISON_MIN_MAG_MIP_POINT, ShaderRegister: 4, ShaderVisibility: PIXEL),
        })"#,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("static samplers 0 (a) and 1 (b) both bind s4, space0 for PIXEL"),
        "{err}"
    );
}

#[test]
fn file_errors_name_the_file() {
    let missing = std::env::temp_dir().join("bevy_penumbra-no-such-samplers.ron");
    let err = PenumbraPlugin::default()
        .try_with_sampler_file(&missing)
        .unwrap_err();
    assert!(matches!(err, SamplerTableError::Read { .. }));
    assert!(
        err.to_string()
            .contains("bevy_penumbra-no-such-samplers.ron"),
        "{err}"
    );

    let path = std::env::temp_dir().join(format!("bevy_penumbra-bad-{}.ron", std::process::id()));
    std::fs::write(&path, "[(Filter: ANISOTROPIC, MaxAnisotropy: 17)]").unwrap();
    let err = StaticSamplers::from_file(&path).unwrap_err().to_string();
    std::fs::remove_file(&path).unwrap();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains("static sampler 0: MaxAnisotropy = 17"),
        "{err}"
    );
}

#[test]
fn a_valid_file_loads() {
    let path = std::env::temp_dir().join(format!("bevy_penumbra-good-{}.ron", std::process::id()));
    std::fs::write(&path, TABLE).unwrap();
    let samplers = StaticSamplers::from_file(&path);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(samplers.unwrap().table().len(), 4);
}

/// A level whose only light uses `sampler`; returns (app, light, probe under the box, probe in
/// the open).
fn level(
    sampler: ShadowSampler,
) -> (
    bevy_app::App,
    bevy_ecs::entity::Entity,
    [bevy_ecs::entity::Entity; 2],
) {
    let mut app = app_with(
        PenumbraPlugin::default()
            .try_with_sampler_ron(TABLE)
            .unwrap(),
    );
    floor(&mut app);
    crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    let light = app
        .world_mut()
        .spawn((
            ShadowLight::directional(1.0)
                .with_resolution(256)
                .with_sampler(sampler),
            Transform::default().looking_to(Vec3::NEG_Y, Vec3::Z),
        ))
        .id();
    let under = probe(&mut app, Vec3::new(0.0, 0.5, 0.0));
    let open = probe(&mut app, Vec3::new(8.0, 0.5, 0.0));
    app.update();
    (app, light, [under, open])
}

#[test]
fn lights_use_samplers_by_register_and_by_name() {
    // By register, for the pixel stage: s0 is the PCF sampler; s1, space2 always passes.
    let (app, _, [under, open]) = level(ShadowSampler::Register {
        register: 0,
        space: 0,
    });
    assert_eq!(
        (exposure(&app, under).total(), exposure(&app, open).total()),
        (0.0, 1.0)
    );
    let (app, _, [under, open]) = level(ShadowSampler::Register {
        register: 1,
        space: 2,
    });
    assert_eq!(
        (exposure(&app, under).total(), exposure(&app, open).total()),
        (1.0, 1.0)
    );
    // By name.
    let (app, light, [under, open]) = level(ShadowSampler::Named("never".into()));
    assert_eq!(
        (exposure(&app, under).total(), exposure(&app, open).total()),
        (0.0, 0.0)
    );
    let desc = app
        .world()
        .resource::<ShadowMaps>()
        .get(light)
        .unwrap()
        .map()
        .sampler_desc()
        .comparison_func;
    assert_eq!(desc, penumbra_core::ComparisonFunc::Never);
}

#[test]
fn an_unknown_or_non_comparison_sampler_is_an_error_not_a_map() {
    let (app, light, [under, _]) = level(ShadowSampler::Named("missing".into()));
    let maps = app.world().resource::<ShadowMaps>();
    assert!(maps.get(light).is_none());
    let err = maps.error(light).unwrap();
    assert_eq!(
        err,
        &MapError::SamplerNotFound(ShadowSampler::Named("missing".into()))
    );
    assert_eq!(
        err.to_string(),
        "no static sampler \"missing\" in the StaticSamplers table (SPEC R119)"
    );
    assert!(exposure(&app, under).lights().is_empty());

    // Register 1 exists in space 2 only.
    let (app, light, _) = level(ShadowSampler::Register {
        register: 1,
        space: 0,
    });
    let err = app
        .world()
        .resource::<ShadowMaps>()
        .error(light)
        .unwrap()
        .to_string();
    assert!(err.contains("register(s1, space0) for PIXEL"), "{err}");

    let (app, light, _) = level(ShadowSampler::Named("linear".into()));
    assert!(matches!(
        app.world().resource::<ShadowMaps>().error(light),
        Some(MapError::Shadow(ShadowError::NotComparison(_)))
    ));
}

#[test]
fn replacing_the_table_rerenders_the_lights_that_use_it() {
    let (mut app, light, [under, _]) = level(ShadowSampler::Named("pcf".into()));
    assert_eq!(exposure(&app, under).total(), 0.0);
    // Hot reload: "pcf" now always passes.
    let reloaded = TABLE.replace("ComparisonFunc: LESS_EQUAL", "ComparisonFunc: ALWAYS");
    app.insert_resource(StaticSamplers::from_ron(&reloaded).unwrap());
    app.update();
    assert_eq!(diagnostics(&app).shadow_maps_rendered, 1);
    assert_eq!(exposure(&app, under).total(), 1.0);
    assert!(app.world().resource::<ShadowMaps>().get(light).is_some());
}
