//! Per-thread memory for running work-groups: an aligned, grow-only byte block.
//!
//! Every thread that runs work-groups (pool workers and callers of
//! [`super::run_ndrange`]) keeps one block for `__local` memory, one for the
//! scratch area and one for its copy of the argument block. They are reused across
//! launches and only ever grow, so a launch allocates nothing in the steady state.
//! This module must not know about kernels; it only hands out aligned bytes.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// Alignment of every block: at least the 64 bytes the ABI promises, 128 so that the
/// `__local` argument offsets (multiples of 128) keep 128-byte alignment.
pub const BLOCK_ALIGN: usize = 128;

/// A heap block aligned to [`BLOCK_ALIGN`] that keeps its allocation when it grows
/// only if it has to. Its contents are undefined after [`AlignedBlock::reserve`].
pub struct AlignedBlock {
    ptr: NonNull<u8>,
    capacity: usize,
}

// SAFETY: the block owns its allocation exclusively; moving it to another thread moves
// that ownership, and it has no interior mutability.
unsafe impl Send for AlignedBlock {}

impl AlignedBlock {
    /// An empty block (no allocation).
    pub const fn new() -> Self {
        AlignedBlock {
            ptr: NonNull::dangling(),
            capacity: 0,
        }
    }

    /// Bytes currently allocated.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Makes the block at least `size` bytes (at least one alignment unit, so the
    /// pointer is always a real allocation) and returns its start. Grows by
    /// reallocating without preserving the contents.
    pub fn reserve(&mut self, size: usize) -> *mut u8 {
        let size = size.max(BLOCK_ALIGN);
        if size > self.capacity {
            // Grow geometrically so a slowly growing series of launches does not
            // reallocate every time.
            let new_capacity = size
                .max(self.capacity.saturating_mul(2))
                .next_multiple_of(BLOCK_ALIGN);
            self.release();
            let layout = Self::layout(new_capacity);
            // SAFETY: the layout has a non-zero size (at least BLOCK_ALIGN).
            let ptr = unsafe { alloc::alloc(layout) };
            let Some(ptr) = NonNull::new(ptr) else {
                alloc::handle_alloc_error(layout)
            };
            self.ptr = ptr;
            self.capacity = new_capacity;
        }
        self.ptr.as_ptr()
    }

    /// Copies `bytes` to the start of the block (growing it if needed) and returns the
    /// block's start.
    pub fn fill_from(&mut self, bytes: &[u8]) -> *mut u8 {
        let dst = self.reserve(bytes.len());
        // SAFETY: `dst` has at least `bytes.len()` bytes and cannot overlap `bytes`,
        // which the caller borrows from elsewhere.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) };
        dst
    }

    fn layout(capacity: usize) -> Layout {
        match Layout::from_size_align(capacity, BLOCK_ALIGN) {
            Ok(layout) => layout,
            // Only reachable for sizes near isize::MAX, which no launch can ask for
            // after the runtime's local memory checks.
            Err(_) => panic!("cranecl: block of {capacity} bytes is too large to allocate"),
        }
    }

    fn release(&mut self) {
        if self.capacity != 0 {
            // SAFETY: `ptr` came from `alloc` with exactly this layout.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.capacity)) };
            self.ptr = NonNull::dangling();
            self.capacity = 0;
        }
    }
}

impl Default for AlignedBlock {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for AlignedBlock {
    fn drop(&mut self) {
        self.release();
    }
}

/// The three blocks one thread uses to run work-groups.
#[derive(Default)]
pub struct WorkerMemory {
    /// `__local` memory: kernel-scope variables, then the `__local` arguments.
    pub local: AlignedBlock,
    /// The scratch area the region-split code keeps values in across barriers.
    pub scratch: AlignedBlock,
    /// This thread's copy of the argument block, with its `__local` pointers patched.
    pub args: AlignedBlock,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_aligns_and_grows_only() {
        let mut block = AlignedBlock::new();
        let p = block.reserve(10);
        assert_eq!(p as usize % BLOCK_ALIGN, 0);
        assert_eq!(block.capacity(), BLOCK_ALIGN);
        let p2 = block.reserve(64);
        assert_eq!(p, p2, "a smaller request must reuse the allocation");
        let p3 = block.reserve(1000);
        assert_eq!(p3 as usize % BLOCK_ALIGN, 0);
        assert!(block.capacity() >= 1000);
        let cap = block.capacity();
        block.reserve(cap);
        assert_eq!(block.capacity(), cap);
    }

    #[test]
    fn fill_copies_bytes() {
        let mut block = AlignedBlock::new();
        let data: Vec<u8> = (0..200u8).collect();
        let p = block.fill_from(&data);
        // SAFETY: the block holds at least 200 initialised bytes now.
        let copy = unsafe { std::slice::from_raw_parts(p, data.len()) };
        assert_eq!(copy, &data[..]);
    }
}
