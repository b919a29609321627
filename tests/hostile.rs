//! Hostile input, second pass (issue 13): what a user who tries to break penumbra meets. Every
//! command ends with a clear error or D3D's answer — never a panic, an abort, a hang or lost
//! output.
//!
//! Each test drives the `penumbra` binary in a child process, the way a user or a build script
//! would, so exit statuses, signals, rlimits and peak memory are the real ones.

#![cfg(unix)]

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How far past its `--timeout` a run may end: the target is 100 ms; the margin covers a
/// loaded 2-core CI machine starting the process.
const OVERRUN: Duration = Duration::from_millis(400);

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_penumbra"))
}

struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    /// Peak resident memory of the child, in bytes.
    max_rss: u64,
}

/// Runs `cmd` to the end, watching its peak memory.
fn run(mut cmd: Command) -> Run {
    let start = Instant::now();
    let out_path = scratch("out").join("stdout");
    let err_path = out_path.with_file_name("stderr");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("penumbra starts");
    let (status, max_rss) = wait_watching_memory(&mut child);
    Run {
        status,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
        elapsed: start.elapsed(),
        max_rss,
    }
}

/// Waits for the child, reading its peak resident memory (`VmHWM`) every few milliseconds
/// while it runs. (`wait4`'s `ru_maxrss` cannot be used: Linux carries the high-water mark of
/// the forking test process across the exec.)
fn wait_watching_memory(child: &mut std::process::Child) -> (ExitStatus, u64) {
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb * 1024);
        }
        if let Some(status) = child.try_wait().expect("wait for penumbra") {
            return (status, peak);
        }
        std::thread::sleep(Duration::from_millis(3));
    }
}

fn scratch(name: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "penumbra-hostile-{}-{name}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A folder holding `main.luau` with `script`.
fn script_dir(name: &str, script: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("main.luau"), script).unwrap();
    dir
}

fn penumbra_run(dir: &Path, extra: &[&str]) -> Command {
    let mut cmd = bin();
    cmd.current_dir(dir).arg("run").arg("main.luau").args(extra);
    cmd
}

const PCF_CASES: &str = r#"{
  "textures": [{"id": "shadow", "dimension": "2D", "format": "R32_FLOAT", "width": 2, "height": 2,
                "data": [[0.3, 0.6, 0.6, 0.9]]}],
  "cases": [{"id": "pcf", "texture": "shadow", "op": "sample_c_lz", "coord": [0.5, 0.5], "ref": 0.5,
             "sampler": {"Filter": "COMPARISON_MIN_MAG_LINEAR_MIP_POINT", "ComparisonFunc": "LESS_EQUAL"}}]
}"#;

/// A small PNG pair for `match`: a noisy image and a patch of it.
fn match_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    use penumbra::msad4::{Image, write_png};
    let (w, h) = (64u32, 48u32);
    let px: Vec<u8> = (0..u64::from(w * h))
        .map(penumbra_testkit::noise_byte)
        .collect();
    let mut tpl = Vec::new();
    for y in 0..8 {
        let at = ((10 + y) * w + 20) as usize;
        tpl.extend_from_slice(&px[at..at + 8]);
    }
    let (image, template) = (dir.join("image.png"), dir.join("sprite.png"));
    write_png(&Image::r8(w, h, px).unwrap(), &image).unwrap();
    write_png(&Image::r8(8, 8, tpl).unwrap(), &template).unwrap();
    (image, template)
}

/// Every command whose job is to print: `(args, current folder)`.
fn printing_commands() -> Vec<(Vec<String>, PathBuf)> {
    let dir = scratch("printing");
    std::fs::write(dir.join("cases.json"), PCF_CASES).unwrap();
    let (image, template) = match_inputs(&dir);
    std::fs::write(
        dir.join("main.luau"),
        "for i = 1, 3 do print('line', i) end\n",
    )
    .unwrap();
    let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let (i, t) = (image.to_str().unwrap(), template.to_str().unwrap());
    vec![
        (s(&["sample", "cases.json"]), dir.clone()),
        (s(&["match", i, t]), dir.clone()),
        (s(&["match", i, t, "--json"]), dir.clone()),
        (s(&["demo", "--script"]), dir.clone()),
        (s(&["run", "main.luau"]), dir.clone()),
        (s(&["--help"]), dir.clone()),
    ]
}

#[test]
fn a_full_stdout_is_one_line_naming_it_and_exit_1() {
    for (args, dir) in printing_commands() {
        let mut cmd = bin();
        cmd.current_dir(&dir).args(&args);
        cmd.stdin(Stdio::null())
            .stdout(
                std::fs::File::options()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .stderr(Stdio::piped());
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to standard output"),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_closed_pipe_ends_quietly_with_status_141() {
    for (args, dir) in printing_commands() {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = bin()
            .current_dir(&dir)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// `cmd` with a file-size limit of `bytes`, so a write past it fails as on a full disk (SIGXFSZ
/// ignored, so the write returns EFBIG instead of killing the process).
fn with_file_limit(cmd: &mut Command, bytes: u64) {
    with_rlimit(cmd, Limit::FileSize, bytes);
}

/// `cmd` with an address-space limit of `bytes`.
fn with_memory_limit(cmd: &mut Command, bytes: u64) {
    with_rlimit(cmd, Limit::AddressSpace, bytes);
}

#[derive(Clone, Copy)]
enum Limit {
    FileSize,
    AddressSpace,
}

fn with_rlimit(cmd: &mut Command, limit: Limit, bytes: u64) {
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            let r = match limit {
                Limit::FileSize => {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    libc::setrlimit(libc::RLIMIT_FSIZE, &lim)
                }
                Limit::AddressSpace => libc::setrlimit(libc::RLIMIT_AS, &lim),
            };
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_write_that_fails_midway_leaves_the_earlier_file_byte_for_byte() {
    // `sample -o`: many cases make a results file larger than the limit.
    let dir = scratch("atomic-sample");
    let case = r#"{"id": "c", "texture": "shadow", "op": "sample_c_lz", "coord": [0.5, 0.5], "ref": 0.5,
                   "sampler": {"Filter": "COMPARISON_MIN_MAG_LINEAR_MIP_POINT", "ComparisonFunc": "LESS_EQUAL"}}"#;
    let cases = vec![case; 400].join(",");
    let big = PCF_CASES.replace(
        &PCF_CASES[PCF_CASES.find("[{\"id\": \"pcf\"").unwrap()..PCF_CASES.rfind(']').unwrap() + 1],
        &format!("[{cases}]"),
    );
    std::fs::write(dir.join("cases.json"), &big).unwrap();
    std::fs::write(dir.join("results.json"), "the good results\n").unwrap();
    let mut cmd = bin();
    cmd.current_dir(&dir)
        .args(["sample", "cases.json", "-o", "results.json"]);
    with_file_limit(&mut cmd, 4096);
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("cannot write results.json"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("results.json")).unwrap(),
        "the good results\n"
    );
    assert_eq!(names_in(&dir), ["cases.json", "results.json"]);

    // Lua `writeCsv` over an existing file.
    let dir = script_dir(
        "atomic-csv",
        r#"local rows = {}
for i = 1, 2000 do rows[i] = { x = i, lit = i / 2000, name = "probe" .. i } end
penumbra.writeCsv("probes.csv", rows)
"#,
    );
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("out/probes.csv"), "x,lit\n1,0.5\n").unwrap();
    let mut cmd = penumbra_run(&dir, &["--out", "out"]);
    with_file_limit(&mut cmd, 4096);
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("probes.csv"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("out/probes.csv")).unwrap(),
        "x,lit\n1,0.5\n"
    );
    assert_eq!(names_in(&dir.join("out")), ["probes.csv"]);
}

/// Runs `script` under `--timeout 0.5` and requires it to stop within the overrun.
fn stops_in_time(name: &str, script: &str) {
    let dir = script_dir(name, script);
    let timeout = Duration::from_millis(500);
    let r = run(penumbra_run(
        &dir,
        &["--timeout", "0.5", "--max-memory", "4096"],
    ));
    assert_eq!(r.status.code(), Some(1), "{name}: {}", r.stderr);
    assert!(
        r.stderr.contains("ran past its timeout of 500ms"),
        "{name}: {}",
        r.stderr
    );
    eprintln!(
        "{name}: stopped {} ms after starting under --timeout 0.5",
        r.elapsed.as_millis()
    );
    assert!(
        r.elapsed < timeout + OVERRUN,
        "{name}: stopped {:?} after starting (timeout {timeout:?})",
        r.elapsed
    );
}

#[test]
fn the_deadline_holds_inside_long_calls() {
    // Each of these takes seconds without the deadline.
    // One answer draws only the tiles round it; answers all over the map draw every tile
    // (each under 1000 overlapping slabs).
    stops_in_time(
        "sun",
        r#"local s = penumbra.scene()
for i = 1, 1000 do s:addBox({-50, i * 0.01, -50 + i * 0.001}, {50, i * 0.01 + 0.001, 50}) end
s:addLight({kind = "directional", name = "sun", direction = {0.3, -1, 0.2}, resolution = 4096})
local pts = {}
for i = 1, 200 do for j = 1, 200 do pts[#pts + 1] = {i * 0.5 - 50, 0, j * 0.5 - 50} end end
print(#s:lightAtBatch(pts))
"#,
    );
    stops_in_time(
        "eye",
        r#"local s = penumbra.scene()
for i = 1, 1000 do s:addBox({i * 0.1, 0, 0}, {i * 0.1 + 0.01, 5, 5}) end
print(s:canSee({0, 1, -5}, {50, 1, 3}, {resolution = 4096}))
"#,
    );
    for call in ["findImage", "sadMap"] {
        stops_in_time(
            call,
            &format!(
                r#"local img = penumbra.texture({{ format = "R8_UNORM", width = 4000, height = 4000 }})
local tpl = penumbra.texture({{ format = "R8_UNORM", width = 1000, height = 1000 }})
tpl:fill(function(x, y) return ((x + y) % 2) * 0.5 + 0.1 end)
print(penumbra.{call}(img, tpl))
"#
            ),
        );
    }
    stops_in_time(
        "mips",
        r#"local t = penumbra.texture({format = "R32G32B32A32_FLOAT", width = 8192, height = 8192, mipLevels = 14})
for i = 1, 5 do t:generateMips("average") end
"#,
    );
}

#[test]
fn sources_are_capped_before_they_are_compiled() {
    // 60 MB of script under --max-memory 16: refused at once, by its size.
    let dir = script_dir("big-script", "");
    let mut f = std::fs::File::create(dir.join("main.luau")).unwrap();
    for _ in 0..(60 << 20) / 12 {
        f.write_all(b"local x = 1\n").unwrap();
    }
    drop(f);
    let r = run(penumbra_run(
        &dir,
        &["--max-memory", "16", "--timeout", "1"],
    ));
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("more than the 131072 a chunk may have under the memory limit"),
        "{}",
        r.stderr
    );
    assert!(r.max_rss < 64 << 20, "{} bytes", r.max_rss);
    // The same through `require`.
    std::fs::rename(dir.join("main.luau"), dir.join("data.luau")).unwrap();
    std::fs::write(dir.join("main.luau"), "require('data')\n").unwrap();
    let r = run(penumbra_run(&dir, &["--max-memory", "16"]));
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("main.luau:1: require: ./data.luau: the file has"),
        "{}",
        r.stderr
    );
    // A NUL byte is an error, not the silent end of the script.
    std::fs::write(dir.join("main.luau"), "print(1)\n\0print(2)\n").unwrap();
    let r = run(penumbra_run(&dir, &[]));
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("line 2: the script contains a NUL byte"),
        "{}",
        r.stderr
    );
}

/// The memory promise of docs/lua-api.md, "Limits".
fn within_memory(limit_mb: u64, r: &Run) {
    let cap = limit_mb * (1 << 20) * 5 / 4 + (64 << 20);
    eprintln!(
        "peak {} MB under --max-memory {limit_mb} (allowed {} MB)",
        r.max_rss >> 20,
        cap >> 20
    );
    assert!(
        r.max_rss <= cap,
        "peak {} MB over the {} MB the limit of {limit_mb} MB allows",
        r.max_rss >> 20,
        cap >> 20
    );
}

#[test]
fn everything_a_script_makes_counts_against_one_memory_limit() {
    for (name, limit, script) in [
        (
            "textures",
            128,
            "local t = {}\nfor i = 1, 1e8 do t[i] = penumbra.texture({format = 'R8_UNORM', width = 1, height = 1}) end\n",
        ),
        (
            "samplers",
            128,
            "local t = {}\nfor i = 1, 2e6 do t[i] = penumbra.sampler({filter = 'MIN_MAG_MIP_POINT'}) end\n",
        ),
        (
            "scenes",
            64,
            "local t = {}\nfor i = 1, 2e6 do t[i] = penumbra.scene() end\n",
        ),
        (
            "table literal",
            64,
            &format!(
                "local t = {{\n{}}}\n",
                "{x = 1, y = 2, n = 'a'},\n".repeat(100_000)
            ),
        ),
    ] {
        let dir = script_dir(name, script);
        let r = run(penumbra_run(
            &dir,
            &["--max-memory", &limit.to_string(), "--timeout", "60"],
        ));
        assert_eq!(r.status.code(), Some(1), "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains("memory limit"),
            "{name}: the first limit met must be the budget: {}",
            r.stderr
        );
        within_memory(limit, &r);
    }
}

#[test]
fn many_live_scenes_leave_later_calls_working() {
    let dir = script_dir(
        "live-scenes",
        "local t = {}\nfor i = 1, 600000 do t[i] = penumbra.scene() end\n\
         t[1]:addBox({0, 0, 0}, {1, 1, 1})\nprint(#t, t[1]:bounds())\n",
    );
    let r = run(penumbra_run(
        &dir,
        &["--max-memory", "1024", "--timeout", "60"],
    ));
    assert_eq!(r.status.code(), Some(0), "{}", r.stderr);
    assert!(r.stdout.starts_with("600000"), "{}", r.stdout);
}

#[test]
fn fifos_and_hard_links_do_not_pass_the_file_jail() {
    let dir = script_dir(
        "fifo",
        "local s = penumbra.scene()\ns:loadObj('pipe.obj')\n",
    );
    let status = Command::new("mkfifo")
        .arg(dir.join("pipe.obj"))
        .status()
        .unwrap();
    assert!(status.success());
    let r = run(penumbra_run(&dir, &["--timeout", "5"]));
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("pipe.obj: not a regular file"),
        "{}",
        r.stderr
    );
    assert!(r.elapsed < Duration::from_secs(4));
    std::fs::write(
        dir.join("main.luau"),
        "print(penumbra.loadTexture('pipe.obj'))\n",
    )
    .unwrap();
    let r = run(penumbra_run(&dir, &["--timeout", "5"]));
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
    // A device (a character device like /dev/zero, made where the test may: CI runs as root).
    let made = Command::new("mknod")
        .arg(dir.join("zero.obj"))
        .args(["c", "1", "5"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if made {
        std::fs::write(
            dir.join("main.luau"),
            "penumbra.scene():loadObj('zero.obj')\n",
        )
        .unwrap();
        let r = run(penumbra_run(&dir, &["--timeout", "5"]));
        assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
        assert!(
            r.stderr.contains("zero.obj: not a regular file"),
            "{}",
            r.stderr
        );
    }

    // A module with another name outside the root.
    let outside = scratch("outside");
    std::fs::write(outside.join("secret.luau"), "return 'secret'\n").unwrap();
    let root = script_dir("hardlink", "print(require('mod'))\n");
    std::fs::hard_link(outside.join("secret.luau"), root.join("mod.luau")).unwrap();
    let r = run(penumbra_run(&root, &[]));
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("2 hard links"), "{}", r.stderr);
    assert!(!r.stdout.contains("secret"));

    // A link placed in the output folder is replaced, not written through.
    std::fs::write(
        root.join("main.luau"),
        "penumbra.writeCsv('out.csv', {{x = 1}})\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("out")).unwrap();
    std::fs::write(outside.join("precious.txt"), "precious\n").unwrap();
    std::fs::hard_link(outside.join("precious.txt"), root.join("out/out.csv")).unwrap();
    let r = run(penumbra_run(&root, &["--out", "out"]));
    assert_eq!(r.status.code(), Some(0), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(outside.join("precious.txt")).unwrap(),
        "precious\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("out/out.csv")).unwrap(),
        "x\n1\n"
    );
}

#[test]
fn match_bounds_its_work() {
    use penumbra::msad4::{Image, write_png};
    let dir = scratch("match-work");
    let (image, template) = match_inputs(&dir);
    let r = run({
        let mut c = bin();
        c.arg("match")
            .args([&image, &template])
            .arg("--top")
            .arg("18446744073709551615");
        c
    });
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--top 18446744073709551615: expected a number of matches from 1 to 10000"),
        "{}",
        r.stderr
    );
    // 10,000 matches on a blank 2000² image: linear suppression, not quadratic.
    let blank = dir.join("blank.png");
    write_png(&Image::r8(2000, 2000, vec![0; 4_000_000]).unwrap(), &blank).unwrap();
    let r = run({
        let mut c = bin();
        c.arg("match")
            .args([&blank, &template])
            .args(["--top", "10000", "--timeout", "60"]);
        c
    });
    assert_eq!(r.status.code(), Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 10_000);
    // A search too long for its --timeout stops there.
    let big_tpl = dir.join("checker.png");
    let checker: Vec<u8> = (0..1000 * 1000)
        .map(|i| {
            if (i % 1000 + i / 1000) % 2 == 0 {
                40
            } else {
                200
            }
        })
        .collect();
    write_png(&Image::r8(1000, 1000, checker).unwrap(), &big_tpl).unwrap();
    let big_img = dir.join("big.png");
    write_png(
        &Image::r8(4000, 4000, vec![0; 16_000_000]).unwrap(),
        &big_img,
    )
    .unwrap();
    let r = run({
        let mut c = bin();
        c.arg("match")
            .args([&big_img, &big_tpl])
            .args(["--timeout", "1"]);
        c
    });
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("stopped after --timeout 1 s"),
        "{}",
        r.stderr
    );
    assert!(
        r.elapsed < Duration::from_secs(1) + OVERRUN + Duration::from_millis(600),
        "{:?}",
        r.elapsed
    );
}

#[test]
fn out_of_memory_is_an_error_exit_never_an_abort() {
    use penumbra::msad4::{Image, write_png};
    let dir = scratch("oom");
    // A 20000² grey PNG compresses to a few hundred kilobytes.
    let huge = dir.join("huge.png");
    {
        let file = std::fs::File::create(&huge).unwrap();
        let mut enc = png_encoder(file, 20_000, 20_000);
        let row = vec![128u8; 20_000];
        let mut w = enc.stream_writer().unwrap();
        for _ in 0..20_000 {
            w.write_all(&row).unwrap();
        }
        w.finish().unwrap();
    }
    let small = dir.join("small.png");
    write_png(&Image::r8(8, 8, vec![7; 64]).unwrap(), &small).unwrap();
    for extra in [
        &["--rgba"][..],
        &["--heatmap", "heat.png"][..],
        &["--max-pixels", "1000000000"][..],
    ] {
        let mut cmd = bin();
        cmd.current_dir(&dir)
            .arg("match")
            .args([&huge, &small])
            .args(extra);
        with_memory_limit(&mut cmd, 1 << 30);
        let r = run(cmd);
        assert_eq!(
            r.status.code(),
            Some(1),
            "{extra:?}: {:?} {}",
            r.status,
            r.stderr
        );
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
        assert!(
            r.stderr.contains("pixels, more than") || r.stderr.contains("memory"),
            "{extra:?}: {}",
            r.stderr
        );
    }
    // A valid 24 MB case file evaluates within an address space of 4× its size (the texts, the
    // texture and the program).
    let values: Vec<String> = (0..1024 * 1024 * 4)
        .map(|i| format!("{}", (i % 1000) as f32 / 1000.0))
        .collect();
    let text = format!(
        r#"{{"textures": [{{"id": "t", "dimension": "2D", "format": "R32G32B32A32_FLOAT", "width": 1024, "height": 1024,
             "data": [[{}]]}}], "cases": [{{"id": 0, "texture": "t", "op": "sample_l", "coord": [0.5, 0.5], "lod": 0,
             "sampler": {{"Filter": "MIN_MAG_MIP_LINEAR"}}}}]}}"#,
        values.join(",")
    );
    assert!(text.len() > 20 << 20);
    std::fs::write(dir.join("cases.json"), &text).unwrap();
    let mut cmd = bin();
    cmd.current_dir(&dir).args(["sample", "cases.json"]);
    with_memory_limit(&mut cmd, 100 << 20);
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(0), "{:?} {}", r.status, r.stderr);
    assert!(r.stdout.contains("\"status\": \"ok\""), "{}", r.stdout);
    // Under a limit too small for it: an error, not a signal.
    let mut cmd = bin();
    cmd.current_dir(&dir).args(["sample", "cases.json"]);
    with_memory_limit(&mut cmd, 35 << 20);
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(1), "{:?} {}", r.status, r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
}

fn png_encoder(
    file: std::fs::File,
    w: u32,
    h: u32,
) -> png::Writer<std::io::BufWriter<std::fs::File>> {
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().unwrap()
}

#[test]
fn case_files_are_read_by_a_conforming_parser_with_true_positions() {
    let dir = scratch("json");
    for (text, want) in [
        (
            r#"{"textures":[],"cases":[{"id":-}]}"#,
            "invalid number at line 1 column 32",
        ),
        (r#"{"textures":[],"cases":[{"id":01}]}"#, "line 1 column 32"),
        (
            r#"{"textures":[],"cases":[{"id":1.2.3}]}"#,
            "line 1 column 34",
        ),
        (
            r#"{"cases": [1, 2, x]}"#,
            "expected value at line 1 column 18",
        ),
        (r#"{cases: []}"#, "key must be a string at line 1 column 2"),
        (r#"{"cases": [], "cases": []}"#, "duplicate key \"cases\""),
    ] {
        std::fs::write(dir.join("c.json"), text).unwrap();
        let r = run({
            let mut c = bin();
            c.current_dir(&dir).args(["sample", "c.json"]);
            c
        });
        assert_eq!(r.status.code(), Some(1), "{text}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{text}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    }
    // A case with a key twice is a case error naming it; the other cases still run.
    std::fs::write(
        dir.join("c.json"),
        "{\"textures\": [], \"cases\": [\n {\"id\": 1, \"id\": 2}]}",
    )
    .unwrap();
    let r = run({
        let mut c = bin();
        c.current_dir(&dir).args(["sample", "c.json"]);
        c
    });
    assert_eq!(r.status.code(), Some(0), "{}", r.stderr);
    assert!(
        r.stdout
            .contains(r#"duplicate key \"id\" at line 2 column 2"#),
        "{}",
        r.stdout
    );
    // A dimension given as a number is quoted as one (no control character leaks).
    std::fs::write(
        dir.join("c.json"),
        r#"{"textures": [{"dimension": 2, "format": "R8_UNORM", "data": [[0]]}], "cases": []}"#,
    )
    .unwrap();
    let r = run({
        let mut c = bin();
        c.current_dir(&dir).args(["sample", "c.json"]);
        c
    });
    assert_eq!(r.status.code(), Some(1));
    assert!(
        !r.stderr.chars().any(|c| c.is_control() && c != '\n'),
        "{:?}",
        r.stderr
    );
}

#[test]
fn messages_that_quote_input_do_not_drive_the_terminal() {
    let dir = script_dir("escapes", "error('\\27[2J\\27]0;owned\\7 gone')\n");
    let r = run(penumbra_run(&dir, &[]));
    assert_eq!(r.status.code(), Some(1));
    assert!(!r.stderr.contains('\u{1b}'), "{:?}", r.stderr);
    assert!(r.stderr.contains("\\u{1b}[2J"), "{:?}", r.stderr);
}

#[test]
fn small_traps_get_clear_errors() {
    let dir = script_dir(
        "traps",
        r#"local t = penumbra.texture({format = "R8_UNORM", width = 2, height = 2})
local ok, e = pcall(function() return t:save("newdir/") end)
print(ok, e)
local s = penumbra.scene()
ok, e = pcall(function() return s:addMesh({1,0,1, -1,0,-1, 0,1,0}, {1,2,3}, {scale = 3e38, rotation = {0, 45, 0}}) end)
print(ok, e)
require("./main")
"#,
    );
    let r = run(penumbra_run(&dir, &[]));
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(r.stdout.contains("false\tmain.luau:2: Texture:save: path: \"newdir/\" ends with '/', so it names a folder"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("Scene:addMesh: transform: vertex 1 lands at (inf"),
        "{}",
        r.stdout
    );
    assert!(!dir.join("penumbra-out/newdir").exists());
    // The main script requiring itself is a circular require, not a second run.
    assert_eq!(r.stdout.matches("false").count(), 2, "{}", r.stdout);
    assert!(r.stderr.contains("circular require"), "{}", r.stderr);
    // Limits take the values a user would write.
    for (flag, value) in [
        ("--timeout", "inf"),
        ("--timeout", "1e300"),
        ("--max-memory", "18446744073709551615"),
    ] {
        std::fs::write(dir.join("main.luau"), "print('ok')\n").unwrap();
        let r = run(penumbra_run(&dir, &[flag, value]));
        assert_eq!(r.status.code(), Some(0), "{flag} {value}: {}", r.stderr);
    }
}
