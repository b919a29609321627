//! `penumbra match` end to end: the built binary on PNGs made here.

use std::path::PathBuf;
use std::process::{Command, Output};

use penumbra::msad4::{Image, write_png};
use penumbra_testkit::Rng;

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("penumbra-cli-{}-{name}", std::process::id()))
}

fn penumbra(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_penumbra"))
        .args(args)
        .output()
        .expect("run penumbra")
}

/// A 200×150 noise image with a 16×12 sprite planted at (131, 77), written as grey PNG, and the
/// sprite as an RGBA PNG whose corners are transparent (alpha 0, colour left non-zero).
fn scene(tag: &str) -> (PathBuf, PathBuf) {
    let mut rng = Rng::xorshift64(0x1234_5678_9ABC_DEF1);
    let mut next = move || rng.byte_at(32);
    let (w, h, tw, th, px, py) = (200usize, 150usize, 16usize, 12usize, 131usize, 77usize);
    let mut pixels: Vec<u8> = (0..w * h).map(|_| next()).collect();
    let mut sprite = Vec::with_capacity(tw * th * 4);
    for y in 0..th {
        for x in 0..tw {
            let corner = (x < 3 || x >= tw - 3) && (y < 3 || y >= th - 3);
            let v = next().max(1);
            if corner {
                sprite.extend([200, 100, 50, 0]);
            } else {
                sprite.extend([v, v, v, 255]);
                pixels[(py + y) * w + px + x] = v;
            }
        }
    }
    let image = temp(&format!("{tag}-scene.png"));
    let template = temp(&format!("{tag}-sprite.png"));
    write_png(&Image::r8(w as u32, h as u32, pixels).unwrap(), &image).unwrap();
    write_png(
        &Image::rgba8(tw as u32, th as u32, sprite).unwrap(),
        &template,
    )
    .unwrap();
    (image, template)
}

fn stderr_line(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "one error line, got {err:?}");
    err.trim_end().to_string()
}

#[test]
fn finds_a_planted_sprite_with_transparent_corners() {
    let (image, template) = scene("find");
    let out = penumbra(&["match".as_ref(), image.as_os_str(), template.as_os_str()]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "x=131 y=77 sad=0\n");

    let heat = temp("heat.png");
    let out = penumbra(&[
        "match".as_ref(),
        image.as_os_str(),
        template.as_os_str(),
        "--top".as_ref(),
        "3".as_ref(),
        "--json".as_ref(),
        "--threads".as_ref(),
        "2".as_ref(),
        "--heatmap".as_ref(),
        heat.as_os_str(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = json.as_array().unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(list[0], serde_json::json!({"x": 131, "y": 77, "sad": 0}));
    assert!(list[1]["sad"].as_u64().unwrap() > 0);
    assert!(std::fs::read(&heat).unwrap().starts_with(b"\x89PNG"));

    let out = penumbra(&[
        "match".as_ref(),
        image.as_os_str(),
        template.as_os_str(),
        "--max-sad".as_ref(),
        "0".as_ref(),
        "--top".as_ref(),
        "5".as_ref(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "x=131 y=77 sad=0\n");
    for p in [image, template, heat] {
        std::fs::remove_file(p).ok();
    }
}

#[test]
fn bad_path_gives_one_clear_line_and_failure() {
    let missing = temp("does-not-exist.png");
    let (image, template) = scene("bad-path");
    let out = penumbra(&["match".as_ref(), missing.as_os_str(), template.as_os_str()]);
    assert!(!out.status.success());
    let line = stderr_line(&out);
    assert!(line.starts_with("penumbra: "), "{line}");
    assert!(line.contains(&*missing.to_string_lossy()), "{line}");
    assert!(out.stdout.is_empty());
    std::fs::remove_file(image).ok();
    std::fs::remove_file(template).ok();
}

#[test]
fn non_image_file_gives_one_clear_line_and_failure() {
    let text = temp("notes.png");
    std::fs::write(&text, "these are notes, not pixels\n").unwrap();
    let (image, template) = scene("non-image");
    let out = penumbra(&["match".as_ref(), image.as_os_str(), text.as_os_str()]);
    assert!(!out.status.success());
    let line = stderr_line(&out);
    assert!(line.starts_with("penumbra: "), "{line}");
    assert!(line.contains("not a PNG image"), "{line}");
    for p in [image, template, text] {
        std::fs::remove_file(p).ok();
    }
}

#[test]
fn template_larger_than_image_is_an_error() {
    let small = temp("small.png");
    let big = temp("big.png");
    write_png(&Image::r8(4, 4, vec![9; 16]).unwrap(), &small).unwrap();
    write_png(&Image::r8(5, 5, vec![9; 25]).unwrap(), &big).unwrap();
    let out = penumbra(&["match".as_ref(), small.as_os_str(), big.as_os_str()]);
    assert!(!out.status.success());
    assert_eq!(
        stderr_line(&out),
        "penumbra: template 5×5 is larger than the image 4×4"
    );
    std::fs::remove_file(small).ok();
    std::fs::remove_file(big).ok();
}

/// The sprite of a black outline and its white-outlined look-alike (issue 17): RGBA with alpha
/// masking is the default, as in the Lua API, so the true sprite ranks first; `--mask msad4`
/// keeps the intrinsic's rule and `--luma` compares one byte a pixel.
#[test]
fn default_matching_counts_an_opaque_black_outline() {
    let px = |x: u32, y: u32, outline: u8| -> [u8; 4] {
        if x == 0 && y == 0 {
            [0, 0, 0, 0]
        } else if x == 0 || y == 0 || x == 5 || y == 5 {
            [outline, outline, outline, 255]
        } else {
            [200, 30, 40, 255]
        }
    };
    let sprite: Vec<u8> = (0..36).flat_map(|i| px(i % 6, i / 6, 0)).collect();
    let mut screen = vec![90u8; 32 * 20 * 4];
    for (ox, oy, outline) in [(2u32, 3u32, 255u8), (20, 10, 0)] {
        for i in 0..36u32 {
            let p = px(i % 6, i / 6, outline);
            let at = (((oy + i / 6) * 32 + ox + i % 6) * 4) as usize;
            if p[3] != 0 {
                screen[at..at + 4].copy_from_slice(&p);
            }
        }
    }
    let (image, template) = (temp("outline-screen.png"), temp("outline-sprite.png"));
    write_png(&Image::rgba8(32, 20, screen).unwrap(), &image).unwrap();
    write_png(&Image::rgba8(6, 6, sprite).unwrap(), &template).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["match".as_ref(), image.as_os_str(), template.as_os_str()];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let out = penumbra(&args);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(run(&[]), "x=20 y=10 sad=0\n");
    assert_eq!(run(&["--mask", "alpha"]), "x=20 y=10 sad=0\n");
    assert_eq!(run(&["--mask", "msad4"]), "x=2 y=3 sad=0\n");
    assert_eq!(run(&["--luma"]), "x=2 y=3 sad=0\n");
    assert_eq!(run(&["--rgba"]), "x=20 y=10 sad=0\n");
    let out = penumbra(&[
        "match".as_ref(),
        image.as_os_str(),
        template.as_os_str(),
        "--luma".as_ref(),
        "--mask".as_ref(),
        "alpha".as_ref(),
    ]);
    assert!(!out.status.success());
    assert!(stderr_line(&out).contains("alpha masking needs an RGBA8 template"));
    let help = penumbra(&["match".as_ref(), "--help".as_ref()]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--mask") && help.contains("black included"),
        "{help}"
    );
    std::fs::remove_file(image).ok();
    std::fs::remove_file(template).ok();
}
