//! The examples of docs/lua-api.md run: its ```lua blocks, joined in order into one script, on a
//! root whose output folder lies inside it (so saved pictures can be loaded back).

use std::time::Duration;

use penumbra_lua::{Runtime, RuntimeOptions};

const API: &str = include_str!("../../docs/lua-api.md");

#[test]
fn the_lua_api_examples_run() {
    let mut script = String::new();
    let mut inside = false;
    for line in API.lines() {
        match (inside, line.trim_end()) {
            (false, "```lua") => inside = true,
            (true, "```") => inside = false,
            (true, code) => {
                script.push_str(code);
                script.push('\n');
            }
            _ => {}
        }
    }
    assert!(script.contains("penumbra.sampler"), "no examples found");
    let dir = std::env::temp_dir().join(format!("penumbra-lua-docs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("models")).unwrap();
    // The OBJ file the scene examples load: a 2 × 1 × 2 slab of six quads, some written with
    // texture and normal indices, some with negative ones.
    std::fs::write(
        dir.join("models/slab.obj"),
        "# slab\no slab\nv -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\n\
         v -1 1 -1\nv 1 1 -1\nv 1 1 1\nv -1 1 1\nvt 0 0\nvn 0 1 0\n\
         f 1 4 3 2\nf 5/1/1 6/1/1 7/1/1 8/1/1\nf 1 2 6 5\nf 2 3 7 6\nf -5 -1 -2 -6\nf -4 -8 -5 -1\n",
    )
    .unwrap();
    let runtime = Runtime::new(
        RuntimeOptions::new(&dir)
            .out_dir(dir.join("penumbra-out"))
            .timeout(Duration::from_secs(10)),
    )
    .unwrap();
    if let Err(e) = runtime.run_str(&script, "lua-api.md") {
        panic!("{e}\n--- script ---\n{script}");
    }
}
