//! Shared by the core test files: a small deterministic generator (a 64-bit LCG), so every run
//! sees the same scenes, moves and points.
#![allow(dead_code)] // each test file uses part of it

use glam::Vec3;

/// A 64-bit LCG.
pub struct Rng(pub u64);

impl Rng {
    /// A value in [0, 1).
    pub fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A value in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }

    /// An integer in 0..n (n > 0).
    pub fn below(&mut self, n: u32) -> u32 {
        ((self.next() * n as f32) as u32).min(n - 1)
    }

    /// A point in the box from `lo` to `hi` (x, then y, then z drawn).
    pub fn point(&mut self, lo: Vec3, hi: Vec3) -> Vec3 {
        lo + (hi - lo) * Vec3::new(self.next(), self.next(), self.next())
    }
}
