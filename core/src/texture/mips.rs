//! Mip chains: generating mips 1.. from mip 0 with an average, min or max filter.

use std::sync::Arc;

use super::{Storage, Texture, TextureDesc, TextureError, allocate, filled_in_steps};

/// How [`Texture::generate_mips`] reduces a 2×2(×2) footprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MipFilter {
    /// The average (a box filter), for colour and ordinary maps.
    Average,
    /// The minimum, for conservative hierarchical depth (reversed-Z or "nearest occluder").
    Min,
    /// The maximum, for conservative hierarchical depth ("farthest occluder").
    Max,
}

impl Texture {
    /// A texture whose mip 0 of every slice comes from `level0` (float values, `channels()` per
    /// texel, slices one after another) and whose further mips are generated with `filter`.
    pub fn from_level0_f32(
        desc: TextureDesc,
        level0: &[f32],
        filter: MipFilter,
    ) -> Result<Texture, TextureError> {
        // The length is checked before anything is allocated.
        desc.validate()?;
        let f = desc.format;
        let ch = f.channels();
        let per_slice = desc.subresource_bytes(0) / f.bytes_per_texel();
        if level0.len() != per_slice * ch * desc.array_size as usize {
            return Err(TextureError::DataLength {
                what: format!("mip 0 of {} slices of {f}", desc.array_size),
                expected: per_slice * ch * desc.array_size as usize,
                actual: level0.len(),
                unit: "values",
            });
        }
        let (mut data, offsets) = allocate(&desc)?;
        for slice in 0..desc.array_size as usize {
            let start = offsets[slice * desc.mip_levels as usize];
            let sub = &mut data[start..start + desc.subresource_bytes(0)];
            for (t, chunk) in sub.chunks_exact_mut(f.bytes_per_texel()).enumerate() {
                for c in 0..ch {
                    let v = level0[(slice * per_slice + t) * ch + c];
                    f.store_raw_component(chunk, c, f.encode_component(v));
                }
            }
        }
        let mut storage = Storage {
            desc,
            data,
            offsets,
        };
        generate_mips_in_place(&mut storage, filter)?;
        Ok(Texture::from_storage(storage))
    }

    /// A copy of this texture with mips 1.. regenerated from mip 0 with `filter`
    /// (the view is kept).
    ///
    /// # Errors
    /// [`TextureError::OutOfMemory`] when the copy cannot be allocated;
    /// [`TextureError::Interrupted`] when the [deadline](crate::deadline) in force passes first.
    pub fn generate_mips(&self, filter: MipFilter) -> Result<Texture, TextureError> {
        let src = &self.storage.data;
        let mut data = Vec::new();
        data.try_reserve_exact(src.len())
            .map_err(|_| TextureError::OutOfMemory {
                bytes: src.len() as u64,
            })?;
        filled_in_steps(&mut data, src.len(), |d, n| {
            let at = d.len();
            d.extend_from_slice(&src[at..at + n]);
        })?;
        let mut storage = Storage {
            desc: self.storage.desc,
            data,
            offsets: self.storage.offsets.clone(),
        };
        generate_mips_in_place(&mut storage, filter)?;
        Ok(Texture {
            storage: Arc::new(storage),
            view: self.view,
        })
    }
}

/// The source texels `[lo, hi)` a destination texel `x` of a `dst`-wide level covers in a
/// `src`-wide level. Footprints cover every source texel (odd sizes overlap by one), so min/max
/// chains stay conservative.
fn footprint(x: u32, src: u32, dst: u32) -> (u32, u32) {
    let lo = (u64::from(x) * u64::from(src) / u64::from(dst)) as u32;
    let hi = (u64::from(x + 1) * u64::from(src)).div_ceil(u64::from(dst)) as u32;
    (lo, hi.max(lo + 1).min(src))
}

/// Fills mips 1.. of every slice from the mip above; checks the deadline once per row.
fn generate_mips_in_place(storage: &mut Storage, filter: MipFilter) -> Result<(), TextureError> {
    let desc = storage.desc;
    let f = desc.format;
    let bpt = f.bytes_per_texel();
    let ch = f.channels();
    for slice in 0..desc.array_size {
        for mip in 1..desc.mip_levels {
            let [sw, sh, sd] = desc.level_size(mip - 1);
            let [dw, dh, dd] = desc.level_size(mip);
            let src_at = storage.offsets[(mip - 1 + slice * desc.mip_levels) as usize];
            let dst_at = storage.offsets[(mip + slice * desc.mip_levels) as usize];
            let (head, tail) = storage.data.split_at_mut(dst_at);
            let src = &head[src_at..];
            for z in 0..dd {
                let (z0, z1) = footprint(z, sd, dd);
                for y in 0..dh {
                    if crate::deadline::expired() {
                        return Err(TextureError::Interrupted);
                    }
                    let (y0, y1) = footprint(y, sh, dh);
                    for x in 0..dw {
                        let (x0, x1) = footprint(x, sw, dw);
                        let mut acc = [0f64; 4];
                        let mut ext = [f32::NAN; 4];
                        let mut n = 0u32;
                        for sz in z0..z1 {
                            for sy in y0..y1 {
                                for sx in x0..x1 {
                                    let at = ((sz * sh + sy) * sw + sx) as usize * bpt;
                                    let v = f.load(&src[at..at + bpt]);
                                    for c in 0..ch {
                                        acc[c] += f64::from(v[c]);
                                        ext[c] = match filter {
                                            MipFilter::Min => ext[c].min(v[c]),
                                            _ => ext[c].max(v[c]),
                                        };
                                    }
                                    n += 1;
                                }
                            }
                        }
                        let mut out = [0.0, 0.0, 0.0, 1.0];
                        for c in 0..ch {
                            out[c] = match filter {
                                MipFilter::Average => (acc[c] / f64::from(n)) as f32,
                                MipFilter::Min | MipFilter::Max => ext[c],
                            };
                        }
                        let at = ((z * dh + y) * dw + x) as usize * bpt;
                        f.store(out, &mut tail[at..at + bpt]);
                    }
                }
            }
        }
    }
    Ok(())
}
