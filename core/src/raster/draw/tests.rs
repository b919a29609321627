use super::scalar::unorm16;
use crate::format;

#[test]
fn unorm16_matches_float_to_unorm_on_zero_one() {
    let mut rng = penumbra_testkit::Rng::xorshift32(0x1234_5678);
    let check = |d: f32| assert_eq!(u32::from(unorm16(d)), format::float_to_unorm(d, 16), "{d}");
    for code in 0..=65535u32 {
        let d = code as f32 / 65535.0;
        check(d);
        check(f32::from_bits(d.to_bits().saturating_sub(1)));
        check(f32::from_bits(d.to_bits() + 1).min(1.0));
        // Half-way points between codes.
        check(((f64::from(code) + 0.5) / 65535.0).min(1.0) as f32);
    }
    for _ in 0..1_000_000 {
        let bits = rng.next_u32();
        check((bits >> 8) as f32 / (1u32 << 24) as f32);
    }
    check(0.0);
    check(1.0);
    check(f32::MIN_POSITIVE);
}

/// `groups_of` (used by both SIMD kernels): the groups cover the part's columns, stay inside
/// the buffer's row and inside what `Area::fits_groups` checked, and are never more than the
/// aligned ones.
#[test]
fn groups_cover_the_columns_inside_the_checked_row() {
    let mut rng = penumbra_testkit::Rng::xorshift64(0x6772_6f75_7073);
    let mut shifted = 0;
    for _ in 0..200_000 {
        let lanes = if rng.below_mod(2) == 0 { 8 } else { 16 };
        let stride = lanes * (1 + rng.below_mod(8) as i32);
        let origin = [rng.below_mod(300) as i32, rng.below_mod(300) as i32];
        let x0 = origin[0] + rng.below_mod(stride as u64) as i32;
        let x1 = x0 + rng.below_mod((origin[0] + stride - x0) as u64) as i32;
        let area = super::Area {
            origin,
            stride: stride as usize,
            clip: [x0, origin[1], x1, origin[1]],
            rows: super::EVERY_ROW,
        };
        assert!(area.fits_groups(stride as usize, lanes as usize));
        let xs = x0 + rng.below_mod((x1 - x0 + 1) as u64) as i32;
        // Mostly narrow parts, as most triangles are.
        let reach = (x1 - xs + 1).min(if rng.below_mod(4) == 0 {
            stride
        } else {
            lanes + 4
        });
        let xe = xs + rng.below_mod(reach as u64) as i32;
        let (xa, groups) = super::groups_of(&area, xs, xe, lanes);
        let aligned = origin[0] + ((xs - origin[0]) & !(lanes - 1));
        let aligned_groups = (xe - aligned) / lanes + 1;
        let end = xa + lanes * groups - 1;
        let what = format!("{area:?} xs {xs} xe {xe} lanes {lanes}: {xa}, {groups}");
        assert!(xa >= origin[0] && xa <= xs && end >= xe, "{what}");
        assert!(end < origin[0] + stride, "{what}: past the row");
        assert!(
            end < aligned + lanes * aligned_groups,
            "{what}: past the checked group"
        );
        assert!(
            groups <= aligned_groups && groups == (xe - xs) / lanes + 1,
            "{what}"
        );
        shifted += usize::from(groups < aligned_groups);
    }
    assert!(shifted > 10_000, "{shifted} parts took fewer groups");
}

/// `Tri::compact`'s promise, which lets the SIMD kernels skip their per-tile range check: every
/// edge function at the pixel centres of a compact triangle's bounds, widened by 15 pixels left
/// and right (the most a kernel's groups reach past a part), fits in 32 bits. The edges are
/// linear, so the corners of that rectangle bound them. Triangles up to and just past the span
/// limit, partly off the target, at random sub-pixel positions.
#[test]
fn compact_triangles_have_edges_in_32_bits_over_their_widened_bounds() {
    use crate::format::Format;
    use crate::raster::RasterState;
    use crate::raster::setup::{COMPACT_SPAN, Context, SUB_BITS};
    let (w, h) = (2048u32, 2048u32);
    let ctx = Context::new(w, h, Format::D32Float, &RasterState::default());
    let mut rng = penumbra_testkit::Rng::xorshift64(0x636f_6d70_6163);
    let mut tris = Vec::new();
    let (mut compact, mut at_limit) = (0, 0);
    for _ in 0..50_000 {
        let span = f64::from(COMPACT_SPAN) * rng.f64_in(0.0, 1.05);
        let base = [rng.f64_in(-40.0, 2088.0), rng.f64_in(-40.0, 2088.0)];
        let v: [super::super::setup::Vertex; 3] = std::array::from_fn(|_| {
            // Often on the span's ends, to reach its limit.
            let mut at = || match rng.below_mod(3) {
                0 => 0.0,
                1 => span,
                _ => span * rng.f64_in(0.0, 1.0),
            };
            let (x, y) = (base[0] + at(), base[1] + at());
            let clip = glam::Vec4::new(
                (2.0 * x / f64::from(w) - 1.0) as f32,
                (1.0 - 2.0 * y / f64::from(h)) as f32,
                0.5,
                1.0,
            );
            ctx.vertex(clip)
        });
        tris.clear();
        ctx.triangle(
            [&v[0], &v[1], &v[2]],
            Some(crate::raster::CullMode::None),
            &mut tris,
        );
        for t in tris.iter().filter(|t| t.compact) {
            compact += 1;
            let spread = |c: [i32; 3]| c.iter().max().unwrap() - c.iter().min().unwrap();
            at_limit += usize::from(spread(t.x).max(spread(t.y)) > (COMPACT_SPAN - 2) << SUB_BITS);
            let [x0, y0, x1, y1] = t.bbox.map(i32::from);
            for i in 0..3 {
                for (x, y) in [(x0 - 15, y0), (x1 + 15, y0), (x0 - 15, y1), (x1 + 15, y1)] {
                    let (e, _, _) = super::edge_at(t, i, x, y);
                    assert!(
                        e.unsigned_abs() <= i32::MAX as u64,
                        "{t:?}: edge {i} at ({x}, {y}): {e}"
                    );
                }
            }
        }
    }
    assert!(
        compact > 30_000 && at_limit > 500,
        "{compact} compact, {at_limit} near the limit"
    );
}

/// The coarse depth test (`Coarse`) skips only pieces that could not pass a single depth test:
/// scenes of walls (triangles over the whole area, slightly tilted), quads whose halves each
/// reach over the area without covering it, and small triangles in random
/// order and depths, drawn with the test and without it on every kernel, LESS and GREATER, into
/// a 32² tile of the tiled maps or a part of up to 2 × 2 of them (and a whole `TILE_SIZE`
/// tile, which draws without it), give the same bits and the same count of pixels written
/// (and the same bits without the count) —
/// and the test does skip pieces. Half of the tiled maps' areas are drawn on some rows only
/// (`Area::rows`): those rows hold what a draw of every row gives, the others stay cleared.
#[test]
fn coarse_depth_skips_only_pieces_that_cannot_pass() {
    use super::{Area, Batch, TileBuf, draw_tris_with};
    use crate::cpu::CpuExtension;
    use crate::format::Format;
    use crate::raster::setup::Context;
    use crate::raster::target::TILE_SIZE;
    use crate::raster::{CullMode, RasterState};
    let mut rng = penumbra_testkit::Rng::xorshift64(0x636f_6172_7365);
    let (w, h) = (256u32, 256u32);
    let state = RasterState {
        cull: CullMode::None,
        ..RasterState::default()
    };
    let ctx = Context::new(w, h, Format::D32Float, &state);
    let clip = |x: f64, y: f64, z: f64| {
        ctx.vertex(glam::Vec4::new(
            (2.0 * x / f64::from(w) - 1.0) as f32,
            (1.0 - 2.0 * y / f64::from(h)) as f32,
            z as f32,
            1.0,
        ))
    };
    let (mut rejected, mut pieces, mut masked) = ([0u64; 2], 0u64, 0);
    for round in 0..300 {
        let greater = round % 2 == 1;
        let tile = TILE_SIZE.min(w) as i32;
        let (area, len) = if round % 4 < 2 {
            // A tile, or (in the tiled maps' parts) two tiles side by side and two such rows
            // one above the other; half of them drawn on some rows only.
            let (across, down) = (32 * (1 + rng.below_mod(2)), 32 * (1 + rng.below_mod(2)));
            let o = [32 * rng.below_mod(6) as i32, 32 * rng.below_mod(6) as i32];
            let clip = [o[0], o[1], o[0] + across as i32 - 1, o[1] + down as i32 - 1];
            let rows = match rng.below_mod(4) {
                0 | 1 => super::EVERY_ROW,
                // Runs of rows with gaps, as queries ask for them.
                2 => {
                    let mut m = 0u64;
                    for _ in 0..1 + rng.below_mod(4) {
                        let first = rng.below_mod(down);
                        let run = 1 + rng.below_mod(8);
                        m |= ((1u64 << run) - 1) << first;
                    }
                    m
                }
                _ => rng.next_u64(),
            };
            let area = Area {
                origin: o,
                stride: across as usize,
                clip,
                rows,
            };
            (area, (across * down) as usize)
        } else {
            (
                Area::tile([0, 0, tile - 1, tile - 1]),
                (TILE_SIZE * TILE_SIZE) as usize,
            )
        };
        let [ax0, ay0, ax1, ay1] = area.clip.map(f64::from);
        let mut tris = Vec::new();
        for _ in 0..1 + rng.below_mod(60) {
            if rng.below_mod(6) == 0 {
                // A wall over the whole area, a little tilted: one right triangle whose legs
                // are twice the area's edge and more (a quad's diagonal would cross the area,
                // and one triangle must cover it all to teach the test a bound).
                let m = rng.f64_in(0.0, 20.0);
                let leg = 2.0 * (ax1 - ax0 + 1.0 + 2.0 * m);
                let z = rng.f64_in(0.05, 0.95);
                let (sx, sy) = (rng.f64_in(-2e-4, 2e-4), rng.f64_in(-2e-4, 2e-4));
                let at = |x: f64, y: f64| clip(x, y, z + sx * (x - ax0) + sy * (y - ay0));
                let c = [
                    at(ax0 - m, ay0 - m),
                    at(ax0 - m + leg, ay0 - m),
                    at(ax0 - m, ay0 - m + leg),
                ];
                ctx.triangle([&c[0], &c[1], &c[2]], None, &mut tris);
            } else if rng.below_mod(6) == 0 {
                // A quad over the whole area: each half's bounds hold the area, but neither
                // covers it (its diagonal crosses the area), so neither may teach a bound.
                // The halves lie at two depths.
                let m = rng.f64_in(0.0, 20.0);
                let (z, z2) = (rng.f64_in(0.05, 0.95), rng.f64_in(0.05, 0.95));
                let corners = |z: f64| {
                    [
                        clip(ax0 - m, ay0 - m, z),
                        clip(ax1 + 1.0 + m, ay0 - m, z),
                        clip(ax1 + 1.0 + m, ay1 + 1.0 + m, z),
                        clip(ax0 - m, ay1 + 1.0 + m, z),
                    ]
                };
                let (c, d) = (corners(z), corners(z2));
                ctx.triangle([&c[0], &c[1], &c[2]], None, &mut tris);
                ctx.triangle([&d[0], &d[2], &d[3]], None, &mut tris);
            } else {
                let (cx, cy) = (
                    rng.f64_in(ax0 - 20.0, ax1 + 20.0),
                    rng.f64_in(ay0 - 20.0, ay1 + 20.0),
                );
                let r = rng.f64_in(1.0, 30.0);
                let z = rng.f64_in(-0.05, 1.05);
                let v: Vec<_> = (0..3)
                    .map(|_| {
                        let dz = rng.f64_in(-0.02, 0.02);
                        clip(cx + rng.f64_in(-r, r), cy + rng.f64_in(-r, r), z + dz)
                    })
                    .collect();
                ctx.triangle([&v[0], &v[1], &v[2]], None, &mut tris);
            }
        }
        pieces += tris.len() as u64;
        let clear = match rng.below_mod(4) {
            0 => rng.f64_in(0.0, 1.0) as f32,
            _ if greater => 0.0,
            _ => 1.0,
        };
        let batches = [Batch {
            tris: &tris,
            items: None,
        }];
        for ext in CpuExtension::supported() {
            let mut with = vec![clear; len];
            let mut without = vec![clear; len];
            let draw = |buf: &mut [f32], coarse: bool, count: bool| {
                draw_tris_with(
                    TileBuf::F32(buf),
                    area,
                    &batches,
                    greater,
                    ext,
                    coarse,
                    count,
                )
            };
            let a = draw(&mut with, true, true);
            let b = draw(&mut without, false, true);
            // Without the count of pixels written: the same bits, and no count.
            let mut uncounted = vec![clear; len];
            let u = draw(&mut uncounted, true, false);
            let what = format!("round {round}, {ext}, greater {greater}, {area:?}");
            assert_eq!(a.written, b.written, "{what}");
            assert_eq!(u, super::Drawn { written: 0, ..a }, "{what}: uncounted");
            assert!(
                uncounted
                    .iter()
                    .zip(&with)
                    .all(|(p, q)| p.to_bits() == q.to_bits()),
                "{what}: the depths differ uncounted"
            );
            assert_eq!(b.rejected, 0, "{what}");
            // Areas past `COARSE_AREA` (the full draw's tiles) are drawn without the test.
            let [x0, _, x1, _] = area.clip;
            assert!(x1 - x0 < super::COARSE_AREA || a.rejected == 0, "{what}");
            assert!(
                with.iter()
                    .zip(&without)
                    .all(|(p, q)| p.to_bits() == q.to_bits()),
                "{what}: the depths differ"
            );
            rejected[usize::from(greater)] += a.rejected;
            // A row mask draws the rows it names as a draw of every row does, and leaves the
            // others as they were.
            if area.rows != super::EVERY_ROW {
                let mut full = vec![clear; len];
                let all = Area {
                    rows: super::EVERY_ROW,
                    ..area
                };
                draw_tris_with(
                    TileBuf::F32(&mut full),
                    all,
                    &batches,
                    greater,
                    ext,
                    true,
                    true,
                );
                masked += 1;
                for (k, (row, full_row)) in with
                    .chunks(area.stride)
                    .zip(full.chunks(area.stride))
                    .enumerate()
                {
                    let want = |d: &f32| {
                        if area.rows >> k & 1 != 0 { *d } else { clear }
                    };
                    assert!(
                        row.iter()
                            .zip(full_row)
                            .all(|(p, q)| p.to_bits() == want(q).to_bits()),
                        "{what}: row {k} with a row mask"
                    );
                }
            }
        }
    }
    // Some hundreds a kernel (a build with `force-scalar` has one kernel).
    let kernels = CpuExtension::supported().len() as u64;
    assert!(masked > 50 * kernels, "{masked} draws with a row mask");
    assert!(
        rejected[0] > 600 * kernels && rejected[1] > 600 * kernels,
        "{rejected:?} skipped, {kernels} kernels together, of {pieces} pieces each"
    );
}
