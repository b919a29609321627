//! PNG loading: `penumbra_core::msad4::decode_png` (R8 and RGBA8) and the Lua API's
//! `penumbra.loadTexture` (a file under the script root; 8/16-bit gray and RGBA, optional mip
//! chain). Any bytes: no panic, no abort on allocation (the decoders' limits refuse huge
//! headers); a decoded image re-encodes and decodes to the same pixels.
#![no_main]

use std::cell::RefCell;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use penumbra_core::msad4::{Channels, decode_png, encode_png};
use penumbra_lua::{Runtime, RuntimeOptions};

struct Lua {
    dir: std::path::PathBuf,
    runtime: Runtime,
}

thread_local! {
    static LUA: RefCell<Option<Lua>> = const { RefCell::new(None) };
}

fn with_lua(f: impl FnOnce(&Lua)) {
    LUA.with(|cell| {
        let mut cell = cell.borrow_mut();
        let lua = cell.get_or_insert_with(|| {
            let dir =
                std::env::temp_dir().join(format!("penumbra-fuzz-png-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("a temporary folder");
            let runtime = Runtime::new(
                RuntimeOptions::new(&dir)
                    .max_memory(64 << 20)
                    .timeout(Duration::from_secs(2)),
            )
            .expect("a Lua runtime");
            Lua { dir, runtime }
        });
        f(lua);
    });
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the Lua options; the rest is the file.
    let (mode, bytes) = data.split_first().map_or((0, data), |(m, b)| (*m, b));
    for channels in [Channels::R8, Channels::Rgba8] {
        match decode_png(bytes, channels) {
            Ok(image) => {
                let png = encode_png(&image).expect("an image encodes");
                let back = decode_png(&png, channels).expect("our own PNG decodes");
                assert_eq!(back, image, "PNG round trip changed the pixels");
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    with_lua(|lua| {
        std::fs::write(lua.dir.join("in.png"), bytes).expect("write the input");
        let options = match mode % 4 {
            0 => "",
            1 => ", { mipLevels = \"full\" }",
            2 => ", { mipLevels = 3, mipFilter = \"max\" }",
            _ => ", { mipLevels = 40 }",
        };
        let script = format!(
            "local ok, t = pcall(penumbra.loadTexture, \"in.png\"{options})\n\
             if ok then\n\
               local w, h = t:size(0)\n\
               local r, g, b, a = t:get(0, 0)\n\
               local lw, lh = t:size(t.mipLevels - 1)\n\
               local r2 = t:get(lw - 1, lh - 1, t.mipLevels - 1)\n\
               return w * h\n\
             end\n\
             return 0"
        );
        match lua.runtime.eval::<f64>(&script, "png") {
            Ok(_) => {}
            Err(e) => {
                let text = e.to_string();
                assert!(!text.contains("internal error"), "{text}");
            }
        }
        let _ = lua.runtime.lua().gc_collect();
    });
});
