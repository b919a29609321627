//! The case generator's draws: SplitMix64 from the workspace's one test-data generator
//! (`penumbra_testkit`), so the same seed gives the same cases on every machine.

/// SplitMix64 with the draws the case generator makes.
#[derive(Clone, Debug)]
pub struct Rng(penumbra_testkit::Rng);

impl Rng {
    /// A generator seeded with `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Rng {
        Rng(penumbra_testkit::Rng::splitmix64(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniform integer in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n > 0);
        self.0.below_mul(n)
    }

    /// A uniform integer in `lo..=hi`.
    pub fn range_i32(&mut self, lo: i32, hi: i32) -> i32 {
        lo + self.below((hi - lo + 1) as u32) as i32
    }

    /// A uniform f64 in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        self.0.f64_unit()
    }

    /// A uniform f32 in `[lo, hi)` (rounded once from f64).
    pub fn range_f32(&mut self, lo: f32, hi: f32) -> f32 {
        self.0.f64_in(f64::from(lo), f64::from(hi)) as f32
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        self.0.pick(items)
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn same_seed_same_stream() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::new(1);
        for n in 1..50 {
            for _ in 0..50 {
                assert!(r.below(n) < n);
            }
        }
    }
}
