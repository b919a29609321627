//! The HLSL documentation's buffer search (R117) and its byte-slice form.

use super::plan::MAX_TEMPLATE_BYTES;
use super::{Image, MatchError, msad4, sad_map};

/// The buffer search of the HLSL msad4 docs, exactly (R117): for every thread `x` with
/// `REF_SIZE + 1` source words available, `accum = msad4(pattern[i], [source[x+i],
/// source[x+i+1]], accum)` for `i` in `0..REF_SIZE`, starting from 0.
///
/// Entry `x` of the result therefore holds, in `[k]`, the SAD between the pattern's bytes and the
/// source bytes starting at byte offset `4x + k`, skipping pattern bytes that are 0. Results are
/// only defined by HLSL up to 65535 (R118: `REF_SIZE ≤ 64` keeps them there); above that this
/// crate saturates (R116).
///
/// ```
/// use penumbra_core::msad4::msad4_buffer_search;
/// let source = [0x0403_0201, 0x0807_0605, 0x0C0B_0A09];
/// // The pattern 05 06 07 08 sits at byte offset 4: thread 1, alignment 0.
/// let scores = msad4_buffer_search(&[0x0807_0605], &source)?;
/// assert_eq!(scores.len(), 2);
/// assert_eq!(scores[1][0], 0);
/// # Ok::<(), penumbra_core::msad4::MatchError>(())
/// ```
pub fn msad4_buffer_search(pattern: &[u32], source: &[u32]) -> Result<Vec<[u32; 4]>, MatchError> {
    crate::zone!("penumbra::msad4::buffer_search");
    if pattern.is_empty() {
        return Err(MatchError::ZeroSize {
            what: "pattern",
            width: 0,
            height: 1,
        });
    }
    // R117: thread x reads source[x ..= x + REF_SIZE].
    let needed = pattern.len() + 1;
    if source.len() < needed {
        return Err(MatchError::SourceTooShort {
            pattern: pattern.len(),
            needed,
            actual: source.len(),
        });
    }
    let threads = source.len() - pattern.len();
    if pattern.len() * 4 > MAX_TEMPLATE_BYTES {
        // Sums this large may saturate (R116) mid-way: replay the loop literally.
        return Ok((0..threads)
            .map(|x| {
                pattern.iter().enumerate().fold([0; 4], |accum, (i, &r)| {
                    msad4(r, [source[x + i], source[x + i + 1]], accum)
                })
            })
            .collect());
    }
    // Below the limit no partial sum can saturate, so every accum[k] is the plain masked SAD at
    // byte offset 4x + k (R117), which the SAD-map kernels compute for all offsets at once.
    let pattern_bytes: Vec<u8> = pattern.iter().flat_map(|w| w.to_le_bytes()).collect();
    let source_bytes: Vec<u8> = source.iter().flat_map(|w| w.to_le_bytes()).collect();
    let sads = sad_bytes(&pattern_bytes, &source_bytes)?;
    Ok(sads
        .chunks(4)
        .take(threads)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect())
}

/// The masked SAD of `pattern` at every byte offset of `source` where it fits
/// (`source.len() − pattern.len() + 1` scores): R115 over byte slices, pattern bytes that are 0
/// being "don't care".
///
/// ```
/// use penumbra_core::msad4::sad_bytes;
/// let scores = sad_bytes(&[3, 0, 5], &[9, 3, 7, 5, 1])?;
/// assert_eq!(scores, vec![6 + 2, 0, 4 + 4]);
/// # Ok::<(), penumbra_core::msad4::MatchError>(())
/// ```
pub fn sad_bytes(pattern: &[u8], source: &[u8]) -> Result<Vec<u32>, MatchError> {
    crate::zone!("penumbra::msad4::sad_bytes");
    if source.len() < pattern.len() {
        return Err(MatchError::SourceTooShort {
            pattern: pattern.len(),
            needed: pattern.len(),
            actual: source.len(),
        });
    }
    let too_long = |len: usize| MatchError::TemplateTooLarge {
        bytes: len,
        max: u32::MAX as usize,
    };
    let pw = u32::try_from(pattern.len()).map_err(|_| too_long(pattern.len()))?;
    let sw = u32::try_from(source.len()).map_err(|_| too_long(source.len()))?;
    let pattern = Image::r8(pw, 1, pattern.to_vec()).map_err(|e| match e {
        MatchError::ZeroSize { .. } => MatchError::ZeroSize {
            what: "pattern",
            width: 0,
            height: 1,
        },
        other => other,
    })?;
    let source = Image::r8(sw, 1, source.to_vec())?;
    Ok(sad_map(&source, &pattern, 1)?.data)
}
