//! [`TopDown`]: a level's xz rectangle mapped onto a picture, and what is drawn on it.

use glam::{Vec2, Vec3};
use image::{Rgb, RgbImage};

use super::ramp;
use crate::shadow::{Aabb, Occluder, Scene};

/// Maps the xz rectangle of a level onto an image, z growing downwards.
#[derive(Clone, Copy, Debug)]
pub struct TopDown {
    /// World xz of the image's top-left corner.
    pub min: Vec2,
    /// World xz of the bottom-right corner.
    pub max: Vec2,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
}

impl TopDown {
    /// A view of `bounds` (xz) `width` pixels wide, keeping the aspect ratio.
    #[must_use]
    pub fn fit(bounds: &Aabb, width: u32) -> TopDown {
        let min = Vec2::new(bounds.min.x, bounds.min.z);
        let max = Vec2::new(bounds.max.x, bounds.max.z);
        let size = (max - min).max(Vec2::splat(1e-3));
        let height = ((width as f32 * size.y / size.x).round() as u32).clamp(1, 8192);
        TopDown {
            min,
            max,
            width,
            height,
        }
    }

    /// The world xz at the centre of pixel (x, y).
    #[must_use]
    pub fn world(&self, x: u32, y: u32) -> Vec2 {
        let t = Vec2::new(
            (x as f32 + 0.5) / self.width as f32,
            (y as f32 + 0.5) / self.height as f32,
        );
        self.min + (self.max - self.min) * t
    }

    /// The pixel of a world xz (may be outside the image).
    #[must_use]
    pub fn pixel(&self, p: Vec2) -> (i64, i64) {
        let t = (p - self.min) / (self.max - self.min);
        (
            (t.x * self.width as f32).floor() as i64,
            (t.y * self.height as f32).floor() as i64,
        )
    }

    /// A map of `f(world point at height y)` in [0, 1] through [`ramp`].
    pub fn field(&self, y: f32, f: impl Fn(Vec3) -> f32 + Sync) -> RgbImage {
        let rows: Vec<Vec<Rgb<u8>>> = std::thread::scope(|s| {
            let threads = crate::cpu::available_threads().min(8) as u32;
            let chunk = self.height.div_ceil(threads);
            let f = &f;
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        (t * chunk..((t + 1) * chunk).min(self.height))
                            .map(|py| {
                                (0..self.width)
                                    .map(|px| {
                                        let w = self.world(px, py);
                                        ramp(f(Vec3::new(w.x, y, w.y)))
                                    })
                                    .collect()
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        RgbImage::from_fn(self.width, self.height, |x, y| {
            rows.get(y as usize)
                .and_then(|r| r.get(x as usize))
                .copied()
                .unwrap_or(Rgb([0, 0, 0]))
        })
    }

    /// Draws a line between two world xz points.
    pub fn line(&self, img: &mut RgbImage, a: Vec2, b: Vec2, color: Rgb<u8>) {
        let (ax, ay) = self.pixel(a);
        let (bx, by) = self.pixel(b);
        let steps = (bx - ax).abs().max((by - ay).abs()).clamp(1, 20_000);
        for i in 0..=steps {
            let x = ax + (bx - ax) * i / steps;
            let y = ay + (by - ay) * i / steps;
            if x >= 0 && y >= 0 && (x as u32) < img.width() && (y as u32) < img.height() {
                img.put_pixel(x as u32, y as u32, color);
            }
        }
    }

    /// Outlines every occluder's footprint seen from above — the silhouette of its triangles
    /// projected on xz, not its bounding box — where it rises above height `y`.
    pub fn outline_occluders(&self, img: &mut RgbImage, scene: &Scene, y: f32, color: Rgb<u8>) {
        crate::zone!("penumbra_lua::outline_occluders");
        for o in &scene.occluders {
            let b = o.bounds();
            if b.is_empty() || b.max.y <= y + 1e-3 {
                continue;
            }
            self.outline_footprint(img, o, color);
        }
    }

    /// One occluder's silhouette: its triangles projected on xz and filled (at pixel centres)
    /// into a mask over its pixel box, then the mask's edge pixels drawn. Triangles seen
    /// edge-on (walls) add their projected edges; triangles thinner than a pixel their centre.
    fn outline_footprint(&self, img: &mut RgbImage, o: &Occluder, color: Rgb<u8>) {
        let b = o.bounds();
        let (x0, y0) = self.pixel(Vec2::new(b.min.x, b.min.z));
        let (x1, y1) = self.pixel(Vec2::new(b.max.x, b.max.z));
        // The occluder's pixel box, one pixel of margin, clipped to the image.
        let (x0, y0) = ((x0 - 1).max(0), (y0 - 1).max(0));
        let (x1, y1) = (
            (x1 + 1).min(i64::from(self.width) - 1),
            (y1 + 1).min(i64::from(self.height) - 1),
        );
        if x1 < x0 || y1 < y0 {
            return;
        }
        let (w, h) = ((x1 - x0 + 1) as usize, (y1 - y0 + 1) as usize);
        if w.saturating_mul(h) > 1 << 26 {
            return;
        }
        let mut mask = vec![false; w * h];
        let positions = o.mesh.positions();
        let world: Vec<Vec2> = positions
            .iter()
            .map(|&p| {
                let q = o.transform.transform_point3(p);
                Vec2::new(q.x, q.z)
            })
            .collect();
        let mark = |mask: &mut [bool], x: i64, y: i64| {
            if (x0..=x1).contains(&x) && (y0..=y1).contains(&y) {
                mask[(y - y0) as usize * w + (x - x0) as usize] = true;
            }
        };
        for t in o.mesh.indices().chunks_exact(3) {
            let [a, bb, c] = [t[0], t[1], t[2]].map(|i| world[i as usize]);
            let area = (bb - a).perp_dot(c - a);
            if !area.is_finite() {
                continue;
            }
            if area.abs() <= f32::EPSILON * (bb - a).length_squared().max((c - a).length_squared())
            {
                // Edge-on: its projected edges.
                for (p, q) in [(a, bb), (bb, c), (c, a)] {
                    let (px, py) = self.pixel(p);
                    let (qx, qy) = self.pixel(q);
                    let steps = (qx - px).abs().max((qy - py).abs()).clamp(1, 20_000);
                    for i in 0..=steps {
                        mark(
                            &mut mask,
                            px + (qx - px) * i / steps,
                            py + (qy - py) * i / steps,
                        );
                    }
                }
                continue;
            }
            let lo = a.min(bb).min(c);
            let hi = a.max(bb).max(c);
            let (tx0, ty0) = self.pixel(lo);
            let (tx1, ty1) = self.pixel(hi);
            let mut covered_any = false;
            for py in ty0.max(y0)..=ty1.min(y1) {
                for px in tx0.max(x0)..=tx1.min(x1) {
                    let p = self.world(px as u32, py as u32);
                    let e0 = (bb - a).perp_dot(p - a);
                    let e1 = (c - bb).perp_dot(p - bb);
                    let e2 = (a - c).perp_dot(p - c);
                    let inside = if area > 0.0 {
                        e0 >= 0.0 && e1 >= 0.0 && e2 >= 0.0
                    } else {
                        e0 <= 0.0 && e1 <= 0.0 && e2 <= 0.0
                    };
                    if inside {
                        covered_any = true;
                        mark(&mut mask, px, py);
                    }
                }
            }
            if !covered_any {
                // Thinner than a pixel: its centre, so small parts still show.
                let (cx, cy) = self.pixel((a + bb + c) / 3.0);
                mark(&mut mask, cx, cy);
            }
        }
        for y in 0..h {
            for x in 0..w {
                if !mask[y * w + x] {
                    continue;
                }
                let edge = x == 0
                    || y == 0
                    || x + 1 == w
                    || y + 1 == h
                    || !mask[y * w + x - 1]
                    || !mask[y * w + x + 1]
                    || !mask[(y - 1) * w + x]
                    || !mask[(y + 1) * w + x];
                let (ix, iy) = (x0 + x as i64, y0 + y as i64);
                if edge && ix < i64::from(img.width()) && iy < i64::from(img.height()) {
                    img.put_pixel(ix as u32, iy as u32, color);
                }
            }
        }
    }

    /// A filled dot of radius `r` pixels.
    pub fn dot(&self, img: &mut RgbImage, p: Vec2, r: i64, color: Rgb<u8>) {
        let (cx, cy) = self.pixel(p);
        for dy in -r..=r {
            for dx in -r..=r {
                let (x, y) = (cx + dx, cy + dy);
                if dx * dx + dy * dy <= r * r
                    && x >= 0
                    && y >= 0
                    && (x as u32) < img.width()
                    && (y as u32) < img.height()
                {
                    img.put_pixel(x as u32, y as u32, color);
                }
            }
        }
    }

    /// A circle of `radius` world units around `center`.
    pub fn circle(&self, img: &mut RgbImage, center: Vec2, radius: f32, color: Rgb<u8>) {
        let n = 64;
        let at = |i: u32| {
            let a = std::f32::consts::TAU * i as f32 / n as f32;
            center + Vec2::new(a.cos(), a.sin()) * radius
        };
        for i in 0..n {
            self.line(img, at(i), at(i + 1), color);
        }
    }

    /// A view cone: two edges and an arc of `radius` around `dir` (xz) with half-angle `half`.
    pub fn cone(
        &self,
        img: &mut RgbImage,
        apex: Vec2,
        dir: Vec2,
        half: f32,
        radius: f32,
        color: Rgb<u8>,
    ) {
        let base = dir.y.atan2(dir.x);
        let at = |a: f32| apex + Vec2::new(a.cos(), a.sin()) * radius;
        self.line(img, apex, at(base - half), color);
        self.line(img, apex, at(base + half), color);
        let n = 32;
        for i in 0..n {
            let a0 = base - half + 2.0 * half * i as f32 / n as f32;
            let a1 = base - half + 2.0 * half * (i + 1) as f32 / n as f32;
            self.line(img, at(a0), at(a1), color);
        }
    }
}
