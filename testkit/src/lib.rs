//! Deterministic test data for the penumbra workspace: one seeded [`Rng`] with the few small
//! generators the tests, benches and examples use, the output mappings they draw with, and lists
//! of special `f32` values.
//!
//! For tests, benches and examples only (`publish = false`, a dev-dependency): nothing here is
//! cryptographic or even statistically strong, only small, fast and the same on every machine.
//! It depends on no penumbra crate, so every member — `penumbra_core` included — can use it.
//!
//! The sequences are test data: a test's cases and a bench's inputs are what its seed, its
//! generator and its mappings produce. Changing any of them here changes every caller's data, so
//! add a generator or a mapping rather than alter one.

/// The generator a [`Rng`] steps with (see its constructors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algorithm {
    XorShift64,
    XorShift32,
    XorShift64Star,
    SplitMix64,
    Lcg64,
    Lcg32,
}

/// A small seeded generator; the constructor picks the algorithm.
///
/// Every draw goes through [`next_u64`](Rng::next_u64); the other methods map it. The mappings
/// that read the high bits suit every generator, the 32-bit ones included (their output is the
/// top half of `next_u64`); those that read the low bits ([`below_mod`](Rng::below_mod),
/// [`index_mod`](Rng::index_mod), [`f32_bits`](Rng::f32_bits),
/// [`f32_subnormal`](Rng::f32_subnormal), [`byte_at`](Rng::byte_at) with a small shift) are for
/// the 64-bit ones.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
    algorithm: Algorithm,
}

impl Rng {
    /// Marsaglia's xorshift64 with shifts (13, 7, 17); the output is the new state. `seed` must
    /// not be 0.
    #[must_use]
    pub const fn xorshift64(seed: u64) -> Rng {
        Rng {
            state: seed,
            algorithm: Algorithm::XorShift64,
        }
    }

    /// Marsaglia's xorshift32 with shifts (13, 17, 5); the output is the new 32-bit state, as the
    /// top half of [`next_u64`](Rng::next_u64) (so [`next_u32`](Rng::next_u32) is the state).
    /// `seed` must not be 0.
    #[must_use]
    pub const fn xorshift32(seed: u32) -> Rng {
        Rng {
            state: seed as u64,
            algorithm: Algorithm::XorShift32,
        }
    }

    /// Vigna's xorshift64* with shifts (12, 25, 27): the new state times
    /// `0x2545_F491_4F6C_DD1D`. `seed` must not be 0.
    #[must_use]
    pub const fn xorshift64_star(seed: u64) -> Rng {
        Rng {
            state: seed,
            algorithm: Algorithm::XorShift64Star,
        }
    }

    /// SplitMix64 (Steele, Lea, Flood 2014): the state steps by the golden-ratio increment and
    /// each output is its multiply-xorshift mix. Any seed.
    #[must_use]
    pub const fn splitmix64(seed: u64) -> Rng {
        Rng {
            state: seed,
            algorithm: Algorithm::SplitMix64,
        }
    }

    /// Knuth's MMIX 64-bit LCG (× 6364136223846793005 + 1442695040888963407); the output is the
    /// new state. Any seed.
    #[must_use]
    pub const fn lcg64(seed: u64) -> Rng {
        Rng {
            state: seed,
            algorithm: Algorithm::Lcg64,
        }
    }

    /// The Numerical Recipes 32-bit LCG (× 1664525 + 1013904223); the output is the new 32-bit
    /// state, as the top half of [`next_u64`](Rng::next_u64). Any seed.
    #[must_use]
    pub const fn lcg32(seed: u32) -> Rng {
        Rng {
            state: seed as u64,
            algorithm: Algorithm::Lcg32,
        }
    }

    /// The next output (for the 32-bit generators, their output in the top 32 bits and zeros
    /// below).
    pub fn next_u64(&mut self) -> u64 {
        match self.algorithm {
            Algorithm::XorShift64 => {
                let mut s = self.state;
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                self.state = s;
                s
            }
            Algorithm::XorShift32 => {
                let mut x = self.state as u32;
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                self.state = u64::from(x);
                u64::from(x) << 32
            }
            Algorithm::XorShift64Star => {
                let mut s = self.state;
                s ^= s >> 12;
                s ^= s << 25;
                s ^= s >> 27;
                self.state = s;
                s.wrapping_mul(0x2545_F491_4F6C_DD1D)
            }
            Algorithm::SplitMix64 => {
                self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = self.state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^ (z >> 31)
            }
            Algorithm::Lcg64 => {
                self.state = self
                    .state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                self.state
            }
            Algorithm::Lcg32 => {
                let x = (self.state as u32)
                    .wrapping_mul(1_664_525)
                    .wrapping_add(1_013_904_223);
                self.state = u64::from(x);
                u64::from(x) << 32
            }
        }
    }

    /// The top 32 bits of the next output (the whole output of a 32-bit generator).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Bits `shift..shift + 8` of the next output.
    pub fn byte_at(&mut self, shift: u32) -> u8 {
        (self.next_u64() >> shift) as u8
    }

    /// `n` draws of [`byte_at(shift)`](Rng::byte_at).
    pub fn bytes_at(&mut self, shift: u32, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte_at(shift)).collect()
    }

    /// A uniform f32 in `[0, 1)`: the top 24 bits over 2^24.
    pub fn f32_unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// `lo + (hi - lo) · u` with `u` from [`f32_unit`](Rng::f32_unit): uniform in `[lo, hi)`
    /// up to rounding.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32_unit()
    }

    /// A uniform f64 in `[0, 1)`: the top 53 bits over 2^53.
    pub fn f64_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `lo + u · (hi - lo)` with `u` from [`f64_unit`](Rng::f64_unit).
    pub fn f64_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + self.f64_unit() * (hi - lo)
    }

    /// An integer in `0..n` (`n > 0`): the next output modulo `n`.
    pub fn below_mod(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// An index in `0..len` (`len > 0`): the next output modulo `len`.
    pub fn index_mod(&mut self, len: usize) -> usize {
        (self.next_u64() % len as u64) as usize
    }

    /// An integer in `0..n` (`n > 0`) by multiply-shift: the top 32 bits times `n`, over 2^32.
    pub fn below_mul(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }

    /// An integer in `0..n` (`n > 0`) through f32: [`f32_unit`](Rng::f32_unit) times `n`,
    /// truncated (and kept below `n`).
    pub fn below_f32(&mut self, n: u32) -> u32 {
        ((self.f32_unit() * n as f32) as u32).min(n - 1)
    }

    /// One element of a non-empty slice, by [`below_mul`](Rng::below_mul).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below_mul(items.len() as u32) as usize]
    }

    /// A point in the box from `lo` to `hi`: [`f32_in`](Rng::f32_in) per axis, x then y then z.
    #[cfg(feature = "glam")]
    pub fn point(&mut self, lo: glam::Vec3, hi: glam::Vec3) -> glam::Vec3 {
        lo + (hi - lo) * glam::Vec3::new(self.f32_unit(), self.f32_unit(), self.f32_unit())
    }

    /// The low 32 bits of the next output as an f32: any value, NaNs and infinities included.
    pub fn f32_bits(&mut self) -> f32 {
        f32::from_bits(self.next_u64() as u32)
    }

    /// A ± subnormal or ±0: the low 32 bits of the next output with the exponent cleared.
    pub fn f32_subnormal(&mut self) -> f32 {
        f32::from_bits(self.next_u64() as u32 & 0x807F_FFFF)
    }

    /// An f32 that stresses comparisons and filtering: one of [`SPECIAL_F32`] (1 in 8), an
    /// [`f32_subnormal`](Rng::f32_subnormal) (1 in 8), an [`f32_bits`](Rng::f32_bits) (1 in 8),
    /// else uniform in `[0, 1)` ([`f32_in`](Rng::f32_in)); the choices are
    /// [`index_mod`](Rng::index_mod) draws.
    pub fn f32_special(&mut self) -> f32 {
        match self.index_mod(8) {
            0 => SPECIAL_F32[self.index_mod(SPECIAL_F32.len())],
            1 => self.f32_subnormal(),
            2 => self.f32_bits(),
            _ => self.f32_in(0.0, 1.0),
        }
    }
}

/// Fixed noise without a generator: byte `i` is the top byte of `i · 0x9E37_79B9_7F4A_7C15`
/// (Fibonacci hashing), so any index can be computed on its own.
#[must_use]
pub const fn noise_byte(i: u64) -> u8 {
    (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

/// f32 values where comparisons, clamps and filters go wrong: NaN, the infinities, both zeros,
/// the ends of the unit range, huge values of both signs and the smallest normal.
pub const SPECIAL_F32: [f32; 10] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    1.0,
    0.5,
    1e30,
    -1e30,
    f32::MIN_POSITIVE,
];

/// The f32 values that are not finite: NaN and the two infinities.
pub const NON_FINITE_F32: [f32; 3] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs of every generator, pinned: they are every caller's test data.
    #[test]
    fn sequences_do_not_change() {
        let first = |mut rng: Rng| [rng.next_u64(), rng.next_u64(), rng.next_u64()];
        let golden: [(Rng, [u64; 3]); 6] = [
            (Rng::xorshift64(1), GOLDEN[0]),
            (Rng::xorshift32(1), GOLDEN[1]),
            (Rng::xorshift64_star(1), GOLDEN[2]),
            (Rng::splitmix64(1), GOLDEN[3]),
            (Rng::lcg64(1), GOLDEN[4]),
            (Rng::lcg32(1), GOLDEN[5]),
        ];
        for (rng, want) in golden {
            let name = format!("{:?}", rng.algorithm);
            assert_eq!(first(rng), want, "{name}");
        }
    }

    /// From seed 1: xorshift64, xorshift32, xorshift64*, SplitMix64, LCG64, LCG32.
    const GOLDEN: [[u64; 3]; 6] = [
        [0x40822041, 0x100041060c011441, 0x9b1e842f6e862629],
        [0x4202100000000, 0x408060100000000, 0x9dcca8c500000000],
        [0x47e4ce4b896cdd1d, 0xabcfa6a8e079651d, 0xb9d10d8feb731f57],
        [0x910a2dec89025cc1, 0xbeeb8da1658eec67, 0xf893a2eefb32555e],
        [0x6c576fac43fd007c, 0x826886b3864a1b1b, 0xa5fae1992097aa0e],
        [0x3c88596c00000000, 0x5e8885db00000000, 0x8116017e00000000],
    ];

    #[test]
    fn mappings_stay_in_range() {
        let mut rng = Rng::splitmix64(3);
        for n in 1..100u32 {
            assert!(rng.below_mul(n) < n);
            assert!(rng.below_f32(n) < n);
            assert!(rng.below_mod(u64::from(n)) < u64::from(n));
            assert!(rng.index_mod(n as usize) < n as usize);
            assert!((0.0..1.0).contains(&rng.f32_unit()));
            assert!((0.0..1.0).contains(&rng.f64_unit()));
            assert!((-2.0..3.0).contains(&rng.f32_in(-2.0, 3.0)));
        }
    }
}
