//! The live cross-check: penumbra against wgpu's Vulkan backend on Mesa's lavapipe.
//!
//! Needs `mesa-vulkan-drivers` and `libvulkan1` at run time. Without a CPU Vulkan adapter the
//! test fails when `CI` is set and otherwise prints SKIPPED and passes.
//!
//! Environment: `PENUMBRA_XCHECK_SEED` (decimal or 0x hex) replaces the fixed seed;
//! `PENUMBRA_XCHECK_VERBOSE` prints every mismatch and every order-dependent answer;
//! `PENUMBRA_XCHECK_ADAPTER=gpu` runs on the first hardware adapter instead of lavapipe (judged
//! with the `nvidia` profile on an NVIDIA GPU, `d3d` on another); `PENUMBRA_XCHECK_OUT=DIR` writes
//! the scenario as `DIR/cases.json` and the first run's answers as `DIR/results.json`, for
//! `penumbra judge`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Instant;

use penumbra::judge::Profile;
use penumbra_xcheck::case::{Config, generate};
use penumbra_xcheck::export;
use penumbra_xcheck::gpu::{Gpu, natural_order, reversed_order};
use penumbra_xcheck::judge::judge;

/// Lookups a run must make at least (issue requirement).
const MIN_LOOKUPS: usize = 5000;

/// Writes straight to the process's stderr: libtest captures `print!`/`eprint!` of passing
/// tests, but the counts (and a skip) must show in every log.
fn show(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

#[test]
fn penumbra_agrees_with_lavapipe() {
    let start = Instant::now();
    let mut gpu = match Gpu::from_env() {
        Ok(gpu) => gpu,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "no Vulkan adapter in CI: {e} (install mesa-vulkan-drivers libvulkan1)"
            );
            show(&format!(
                "SKIPPED: no Vulkan adapter (install mesa-vulkan-drivers libvulkan1): {e}\n"
            ));
            return;
        }
    };
    let seed = penumbra_xcheck::seed_from_env();
    let scenario = generate(seed, &Config::default());
    let lookups = scenario.lookup_count();
    assert!(lookups >= MIN_LOOKUPS, "only {lookups} lookups");
    let t0 = Instant::now();
    let textures = gpu.upload(&scenario);
    let first = gpu.run(&scenario, &textures, &natural_order(&scenario.groups));
    let second = gpu.run(&scenario, &textures, &reversed_order(&scenario.groups));
    let t1 = Instant::now();
    let profile = match gpu.vendor() {
        _ if std::env::var("PENUMBRA_XCHECK_ADAPTER").is_err() => Profile::Lavapipe,
        0x10de => Profile::Nvidia,
        _ => Profile::D3d,
    };
    if let Some(dir) = std::env::var_os("PENUMBRA_XCHECK_OUT") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("PENUMBRA_XCHECK_OUT is a folder");
        let (cases, exported) = export::case_file(&scenario);
        let mut results = export::results(&scenario, &exported, &first);
        results["engine"]["adapter"] = gpu.adapter().into();
        results["engine"]["seed"] = format!("{seed:#x}").into();
        for (name, doc) in [("cases.json", &cases), ("results.json", &results)] {
            let text = serde_json::to_string(doc).expect("JSON");
            std::fs::write(dir.join(name), text + "\n").expect("write the exported files");
        }
    }
    let report = judge(&scenario, &first, &second, profile);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "penumbra vs {} (profile {profile})\nseed {seed:#x} (PENUMBRA_XCHECK_SEED): {} textures, {} samplers, \
         {} lookups, each run twice (natural and reversed order); generate {:.2?}, wgpu {:.2?}, \
         judge {:.2?}",
        gpu.adapter(),
        scenario.textures.len(),
        scenario.groups.len(),
        report.total,
        t0 - start,
        t1 - t0,
        t1.elapsed()
    );
    out.push_str(&report.summary());
    let _ = writeln!(
        out,
        "{} lookups answered differently (bit-wise) by lavapipe when their group ran in reverse \
         order; each run is judged on its own",
        report.order_dependent.len()
    );
    let verbose = std::env::var_os("PENUMBRA_XCHECK_VERBOSE").is_some();
    if verbose {
        for (i, m) in report.order_dependent.iter().enumerate() {
            let _ = writeln!(out, "order-dependent #{i}:\n{m}");
        }
    }
    let shown = if verbose { usize::MAX } else { 25 };
    for (i, m) in report.mismatches.iter().enumerate().take(shown) {
        let _ = writeln!(out, "MISMATCH #{i}:\n{m}");
    }
    show(&out);
    assert!(
        report.mismatches.is_empty(),
        "{} unexplained mismatches between penumbra and lavapipe (seed {seed:#x}); see above",
        report.mismatches.len()
    );
}
