#!/usr/bin/env bash
# Regenerates the parity goldens in tests/data/parity/ with Bevy's real renderer (Bevy 0.19.1's
# bevy_pbr) on the Vulkan device wgpu finds — Mesa's lavapipe on a machine without a GPU
# (`apt-get install mesa-vulkan-drivers libvulkan1`). Uses the project's target folder.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-../target}/parity
export NODEVICE_SELECT=1 RUST_LOG=${RUST_LOG:-error}
cargo build --locked
out=${1:-../tests/data/parity}
for scene in sun-a sun-b sun-near spot point; do
  "$CARGO_TARGET_DIR/debug/penumbra_parity" "$scene" "$out"
done
