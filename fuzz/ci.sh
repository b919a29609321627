#!/usr/bin/env bash
# Short fuzzing for CI (issue 9): every target of fuzz/ for FUZZ_SECONDS seconds (default 30),
# starting from the committed seeds in fuzz/corpus/<target>. Fails if any target crashes,
# leaks past the memory limit or times out; the inputs that did are kept in FUZZ_ARTIFACTS.
#
#   bash fuzz/ci.sh                                # all targets, 30 s each
#   FUZZ_SECONDS=600 bash fuzz/ci.sh               # the long runs done by hand
#   FUZZ_TARGETS="sample_ops lua_api" bash fuzz/ci.sh
#
# Builds the targets the way `cargo fuzz build` does (libFuzzer from libfuzzer-sys, its coverage
# instrumentation and AddressSanitizer, debug assertions on) with plain cargo, so a CI machine needs
# no cargo-fuzz install (about 1.5 minutes); libFuzzer's nightly flags are accepted by stable Rust
# with RUSTC_BOOTSTRAP=1. The `ci` profile of fuzz/Cargo.toml optimizes less than cargo-fuzz's
# release build: it builds in about half the time and still runs thousands of inputs a second,
# which is what a short run needs. The long runs by hand use cargo-fuzz (README.md).
# The build honours CARGO_TARGET_DIR; keep one across runs to skip the first build.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

seconds="${FUZZ_SECONDS:-30}"
targets="${FUZZ_TARGETS:-sample_ops batch_pcf msad4 raster shadow_queries pbr_factors cases_json ron_table png gltf lua_api}"
artifacts="${FUZZ_ARTIFACTS:-$here/artifacts}"
export RUSTC_BOOTSTRAP=1
# glibc's per-thread destructor block is reported as a leak after threads ran (see lsan.supp).
export LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
triple="$(rustc -vV | sed -n 's/^host: //p')"
target_dir="${CARGO_TARGET_DIR:-$here/target}"
case "$target_dir" in /*) ;; *) target_dir="$here/$target_dir" ;; esac
bin_dir="$target_dir/$triple/ci"

started=$(date +%s)
# One build for every target (they share all dependencies). `--target` keeps the flags off build
# scripts and proc macros, as cargo-fuzz does.
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Zsanitizer=address \
-Cdebug-assertions -Cforce-frame-pointers=yes" \
    cargo build --profile ci --target "$triple" --bins || { echo "fuzz: the build failed"; exit 1; }
echo "fuzz: targets built after $(( $(date +%s) - started )) s"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
failures=""
for t in $targets; do
    mkdir -p "$work/$t" "$artifacts/$t" "corpus/$t"
    log="$work/$t.log"
    # New corpus entries go to the temporary folder; the committed seeds are only read.
    "$bin_dir/$t" "$work/$t" "corpus/$t" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 \
        -artifact_prefix="$artifacts/$t/" -print_final_stats=1 >"$log" 2>&1
    status=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "fuzz: $t ok (${runs:-?} executions in $seconds s)"
    else
        failed=$((failed + 1))
        failures="$failures $t"
        echo "fuzz: $t FAILED (exit $status); input kept in $artifacts/$t/"
        # The panic message (the line after "panicked at" holds the assertion's text).
        grep -E -A 3 'panicked at' "$log" | head -n 12 | sed 's/^/    /'
        grep -E '^SUMMARY|ERROR: libFuzzer|Test unit written' "$log" | head -n 4 | sed 's/^/    /'
        tail -n 30 "$log" | sed 's/^/    | /'
        # The crashing inputs themselves, so a CI log alone reproduces the failure:
        #   echo BASE64 | base64 -d > crash && RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET crash
        for a in "$artifacts/$t"/crash-* "$artifacts/$t"/timeout-* "$artifacts/$t"/oom-* "$artifacts/$t"/leak-*; do
            [ -f "$a" ] || continue
            if [ "$(wc -c <"$a")" -le 65536 ]; then
                echo "    input $(basename "$a") (base64): $(base64 -w0 "$a")"
            fi
        done
    fi
done

echo "fuzz: finished after $(( $(date +%s) - started )) s"
echo "fuzz: $passed passed, $failed failed"
if [ "$failed" -ne 0 ]; then
    echo "fuzz: crashing targets:$failures (reproduce: RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET ARTIFACT, or $bin_dir/TARGET ARTIFACT)"
    exit 1
fi
