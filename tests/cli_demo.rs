//! `penumbra demo` as a user runs it: the report names every guard and the sprite's position,
//! the four pictures are PNGs that decode, and the level the Luau script builds gives the same
//! answers as the Rust sample level (`penumbra::level`) it mirrors.

use std::path::{Path, PathBuf};
use std::process::Command;

use glam::Vec3;
use penumbra::level::sample_level;

/// Where the demo places its sprite in its screenshot.
const SPRITE_AT: &str = "found at (211, 94)";

fn penumbra(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_penumbra"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run penumbra");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("penumbra-cli-demo-{}", std::process::id()))
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the demo into `dir/pictures` and returns its report.
fn demo(dir: &Path) -> String {
    let (code, stdout, stderr) = penumbra(dir, &["demo", "--out", "pictures"]);
    assert_eq!(code, Some(0), "{stderr}");
    stdout
}

#[test]
fn the_demo_reports_guards_and_the_sprite_and_writes_pictures_that_decode() {
    let dir = scratch("report");
    let report = demo(&dir);
    for part in [
        "guard-north",
        "guard-east",
        SPRITE_AT,
        "probes are lit",
        "lit  ",
        "dark ",
        "pictures/lit-area.png",
        "pictures/tiles.png",
        "of its 4096 tiles",
    ] {
        assert!(report.contains(part), "{part:?} missing from:\n{report}");
    }
    for (name, size) in [
        ("tiles.png", Some((2048, 2048))),
        ("shadow-map.png", Some((2048, 2048))),
        ("lit-area.png", Some((800, 800))),
        ("guard-view.png", Some((800, 800))),
        ("match-heatmap.png", None),
    ] {
        let bytes = std::fs::read(dir.join("pictures").join(name)).unwrap();
        assert!(!bytes.is_empty(), "{name} is empty");
        let img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Some(size) = size {
            assert_eq!((img.width(), img.height()), size, "{name}");
        }
    }
}

/// The columns of the demo's `probes.csv`.
struct Probe {
    pos: Vec3,
    exposure: f32,
    seen_by: String,
}

fn probes(csv: &str) -> Vec<Probe> {
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("pos.x,pos.y,pos.z,distance,exposure,lit,seenBy")
    );
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            let n = |i: usize| f[i].parse::<f32>().unwrap();
            Probe {
                pos: Vec3::new(n(0), n(1), n(2)),
                exposure: n(4),
                seen_by: f[6].to_owned(),
            }
        })
        .collect()
}

#[test]
fn the_demo_level_gives_the_rust_sample_levels_answers() {
    let dir = scratch("level");
    demo(&dir);
    let probes = probes(&std::fs::read_to_string(dir.join("pictures/probes.csv")).unwrap());
    assert!(probes.len() > 10);
    let level = sample_level();
    // The Rust level through the engine's Lighting, the same owner the Lua scene binds.
    let (lighting, _, eye_ids) = level.lighting();
    let eyes: Vec<_> = level
        .guards
        .iter()
        .zip(&eye_ids)
        .map(|(g, &id)| (g.name, lighting.eye_map(id).unwrap()))
        .collect();
    // The probes lie on the Rust level's path.
    let on_path = |p: Vec3| {
        level.path.windows(2).any(|w| {
            let (a, b) = (w[0], w[1]);
            let t = ((p - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
            a.lerp(b, t).distance(p) < 1e-4
        })
    };
    for probe in &probes {
        assert!(on_path(probe.pos), "{} is off the path", probe.pos);
        let want = lighting.exposure(probe.pos, Some(Vec3::Y)).unwrap().total();
        assert_eq!(probe.exposure.to_bits(), want.to_bits(), "at {}", probe.pos);
        let chest = probe.pos + Vec3::new(0.0, 1.2, 0.0);
        let seen: Vec<&str> = eyes
            .iter()
            .filter(|(_, eye)| eye.visible_fraction(chest, 0.3) >= 0.5)
            .map(|(name, _)| *name)
            .collect();
        let seen = if seen.is_empty() {
            "-".to_owned()
        } else {
            seen.join(" ")
        };
        assert_eq!(probe.seen_by, seen, "at {}", probe.pos);
    }
    // Both lit and dark stretches, seen and unseen ones: the report has something to say.
    assert!(probes.iter().any(|p| p.exposure == 0.0));
    assert!(probes.iter().any(|p| p.exposure > 0.5));
    assert!(probes.iter().any(|p| p.seen_by == "-"));
    assert!(probes.iter().any(|p| p.seen_by != "-"));
}

#[test]
fn the_demo_script_is_printed_for_copying() {
    let dir = scratch("script");
    let (code, stdout, _) = penumbra(&dir, &["demo", "--script"]);
    assert_eq!(code, Some(0));
    assert_eq!(stdout, include_str!("../src/demo/demo.luau"));
    assert!(!dir.join("penumbra-out").exists());
    // A copy runs with `penumbra run` as it is.
    std::fs::write(dir.join("demo.luau"), &stdout).unwrap();
    let (code, report, stderr) = penumbra(&dir, &["run", "demo.luau", "--out", "copy"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(report.contains(SPRITE_AT), "{report}");
    assert!(dir.join("copy/guard-view.png").is_file());
}

#[cfg(not(feature = "tracy"))]
#[test]
fn profiling_without_tracy_says_so_and_runs_anyway() {
    let dir = scratch("profile");
    let (code, stdout, stderr) = penumbra(&dir, &["demo", "--profile"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("built without Tracy"), "{stderr}");
    assert!(stdout.contains(SPRITE_AT));
    assert!(dir.join("penumbra-out/match-heatmap.png").is_file());
}

#[test]
fn an_unusable_output_folder_is_one_line_and_exit_1() {
    let dir = scratch("bad-out");
    std::fs::write(dir.join("taken"), "a file").unwrap();
    let (code, stdout, stderr) = penumbra(&dir, &["demo", "--out", "taken"]);
    assert_eq!(code, Some(1));
    assert!(stdout.is_empty());
    assert!(
        stderr.starts_with("penumbra: --out taken: exists and is not a folder"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
