//! Regressions found by the fuzz targets (`fuzz/`, issue 9), and the size limits (item 3) as the
//! front ends — case files and the Lua API — see them.

use std::time::{Duration, Instant};

use penumbra::cases::{CaseFile, CaseFileError};
use penumbra_lua::{Runtime, RuntimeOptions};

/// `cases_json`: a 3D texture of 2048×2048×1024 R8 is exactly 4 GiB, within D3D12's limits and
/// penumbra's byte guard. Reading it used to reserve all 4 GiB for the texel bytes before
/// looking at `data` (an abort under any memory limit), and to count its texels as
/// `w * h * d` in u32, which overflows at 2^32 (a panic in debug builds). A short file must be
/// refused at once with a clear error instead.
#[test]
fn a_4_gib_case_texture_without_its_data_is_refused_without_allocating() {
    for data in ["[[]]", "[[0]]", "[[0, 1, 2]]", "[{}]", "[\"x\"]"] {
        let text = format!(
            r#"{{"textures": [{{"dimension": "3D", "format": "R8_UNORM", "width": 2048,
                "height": 2048, "depth": 1024, "data": {data}}}], "cases": []}}"#
        );
        let start = Instant::now();
        let err = CaseFile::parse(&text).err().expect("refused");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{data}: took {:?}",
            start.elapsed()
        );
        let CaseFileError::Texture { index, reason, .. } = &err else {
            panic!("{data}: {err}");
        };
        assert_eq!(*index, 0);
        if data.starts_with("[[") {
            assert!(reason.contains("2048×2048×1024 texels"), "{reason}");
            assert!(reason.contains("need 4294967296"), "{reason}");
        } else {
            assert!(reason.contains("data[0] is not an array"), "{reason}");
        }
    }
}

/// The same for sizes past the guard or D3D12's limits: refused by the description alone.
#[test]
fn case_textures_past_the_limits_name_the_field() {
    let cases = [
        (
            r#""dimension": "3D", "width": 2048, "height": 2048, "depth": 2048"#,
            "more than the",
        ),
        (
            r#""dimension": "2D", "width": 16385, "height": 1"#,
            "texture width = 16385",
        ),
        (
            r#""dimension": "3D", "width": 2, "height": 2, "depth": 2049"#,
            "texture depth = 2049",
        ),
        (
            r#""dimension": "2DArray", "width": 1, "array_size": 2049"#,
            "array_size = 2049",
        ),
        (
            r#""dimension": "2D", "width": 16384, "height": 1, "mip_levels": 16"#,
            "mip_levels = 16",
        ),
        (r#""dimension": "2D", "width": 4294967296"#, "width"),
    ];
    for (fields, want) in cases {
        let text = format!(
            r#"{{"textures": [{{"format": "R8_UNORM", {fields}, "data": [[]]}}], "cases": []}}"#
        );
        let err = CaseFile::parse(&text).err().expect("refused").to_string();
        assert!(err.contains(want), "{fields}: {err}");
    }
}

fn runtime() -> (Runtime, std::path::PathBuf) {
    let root = std::env::temp_dir().join(format!("penumbra-regressions-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let rt = Runtime::new(
        RuntimeOptions::new(&root)
            .max_memory(64 << 20)
            .timeout(Duration::from_secs(5)),
    )
    .unwrap();
    (rt, root)
}

/// The Lua API refuses sizes past D3D12's limits, and sizes past the script's texture budget,
/// with an error naming the field — before allocating.
#[test]
fn lua_textures_past_the_limits_are_lua_errors() {
    let (rt, _) = runtime();
    let cases = [
        (r#"{format = "R8_UNORM", width = 16385}"#, "width = 16385"),
        (
            r#"{format = "R8_UNORM", width = 1, height = 16385}"#,
            "height = 16385",
        ),
        (
            r#"{format = "R8_UNORM", dimension = "3D", width = 2049, height = 1, depth = 1}"#,
            "width = 2049",
        ),
        (
            r#"{format = "R8_UNORM", dimension = "3D", width = 1, height = 1, depth = 2049}"#,
            "depth = 2049",
        ),
        (
            r#"{format = "R8_UNORM", dimension = "2DArray", width = 1, arraySize = 2049}"#,
            "arraySize",
        ),
        (
            r#"{format = "R8_UNORM", width = 16384, mipLevels = 16}"#,
            "mip",
        ),
        // 8 GiB: past the byte guard.
        (
            r#"{format = "R8_UNORM", dimension = "3D", width = 2048, height = 2048, depth = 2048}"#,
            "bytes",
        ),
        // 256 MiB: valid, but past this script's 64 MiB texture budget.
        (
            r#"{format = "R8_UNORM", width = 16384, height = 16384}"#,
            "does not fit",
        ),
        (r#"{format = "R8_UNORM", width = 0/0}"#, "width"),
        (r#"{format = "R8_UNORM", width = math.huge}"#, "width"),
        (r#"{format = "R8_UNORM", width = -1}"#, "width"),
    ];
    for (desc, want) in cases {
        let script = format!(
            "local ok, err = pcall(penumbra.texture, {desc})\n\
             assert(not ok)\n\
             return tostring(err)"
        );
        let start = Instant::now();
        let err: String = rt.eval(&script, "limits").unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{desc}: took {:?}",
            start.elapsed()
        );
        let line = err.lines().next().unwrap_or_default();
        assert!(line.contains("penumbra.texture"), "{desc}: {line}");
        assert!(line.contains(want), "{desc}: {line}");
        assert!(!line.contains("internal error"), "{desc}: {line}");
    }
}
