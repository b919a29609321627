//! The order in which a batch of rays is cast: along a Z-order (Morton) curve through their
//! origins, so that rays cast one after another start near each other and walk mostly the same
//! nodes and triangles, which then stay in cache. Each ray's answer does not depend on the
//! order (every cast is independent); only the time does.

use glam::{DVec3, Vec3};

/// Bits of the Morton key per axis.
const BITS: u32 = 10;
/// Bits sorted per pass of the radix sort (three passes cover the 30-bit key).
const RADIX: u32 = 10;

/// Batches shorter than this are cast in the order given: sorting them would save less than
/// it costs.
pub(crate) const SORT_FROM: usize = 256;

/// `x` (10 bits) with two zero bits after each of its bits.
fn spread(x: u32) -> u32 {
    let mut x = x & 0x3ff;
    x = (x | (x << 16)) & 0x0300_00ff;
    x = (x | (x << 8)) & 0x0300_f00f;
    x = (x | (x << 4)) & 0x030c_30c3;
    (x | (x << 2)) & 0x0924_9249
}

/// The positions `0..rays.len()` sorted along a Z-order curve through the rays' origins, over
/// a cube that holds every finite origin (one scale for every axis, so that the curve's cells
/// are cubes in world space: a level is much wider than it is tall, and per-axis scales would
/// make the curve jump between heights before it moves sideways), then the rays whose origin
/// is not finite, in their given order. Ties keep their order.
///
/// Sorting by both ends of each ray (a six-dimensional curve) was tried and cast the benches'
/// rays 25 % slower than the given order: rays that start together but point apart are put
/// far apart, and the curve's cells grow with the rays' length.
pub(crate) fn coherent_order(rays: &[(Vec3, Vec3)]) -> Vec<u32> {
    crate::zone!("penumbra::raster::ray::coherent_order");
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for &(o, _) in rays.iter().filter(|r| r.0.is_finite()) {
        lo = lo.min(o.as_dvec3());
        hi = hi.max(o.as_dvec3());
    }
    // In f64, where the extent of f32 origins cannot overflow; 0 when every origin is at one
    // point (or none is finite): every key is then 0.
    let top = (1u32 << BITS) - 1;
    let e = (hi - lo).max_element();
    let scale = if e > 0.0 && e.is_finite() {
        f64::from(top) / e
    } else {
        0.0
    };
    let key = |o: Vec3| -> u32 {
        // `as` saturates: rounding past the last cell stays in range.
        let c = ((o.as_dvec3() - lo) * scale)
            .to_array()
            .map(|c| (c as u32).min(top));
        spread(c[0]) | (spread(c[1]) << 1) | (spread(c[2]) << 2)
    };
    let mut items: Vec<(u32, u32)> = Vec::with_capacity(rays.len());
    let mut broken = Vec::new();
    for (i, &(o, _)) in rays.iter().enumerate() {
        if o.is_finite() {
            items.push((key(o), i as u32));
        } else {
            broken.push(i as u32);
        }
    }
    // Least significant digit first; each pass is stable.
    let mut spare = vec![(0u32, 0u32); items.len()];
    let buckets = 1usize << RADIX;
    for pass in 0..(3 * BITS).div_ceil(RADIX) {
        let shift = pass * RADIX;
        let digit = |k: u32| ((k >> shift) as usize) & (buckets - 1);
        let mut start = vec![0usize; buckets + 1];
        for &(k, _) in &items {
            start[digit(k) + 1] += 1;
        }
        for b in 0..buckets {
            start[b + 1] += start[b];
        }
        for &item in &items {
            let d = digit(item.0);
            spare[start[d]] = item;
            start[d] += 1;
        }
        std::mem::swap(&mut items, &mut spare);
    }
    items.into_iter().map(|(_, i)| i).chain(broken).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_a_permutation_along_the_z_curve() {
        let origins: Vec<Vec3> = (0..1000)
            .map(|i| {
                let f = i as f32;
                Vec3::new((f * 7.3) % 50.0, (f * 1.1) % 3.0, (f * 13.7) % 40.0)
            })
            .chain([Vec3::NAN, Vec3::splat(f32::INFINITY), Vec3::ZERO])
            .collect();
        let rays: Vec<(Vec3, Vec3)> = origins.iter().map(|&o| (o, Vec3::NEG_Y)).collect();
        let order = coherent_order(&rays);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..origins.len() as u32).collect::<Vec<_>>());
        // The two non-finite origins come last, in their given order.
        assert_eq!(&order[order.len() - 2..], &[1000, 1001]);
        // Neighbours on the curve are near each other far more often than not.
        let near = order
            .windows(2)
            .filter(|w| origins[w[0] as usize].distance(origins[w[1] as usize]) < 10.0)
            .count();
        assert!(near > 900, "{near}");
    }

    #[test]
    fn spread_interleaves() {
        assert_eq!(spread(0b11), 0b1001);
        assert_eq!(spread(0x3ff), 0x0924_9249);
        // One origin, or all at one point: every key is 0, the order is the given one.
        let same = coherent_order(&[(Vec3::ONE, Vec3::X); 5]);
        assert_eq!(same, vec![0, 1, 2, 3, 4]);
        // The far corner of the origins' cube has the largest key there is; a broken origin
        // still comes after it.
        let corner = coherent_order(&[
            (Vec3::ZERO, Vec3::X),
            (Vec3::NAN, Vec3::X),
            (Vec3::ONE, Vec3::X),
        ]);
        assert_eq!(corner, vec![0, 2, 1]);
        // Origins a whole f32 range apart: the extent is taken in f64, so the curve still
        // orders them (the far one last among the finite).
        let wide = coherent_order(&[
            (Vec3::splat(f32::MAX), Vec3::X),
            (Vec3::splat(-f32::MAX), Vec3::X),
            (Vec3::ZERO, Vec3::X),
        ]);
        assert_eq!(wide, vec![1, 2, 0]);
    }
}
