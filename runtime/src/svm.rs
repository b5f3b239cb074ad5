//! Shared virtual memory (coarse- and fine-grained buffers) and Intel unified shared
//! memory: allocations that the host and kernels address with the same pointer.
//!
//! On a CPU device every allocation is ordinary host memory, so "sharing" needs no
//! copies: an SVM pointer set as a kernel argument is passed through as it is, and
//! maps are ordering points only. Each context keeps the registry of its allocations
//! ([`SvmRegistry`]) so clSVMFree can check and release them and whatever the
//! application forgets is freed with the context.

use std::alloc::{self, Layout};
use std::collections::BTreeMap;

use crate::sync::Mutex;
use opencl_sys::*;

use crate::platform::BUFFER_ALIGN;

/// Largest alignment clSVMAlloc accepts (a page).
pub const MAX_ALIGNMENT: usize = 4096;

/// What kind of shared allocation a pointer belongs to (all are host memory here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocKind {
    /// clSVMAlloc.
    Svm,
    /// cl_intel_unified_shared_memory: clHostMemAllocINTEL.
    UsmHost,
    /// clDeviceMemAllocINTEL.
    UsmDevice,
    /// clSharedMemAllocINTEL.
    UsmShared,
}

/// One allocation: its layout and kind.
#[derive(Clone, Copy, Debug)]
struct Allocation {
    layout: Layout,
    kind: AllocKind,
}

/// The SVM and USM allocations of one context, by base address.
#[derive(Default)]
pub struct SvmRegistry {
    allocations: Mutex<BTreeMap<usize, Allocation>>,
}

/// Checks `clSVMAlloc` flags: access flags plus the fine-grain bit, and
/// `CL_MEM_SVM_ATOMICS` with it (kernel atomics are locked instructions on the same
/// coherent memory the host's atomics use, so they are atomic across host and device).
pub fn validate_flags(flags: cl_svm_mem_flags) -> bool {
    let access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
    let known = access | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
    let atomics_without_fine_grain =
        flags & CL_MEM_SVM_ATOMICS != 0 && flags & CL_MEM_SVM_FINE_GRAIN_BUFFER == 0;
    flags & !known == 0 && (flags & access).count_ones() <= 1 && !atomics_without_fine_grain
}

impl SvmRegistry {
    /// Allocates `size` zeroed bytes aligned to `alignment` (0: the buffer alignment);
    /// `None` for a bad size or alignment or when memory runs out (clSVMAlloc returns
    /// NULL in all those cases).
    pub fn alloc(
        &self,
        size: usize,
        alignment: usize,
        max_size: u64,
        kind: AllocKind,
    ) -> Option<*mut u8> {
        let align = if alignment == 0 {
            BUFFER_ALIGN
        } else {
            alignment
        };
        if size == 0 || size as u64 > max_size || !align.is_power_of_two() || align > MAX_ALIGNMENT
        {
            return None;
        }
        let layout = Layout::from_size_align(size, align.max(BUFFER_ALIGN)).ok()?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return None;
        }
        self.allocations
            .lock()
            .insert(ptr as usize, Allocation { layout, kind });
        Some(ptr)
    }

    /// Frees the allocation starting at address `addr`; `false` if there is none.
    pub fn free(&self, addr: usize) -> bool {
        let ptr = addr as *mut u8;
        let layout = self.allocations.lock().remove(&addr).map(|a| a.layout);
        match layout {
            Some(layout) => {
                // SAFETY: allocated in `alloc` with exactly this layout, removed from
                // the registry so it cannot be freed twice.
                unsafe { alloc::dealloc(ptr, layout) };
                true
            }
            None => false,
        }
    }

    /// The allocation containing `ptr`: its base and size.
    pub fn find(&self, ptr: *const u8) -> Option<(usize, usize)> {
        self.find_kind(ptr).map(|(base, size, _)| (base, size))
    }

    /// The allocation containing `ptr`: base, size and kind.
    pub fn find_kind(&self, ptr: *const u8) -> Option<(usize, usize, AllocKind)> {
        let p = ptr as usize;
        let map = self.allocations.lock();
        let (base, a) = map.range(..=p).next_back()?;
        (p < base + a.layout.size()).then_some((*base, a.layout.size(), a.kind))
    }

    /// Whether `[ptr, ptr + len)` lies inside one allocation.
    pub fn contains(&self, ptr: *const u8, len: usize) -> bool {
        self.find(ptr).is_some_and(|(base, size)| {
            (ptr as usize)
                .checked_add(len)
                .is_some_and(|end| end <= base + size)
        })
    }
}

impl Drop for SvmRegistry {
    fn drop(&mut self) {
        for (base, Allocation { layout, .. }) in std::mem::take(self.allocations.get_mut()) {
            // SAFETY: every entry is a live allocation made with this layout.
            unsafe { alloc::dealloc(base as *mut u8, layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_find_free() {
        let r = SvmRegistry::default();
        assert!(r.alloc(0, 0, 1 << 20, AllocKind::Svm).is_none());
        assert!(r.alloc(64, 3, 1 << 20, AllocKind::Svm).is_none());
        assert!(r.alloc(2 << 20, 0, 1 << 20, AllocKind::Svm).is_none());
        let p = r
            .alloc(1000, 256, 1 << 20, AllocKind::UsmShared)
            .expect("alloc");
        assert_eq!(p as usize % 256, 0);
        assert_eq!(r.find(p.wrapping_add(999)), Some((p as usize, 1000)));
        assert_eq!(r.find_kind(p).map(|k| k.2), Some(AllocKind::UsmShared));
        assert!(r.find(p.wrapping_add(1000)).is_none());
        assert!(r.contains(p.wrapping_add(10), 990));
        assert!(!r.contains(p.wrapping_add(10), 991));
        assert!(!r.free(p as usize + 1));
        assert!(r.free(p as usize));
        assert!(!r.free(p as usize));
        let _leaked_to_drop = r.alloc(16, 0, 1 << 20, AllocKind::Svm).expect("alloc");
    }

    #[test]
    fn flags() {
        assert!(validate_flags(CL_MEM_READ_WRITE));
        assert!(validate_flags(
            CL_MEM_READ_ONLY | CL_MEM_SVM_FINE_GRAIN_BUFFER
        ));
        assert!(validate_flags(
            CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS
        ));
        assert!(!validate_flags(CL_MEM_READ_WRITE | CL_MEM_SVM_ATOMICS));
        assert!(!validate_flags(CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY));
    }
}
