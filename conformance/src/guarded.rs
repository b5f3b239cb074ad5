//! Host memory fenced by inaccessible pages, for buffers created with
//! `CL_MEM_USE_HOST_PTR`: a kernel (or the driver) touching one byte before or after
//! the data faults at once instead of silently reading a neighbour. Tests of "inactive
//! work-items never touch memory" and of size checks use it.

use std::ffi::c_void;

/// Where the data sits between the two guard pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fence {
    /// The data starts right after the leading guard page (catches reads before it).
    Start,
    /// The data ends right before the trailing guard page (catches reads after it).
    End,
}

/// `len` bytes of read-write memory with a `PROT_NONE` page on each side.
pub struct GuardedMemory {
    map: *mut c_void,
    map_len: usize,
    data: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by this value; access goes through &self / &mut self.
unsafe impl Send for GuardedMemory {}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).unwrap_or(4096).max(4096)
}

impl GuardedMemory {
    /// Maps `len` zeroed bytes fenced as `fence` says; panics if mmap fails.
    pub fn new(len: usize, fence: Fence) -> GuardedMemory {
        let page = page_size();
        let inner = len.max(1).next_multiple_of(page);
        let map_len = inner + 2 * page;
        // SAFETY: anonymous private mapping, no address hint.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED, "mmap of {map_len} bytes failed");
        // SAFETY: the range [page, page + inner) lies inside the mapping.
        let rc = unsafe {
            libc::mprotect(
                map.cast::<u8>().add(page).cast(),
                inner,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        assert_eq!(rc, 0, "mprotect failed");
        let offset = match fence {
            Fence::Start => page,
            Fence::End => page + inner - len,
        };
        GuardedMemory {
            map,
            map_len,
            // SAFETY: offset + len <= page + inner, inside the mapping.
            data: unsafe { map.cast::<u8>().add(offset) },
            len,
        }
    }

    /// Fenced memory holding a copy of `values`.
    pub fn from_slice<T: crate::Pod>(values: &[T], fence: Fence) -> GuardedMemory {
        let bytes = crate::as_bytes(values);
        let mut m = GuardedMemory::new(bytes.len(), fence);
        m.bytes_mut().copy_from_slice(bytes);
        m
    }

    /// The data's address (for `CL_MEM_USE_HOST_PTR`).
    pub fn as_ptr(&self) -> *mut c_void {
        self.data.cast()
    }

    /// Size of the data in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the data is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The data.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: data..data+len is mapped read-write and owned by self.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    /// The data, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in bytes(), and &mut self is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }

    /// The data as values of `T`.
    pub fn values<T: crate::Pod>(&self) -> Vec<T> {
        crate::from_bytes(self.bytes())
    }
}

impl Drop for GuardedMemory {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in new().
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}
