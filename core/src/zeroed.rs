//! Zero-filled buffers that are not touched when made: large ones come from the allocator's
//! zeroed pages (on Linux, fresh mappings), so only the parts later written cost memory and
//! time — a 2048² shadow map drawn tile by tile pays for the tiles it draws.

/// Integer types for which all-zero bytes are the value 0.
pub(crate) trait Zeroable: Copy {}
impl Zeroable for u8 {}
impl Zeroable for u16 {}
impl Zeroable for i32 {}

/// `len` zeros, or `None` when the memory cannot be had (instead of aborting).
pub(crate) fn zeroed_vec<T: Zeroable>(len: usize) -> Option<Vec<T>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(len).ok()?;
    // SAFETY: the layout has a nonzero size; a non-null result is an allocation of `len`
    // zeroed `T`s with the global allocator and `T`'s alignment, which is what `Vec` owns, and
    // zero bytes are a valid `T` (`Zeroable`).
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<T>();
        if ptr.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(ptr, len, len))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn zeroed_vectors_are_zero_and_refuse_impossible_sizes() {
        let v = super::zeroed_vec::<i32>(1 << 20).unwrap();
        assert!(v.iter().all(|&x| x == 0));
        assert_eq!(v.len(), 1 << 20);
        assert!(super::zeroed_vec::<u16>(0).unwrap().is_empty());
        assert!(super::zeroed_vec::<i32>(usize::MAX / 2).is_none());
    }
}
