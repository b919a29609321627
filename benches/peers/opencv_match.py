#!/usr/bin/env python3
"""OpenCV matchTemplate (TM_SQDIFF, one thread) against penumbra's best-k search, same images.

For each template size it makes a 4096x4096 8-bit noise image, plants a random template in it
(unmasked), then a "sprite" template whose pixels outside an ellipse are transparent (masked:
0 for penumbra, mask 0 for OpenCV), writes both as PNG, and times:

* OpenCV: cv2.matchTemplate(image, template, TM_SQDIFF[, mask]) + cv2.minMaxLoc, one thread;
* penumbra: the `match_bench` example on the same PNG files (find_matches, top 1, one thread;
  PNG decoding excluded, as for OpenCV).

It checks that both report the planted position and prints a table with the ratios.

With `--noise N` the planted copy is not exact: every cared pixel of it moves by a random
amount in [-N, N] (kept in 1..255), as a sprite does under lighting or compression. The best
match then has a SAD well above 0, which is the hard case for penumbra's pruning bounds.

    python3 -m venv venv && venv/bin/pip install opencv-python-headless numpy
    cargo build --release --example match_bench
    venv/bin/python benches/peers/opencv_match.py [--sizes 8,16,24,32,48,64] [--reps 3]
        [--backend avx2] [--noise 8]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np


def time_opencv(image, template, mask, reps):
    best, loc = float("inf"), None
    for _ in range(reps):
        start = time.perf_counter()
        if mask is None:
            res = cv2.matchTemplate(image, template, cv2.TM_SQDIFF)
        else:
            res = cv2.matchTemplate(image, template, cv2.TM_SQDIFF, mask=mask)
        _, _, min_loc, _ = cv2.minMaxLoc(res)
        best = min(best, time.perf_counter() - start)
        loc = min_loc
    return best, loc


def time_penumbra(binary, image_path, template_path, reps, backend):
    extra = ["--backend", backend] if backend else []
    out = subprocess.run(
        [binary, image_path, template_path, "--reps", str(reps), "--threads", "1", *extra],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return r["seconds"], (r["x"], r["y"]), r["backend"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="8,16,24,32,48,64")
    ap.add_argument("--image", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--backend", default="", help="force none|sse4.1|avx2|avx512bw")
    ap.add_argument("--noise", type=int, default=0, help="plant a near-match: +-N per pixel")
    ap.add_argument("--seed", type=int, default=20240607, help="seed of the generated images")
    ap.add_argument("--bin", default=os.path.join(target, "release", "examples", "match_bench"))
    args = ap.parse_args()
    cv2.setNumThreads(1)
    rng = np.random.default_rng(args.seed)
    n = args.image
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in [int(v) for v in args.sizes.split(",")]:
            for masked in (False, True):
                image = rng.integers(0, 256, size=(n, n), dtype=np.uint8)
                template = rng.integers(1, 256, size=(s, s), dtype=np.uint8)
                mask = None
                if masked:
                    yy, xx = np.mgrid[0:s, 0:s]
                    c = (s - 1) / 2
                    inside = ((xx - c) / (s / 2)) ** 2 + ((yy - c) / (s / 2)) ** 2 <= 1.0
                    template[~inside] = 0
                    mask = inside.astype(np.uint8)
                x, y = int(rng.integers(0, n - s)), int(rng.integers(0, n - s))
                window = image[y : y + s, x : x + s]
                keep = template != 0
                planted = template.astype(np.int32)
                if args.noise:
                    planted += rng.integers(-args.noise, args.noise + 1, size=(s, s))
                window[keep] = np.clip(planted, 1, 255).astype(np.uint8)[keep]
                ipath = os.path.join(tmp, "image.png")
                tpath = os.path.join(tmp, "template.png")
                cv2.imwrite(ipath, image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
                cv2.imwrite(tpath, template)
                cv_t, cv_loc = time_opencv(image, template, mask, args.reps)
                pe_t, pe_loc, backend = time_penumbra(args.bin, ipath, tpath, args.reps, args.backend)
                same = cv_loc == pe_loc == (x, y)
                rows.append((s, masked, cv_t, pe_t, same, backend))
                print(
                    f"{s:>2}x{s:<2} {'masked' if masked else 'plain':<6} opencv {cv_t:.4f} s"
                    f"  penumbra {pe_t:.4f} s  x{cv_t / pe_t:.1f}  same={same}",
                    file=sys.stderr,
                )
    plant = f"a near-match (+-{args.noise} per pixel)" if args.noise else "an exact copy"
    print(f"OpenCV {cv2.__version__}, {n}x{n} 8-bit noise with {plant} of the template planted, "
          f"one thread, best of {args.reps}; penumbra backend {rows[0][5]}\n")
    print("| template | OpenCV TM_SQDIFF | penumbra | speed-up | OpenCV masked | penumbra masked "
          "| speed-up | same best match |")
    print("|---|---|---|---|---|---|---|---|")
    by = {}
    for r in rows:
        by.setdefault(r[0], {})[r[1]] = r
    for s, d in by.items():
        p, m = d[False], d[True]
        print(f"| {s}×{s} | {p[2] * 1e3:.1f} ms | {p[3] * 1e3:.1f} ms | {p[2] / p[3]:.1f}× "
              f"| {m[2] * 1e3:.1f} ms | {m[3] * 1e3:.1f} ms | {m[2] / m[3]:.1f}× "
              f"| {'yes' if p[4] and m[4] else 'NO'} |")
    if not all(r[4] for r in rows):
        sys.exit("best matches differ")


if __name__ == "__main__":
    main()
