//! Memory objects: buffers and sub-buffers.
//!
//! A buffer's storage is host memory the kernels address directly: our own 128-byte
//! aligned allocation, or with `CL_MEM_USE_HOST_PTR` the application's pointer itself
//! (zero-copy), or a window into a parent buffer. Mapping returns a pointer into that
//! storage. Data races between commands and the host are the application's concern,
//! as the OpenCL memory model says; this module never copies behind its back.

use std::alloc::{self, Layout};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use opencl_sys::*;
use parking_lot::Mutex;

use crate::callback::{run_object_callbacks, Callback, ObjectNotifyFn};
use crate::context::Context;
use crate::object::{ApiHeader, ApiObject, ObjectKind};
use crate::platform::BUFFER_ALIGN;
use crate::CLResult;

/// Where a buffer's bytes live.
enum Storage {
    /// Our allocation (freed on drop).
    Owned { ptr: NonNull<u8>, layout: Layout },
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
        let (storage, base) = if flags & CL_MEM_USE_HOST_PTR != 0 {
            (Storage::Host, host_ptr.cast::<u8>())
        } else {
            let layout = Layout::from_size_align(size.max(1), BUFFER_ALIGN)
                .map_err(|_| CL_INVALID_BUFFER_SIZE)?;
            // SAFETY: `layout` has a non-zero size.
            let raw = unsafe { alloc::alloc_zeroed(layout) };
            let ptr = NonNull::new(raw).ok_or(CL_MEM_OBJECT_ALLOCATION_FAILURE)?;
            if flags & CL_MEM_COPY_HOST_PTR != 0 {
                // SAFETY: the caller guarantees `host_ptr` is readable for `size` bytes; the
                // new allocation is `size` bytes and cannot overlap it.
                unsafe { std::ptr::copy_nonoverlapping(host_ptr.cast::<u8>(), ptr.as_ptr(), size) };
            }
            (Storage::Owned { ptr, layout }, ptr.as_ptr())
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
        }))
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
        match &self.storage {
            Storage::Owned { ptr, layout } => {
                // SAFETY: allocated in `new_buffer` with exactly this layout.
                unsafe { alloc::dealloc(ptr.as_ptr(), *layout) };
            }
            Storage::Host | Storage::Sub { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
