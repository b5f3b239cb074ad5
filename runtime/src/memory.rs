//! Memory objects: buffers, sub-buffers and pipes.
//!
//! A pipe is a `Mem` whose storage is formatted by `cranecl_jit::pipe` (header,
//! sequence words, packet ring); kernels receive its address like a buffer's, and
//! the host may not read, write or map it.
//!
//! A buffer's storage is host memory the kernels address directly: our own 128-byte
//! aligned allocation, or with `CL_MEM_USE_HOST_PTR` the application's pointer itself
//! (zero-copy), or a window into a parent buffer. Mapping returns a pointer into that
//! storage. Data races between commands and the host are the application's concern,
//! as the OpenCL memory model says; this module never copies behind its back.
//!
//! Large own allocations come straight from `mmap`, aligned to 2 MiB and marked for
//! transparent huge pages: kernels stream through them with far fewer TLB misses
//! (the difference is large under virtualisation), and the pages arrive zeroed
//! without a `memset`.

use std::alloc::{self, Layout};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::sync::Mutex;
use opencl_sys::*;

use crate::callback::{run_object_callbacks, Callback, ObjectNotifyFn};
use crate::context::Context;
use crate::object::{ApiHeader, ApiObject, ObjectKind};
use crate::platform::BUFFER_ALIGN;
use crate::CLResult;

/// Own allocations of at least this many bytes are mapped directly (2 MiB aligned,
/// huge pages requested); smaller ones come from the global allocator.
const MAPPED_MIN_BYTES: usize = 1 << 20;

/// Size and alignment of a transparent huge page on x86-64 and aarch64 (4 KiB base
/// pages); only a hint: the mapping works with any page size.
const HUGE_PAGE: usize = 2 << 20;

/// Zeroed bytes owned by a buffer, aligned to at least [`BUFFER_ALIGN`].
pub struct OwnedBytes {
    ptr: NonNull<u8>,
    kind: OwnedKind,
}

enum OwnedKind {
    Heap(Layout),
    /// An `mmap` of `len` bytes starting at `ptr`.
    Mapped {
        len: usize,
    },
}

// SAFETY: the block is exclusively owned; access to the bytes is synchronised by the
// OpenCL commands that use them.
unsafe impl Send for OwnedBytes {}
// SAFETY: as above; the struct itself is immutable.
unsafe impl Sync for OwnedBytes {}

/// Mappings of released buffers kept for the next allocation of the same mapped
/// length, at most this many bytes in all: applications (pyopencl's scan and sort)
/// allocate and drop the same large temporaries on every call, and a fresh mapping
/// costs a page fault and a kernel-side zeroing per huge page at first touch.
const SPARE_MAX_BYTES: usize = 1 << 30;

/// Released mappings `(address, mapped length)`, most recent last.
static SPARE: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Takes the spare-mapping lock for a fork (see `crate::fork`).
pub(crate) fn hold_for_fork(held: &mut Vec<Box<dyn std::any::Any>>) {
    held.push(Box::new(SPARE.lock()));
}

impl OwnedBytes {
    /// `size` zeroed bytes (at least one), or None if memory is exhausted.
    pub fn zeroed(size: usize) -> Option<OwnedBytes> {
        Self::allocate(size, true)
    }

    /// `size` bytes whose contents are unspecified (a buffer without
    /// `CL_MEM_COPY_HOST_PTR`: OpenCL leaves it undefined), or None if memory is
    /// exhausted. A large one may reuse a mapping another buffer released, which
    /// saves the page faults and the zeroing of a fresh one.
    pub fn uninit(size: usize) -> Option<OwnedBytes> {
        Self::allocate(size, false)
    }

    fn allocate(size: usize, zero: bool) -> Option<OwnedBytes> {
        if size >= MAPPED_MIN_BYTES {
            if let Some(reused) = Self::spare(size) {
                if zero {
                    // SAFETY: the whole reused mapping is ours and writable.
                    unsafe { std::ptr::write_bytes(reused.as_ptr(), 0, size) };
                }
                return Some(reused);
            }
            if let Some(mapped) = Self::mapped(size) {
                return Some(mapped);
            }
        }
        let layout = Layout::from_size_align(size.max(1), BUFFER_ALIGN).ok()?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc::alloc_zeroed(layout) })?;
        Some(OwnedBytes {
            ptr,
            kind: OwnedKind::Heap(layout),
        })
    }

    /// A released mapping of the length a mapping of `size` bytes would have.
    fn spare(size: usize) -> Option<OwnedBytes> {
        let len = size.checked_next_multiple_of(HUGE_PAGE)?;
        let mut spare = SPARE.lock();
        let i = spare.iter().rposition(|&(_, l)| l == len)?;
        let (addr, len) = spare.remove(i);
        Some(OwnedBytes {
            ptr: NonNull::new(addr as *mut u8)?,
            kind: OwnedKind::Mapped { len },
        })
    }

    /// An anonymous mapping of `size` bytes rounded up to [`HUGE_PAGE`], starting on a
    /// [`HUGE_PAGE`] boundary, with huge pages requested.
    fn mapped(size: usize) -> Option<OwnedBytes> {
        let len = size.checked_next_multiple_of(HUGE_PAGE)?;
        let padded = len.checked_add(HUGE_PAGE)?;
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                padded,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let start = raw as usize;
        let aligned = start.next_multiple_of(HUGE_PAGE);
        let head = aligned - start;
        let tail = padded - head - len;
        // SAFETY: both trimmed ranges lie inside the mapping made above and are not
        // used; failing to trim only wastes address space.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((aligned + len) as *mut libc::c_void, tail);
            }
            // A hint: without transparent huge pages the mapping still works.
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
        Some(OwnedBytes {
            ptr: NonNull::new(aligned as *mut u8)?,
            kind: OwnedKind::Mapped { len },
        })
    }

    /// The first byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for OwnedBytes {
    fn drop(&mut self) {
        match self.kind {
            // SAFETY: allocated in `zeroed` with exactly this layout.
            OwnedKind::Heap(layout) => unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) },
            OwnedKind::Mapped { len } => {
                let addr = self.ptr.as_ptr() as usize;
                let mut spare = SPARE.lock();
                let mut kept: usize = spare.iter().map(|&(_, l)| l).sum();
                // Oldest first out until this one fits.
                while !spare.is_empty() && kept + len > SPARE_MAX_BYTES {
                    let (a, l) = spare.remove(0);
                    kept -= l;
                    // SAFETY: a mapping made in `mapped` and owned by nobody else.
                    unsafe { libc::munmap(a as *mut libc::c_void, l) };
                }
                if kept + len <= SPARE_MAX_BYTES {
                    spare.push((addr, len));
                } else {
                    // SAFETY: the mapping made in `mapped`, after trimming.
                    unsafe { libc::munmap(self.ptr.as_ptr().cast(), len) };
                }
            }
        }
    }
}

/// Where a buffer's bytes live.
enum Storage {
    /// Our allocation (kept only to be freed on drop).
    Owned { _bytes: OwnedBytes },
    /// The application's memory (`CL_MEM_USE_HOST_PTR`, at `Mem::host_ptr`).
    Host,
    /// A range of a parent buffer.
    Sub { parent: Arc<Mem>, offset: usize },
}

/// A buffer or sub-buffer.
#[repr(C)]
pub struct Mem {
    header: ApiHeader,
    /// The context the buffer was created in (an implicit reference).
    pub context: Arc<Context>,
    /// `CL_MEM_FLAGS`: as given for buffers; sub-buffers add what they inherit.
    pub flags: cl_mem_flags,
    /// Size in bytes.
    pub size: usize,
    /// `CL_MEM_HOST_PTR`: the application's pointer for `USE_HOST_PTR` buffers.
    pub host_ptr: *mut c_void,
    /// `CL_MEM_PROPERTIES` as given.
    pub properties: Vec<cl_mem_properties>,
    storage: Storage,
    base: *mut u8,
    map_count: AtomicU32,
    destructors: Mutex<Vec<Callback<ObjectNotifyFn>>>,
    /// `Some` for a pipe object.
    pub pipe: Option<PipeDesc>,
}

/// `CL_DEVICE_PIPE_MAX_PACKET_SIZE` (Intel's CPU runtime's value).
pub const PIPE_MAX_PACKET_SIZE: u32 = 1024;
/// `CL_DEVICE_MAX_PIPE_ARGS` (the minimum the spec asks, as Intel's).
pub const MAX_PIPE_ARGS: u32 = 16;
/// `CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS` per work-item: reservations have no
/// table (the id packs its range), so this is only a figure to report (Intel's).
pub const PIPE_MAX_ACTIVE_RESERVATIONS: u32 = 131_071;

/// What `clCreatePipe` was given (`clGetPipeInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipeDesc {
    pub packet_size: u32,
    pub max_packets: u32,
    /// `CL_PIPE_PROPERTIES` as given (empty when NULL was passed).
    pub properties: Vec<cl_pipe_properties>,
}

// SAFETY: the raw pointers address buffer storage owned by (or lent to) this object for
// its whole life; concurrent access to the bytes is governed by the OpenCL memory
// model, and every field that changes is atomic or locked.
unsafe impl Send for Mem {}
// SAFETY: as above.
unsafe impl Sync for Mem {}

impl ApiObject for Mem {
    const KIND: ObjectKind = ObjectKind::Mem;
    fn header(&self) -> &ApiHeader {
        &self.header
    }
}

const ACCESS_FLAGS: cl_mem_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
const HOST_ACCESS_FLAGS: cl_mem_flags =
    CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
const HOST_PTR_FLAGS: cl_mem_flags =
    CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;

/// Checks the combination rules of `cl_mem_flags` for a buffer (`CL_INVALID_VALUE`).
pub fn validate_flags(flags: cl_mem_flags) -> CLResult<()> {
    let known = ACCESS_FLAGS | HOST_ACCESS_FLAGS | HOST_PTR_FLAGS | CL_MEM_KERNEL_READ_AND_WRITE;
    if flags & !known != 0 {
        return Err(CL_INVALID_VALUE);
    }
    if (flags & ACCESS_FLAGS).count_ones() > 1 || (flags & HOST_ACCESS_FLAGS).count_ones() > 1 {
        return Err(CL_INVALID_VALUE);
    }
    if flags & CL_MEM_USE_HOST_PTR != 0
        && flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0
    {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

impl Mem {
    /// `clCreateBuffer`: `size` and `flags` must have been validated against the device
    /// (`CL_INVALID_BUFFER_SIZE`, `validate_flags`); `host_ptr` is checked here.
    ///
    /// # Safety
    /// With `USE_HOST_PTR` or `COPY_HOST_PTR`, `host_ptr` must be valid for `size` bytes
    /// (and, for `USE_HOST_PTR`, stay valid for the buffer's life).
    pub unsafe fn new_buffer(
        context: Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: *mut c_void,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
        if wants_ptr == host_ptr.is_null() {
            return Err(CL_INVALID_HOST_PTR);
        }
        // A buffer over an SVM allocation may not run past it (clCreateBuffer:
        // CL_INVALID_BUFFER_SIZE when size exceeds what clSVMAlloc was given).
        if flags & CL_MEM_USE_HOST_PTR != 0 {
            let p = host_ptr.cast::<u8>();
            if context.svm.find(p).is_some() && !context.svm.contains(p, size) {
                return Err(CL_INVALID_BUFFER_SIZE);
            }
        }
        let (storage, base) = if flags & CL_MEM_USE_HOST_PTR != 0 {
            (Storage::Host, host_ptr.cast::<u8>())
        } else {
            let bytes = OwnedBytes::uninit(size).ok_or(CL_MEM_OBJECT_ALLOCATION_FAILURE)?;
            let ptr = bytes.as_ptr();
            if flags & CL_MEM_COPY_HOST_PTR != 0 {
                // SAFETY: the caller guarantees `host_ptr` is readable for `size` bytes; the
                // new allocation is `size` bytes and cannot overlap it.
                unsafe { std::ptr::copy_nonoverlapping(host_ptr.cast::<u8>(), ptr, size) };
            }
            (Storage::Owned { _bytes: bytes }, ptr)
        };
        let host_ptr = if flags & CL_MEM_USE_HOST_PTR != 0 {
            host_ptr
        } else {
            std::ptr::null_mut()
        };
        Ok(Arc::new(Mem {
            header: ApiHeader::new(ObjectKind::Mem),
            context,
            flags,
            size,
            host_ptr,
            properties,
            storage,
            base,
            map_count: AtomicU32::new(0),
            destructors: Mutex::new(Vec::new()),
            pipe: None,
        }))
    }

    /// `clCreateSubBuffer` with `CL_BUFFER_CREATE_TYPE_REGION`.
    pub fn new_sub_buffer(
        parent: &Arc<Mem>,
        flags: cl_mem_flags,
        origin: usize,
        size: usize,
    ) -> CLResult<Arc<Mem>> {
        if parent.parent().is_some() {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        validate_flags(flags)?;
        if flags & HOST_PTR_FLAGS != 0 {
            return Err(CL_INVALID_VALUE);
        }
        let pf = parent.flags;
        // Access flags must not widen the parent's.
        let access = flags & ACCESS_FLAGS;
        if (pf & CL_MEM_WRITE_ONLY != 0 && access & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY) != 0)
            || (pf & CL_MEM_READ_ONLY != 0 && access & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY) != 0)
        {
            return Err(CL_INVALID_VALUE);
        }
        let host = flags & HOST_ACCESS_FLAGS;
        if (pf & CL_MEM_HOST_WRITE_ONLY != 0 && host & CL_MEM_HOST_READ_ONLY != 0)
            || (pf & CL_MEM_HOST_READ_ONLY != 0 && host & CL_MEM_HOST_WRITE_ONLY != 0)
            || (pf & CL_MEM_HOST_NO_ACCESS != 0
                && host & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY) != 0)
        {
            return Err(CL_INVALID_VALUE);
        }
        if size == 0 {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
        if origin.checked_add(size).is_none_or(|end| end > parent.size) {
            return Err(CL_INVALID_VALUE);
        }
        if !origin.is_multiple_of(BUFFER_ALIGN) {
            return Err(CL_MISALIGNED_SUB_BUFFER_OFFSET);
        }
        let mut new_flags = flags;
        if access == 0 {
            new_flags |= pf & ACCESS_FLAGS;
        }
        if host == 0 {
            new_flags |= pf & HOST_ACCESS_FLAGS;
        }
        new_flags |= pf & HOST_PTR_FLAGS;
        let host_ptr = if parent.host_ptr.is_null() {
            std::ptr::null_mut()
        } else {
            parent.host_ptr.cast::<u8>().wrapping_add(origin).cast()
        };
        Ok(Arc::new(Mem {
            header: ApiHeader::new(ObjectKind::Mem),
            context: parent.context.clone(),
            flags: new_flags,
            size,
            host_ptr,
            properties: Vec::new(),
            base: parent.base.wrapping_add(origin),
            storage: Storage::Sub {
                parent: parent.clone(),
                offset: origin,
            },
            map_count: AtomicU32::new(0),
            destructors: Mutex::new(Vec::new()),
            pipe: None,
        }))
    }

    /// `clCreatePipe`: `flags` (`CL_MEM_FLAGS` as given: the caller turned 0 into the
    /// default), sizes and properties validated by the caller.
    pub fn new_pipe(
        context: Arc<Context>,
        flags: cl_mem_flags,
        desc: PipeDesc,
    ) -> CLResult<Arc<Mem>> {
        let size = cranecl_jit::pipe::storage_bytes(desc.packet_size, desc.max_packets)
            .ok_or(CL_INVALID_PIPE_SIZE)?;
        let bytes = OwnedBytes::zeroed(size).ok_or(CL_MEM_OBJECT_ALLOCATION_FAILURE)?;
        let base = bytes.as_ptr();
        // SAFETY: a fresh zeroed block of `size` bytes, BUFFER_ALIGN (>= 128) aligned,
        // not shared yet.
        unsafe { cranecl_jit::pipe::init(base, desc.packet_size, desc.max_packets) };
        Ok(Arc::new(Mem {
            header: ApiHeader::new(ObjectKind::Mem),
            context,
            flags,
            // CL_MEM_SIZE of a pipe: what its packets take (as Intel's runtime says).
            size: desc.packet_size as usize * desc.max_packets as usize,
            host_ptr: std::ptr::null_mut(),
            properties: Vec::new(),
            storage: Storage::Owned { _bytes: bytes },
            base,
            map_count: AtomicU32::new(0),
            destructors: Mutex::new(Vec::new()),
            pipe: Some(desc),
        }))
    }

    /// Whether this is a pipe (not usable as a buffer).
    pub fn is_pipe(&self) -> bool {
        self.pipe.is_some()
    }

    /// The device address of the first byte (what kernels receive).
    pub fn ptr(&self) -> *mut u8 {
        self.base
    }

    /// The parent buffer and offset of a sub-buffer.
    pub fn parent(&self) -> Option<(&Arc<Mem>, usize)> {
        match &self.storage {
            Storage::Sub { parent, offset } => Some((parent, *offset)),
            _ => None,
        }
    }

    /// Whether `[offset, offset + len)` lies inside the buffer.
    pub fn range_ok(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.size)
    }

    /// `CL_MEM_MAP_COUNT`.
    pub fn map_count(&self) -> u32 {
        self.map_count.load(Ordering::Acquire)
    }

    /// Records a map (the pointer returned is `ptr() + offset`).
    pub fn note_mapped(&self) {
        self.map_count.fetch_add(1, Ordering::AcqRel);
    }

    /// Records an unmap; `false` if nothing was mapped.
    pub fn note_unmapped(&self) -> bool {
        self.map_count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1))
            .is_ok()
    }

    /// `clSetMemObjectDestructorCallback`.
    pub fn add_destructor(&self, cb: Callback<ObjectNotifyFn>) {
        self.destructors.lock().push(cb);
    }

    /// Whether two buffers' storage overlaps (`CL_MEM_COPY_OVERLAP` checks).
    pub fn overlaps(&self, a_off: usize, other: &Mem, b_off: usize, len: usize) -> bool {
        let a = self.base as usize + a_off;
        let b = other.base as usize + b_off;
        a < b + len && b < a + len
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        let callbacks = std::mem::take(self.destructors.get_mut());
        run_object_callbacks(callbacks, (self as *mut Mem).cast::<c_void>());
        // The storage (if owned) is freed when `self.storage` drops, after the callbacks.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_bytes_are_zeroed_aligned_and_writable() {
        for size in [1usize, 100, MAPPED_MIN_BYTES - 1, MAPPED_MIN_BYTES, 5 << 20] {
            let bytes = OwnedBytes::zeroed(size).expect("allocation");
            let p = bytes.as_ptr();
            assert_eq!(p as usize % BUFFER_ALIGN, 0, "size {size}");
            if size >= MAPPED_MIN_BYTES {
                assert!(
                    matches!(bytes.kind, OwnedKind::Mapped { .. }),
                    "size {size}"
                );
                assert_eq!(p as usize % HUGE_PAGE, 0, "size {size}");
            }
            // SAFETY: the block holds `size` bytes.
            let all = unsafe { std::slice::from_raw_parts_mut(p, size) };
            assert!(all.iter().all(|&b| b == 0), "size {size}");
            all.fill(0x5a);
            assert_eq!(all[size - 1], 0x5a);
        }
    }

    #[test]
    fn flag_rules() {
        assert_eq!(validate_flags(CL_MEM_READ_WRITE), Ok(()));
        assert_eq!(
            validate_flags(CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY),
            Err(CL_INVALID_VALUE)
        );
        assert_eq!(
            validate_flags(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR),
            Err(CL_INVALID_VALUE)
        );
        assert_eq!(
            validate_flags(CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR),
            Ok(())
        );
        assert_eq!(validate_flags(1 << 40), Err(CL_INVALID_VALUE));
    }
}
