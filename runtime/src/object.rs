//! The header every API-visible object starts with, and API reference counting.
//!
//! The C layer (`icd`) turns handles into objects by reading this header: it owns the
//! meaning of `dispatch`/`dispatch_data` (the ICD loader's dispatch table and
//! cl_khr_icd 2.0 dispatch data) and registers them here once; the runtime only
//! reserves the space, stamps a per-type [`ObjectKind`] and keeps the API-visible
//! reference count. Objects themselves live in `Arc`s: an API reference is one strong
//! count, implicit references (a kernel keeps its program, ...) are further `Arc`s.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Arc;

/// Which OpenCL type an object is; stored in the header so a handle of the wrong type
/// is rejected with the expected type's `CL_INVALID_*` code.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    Platform = 0x636c_0001,
    Device = 0x636c_0002,
    Context = 0x636c_0003,
    Queue = 0x636c_0004,
    Mem = 0x636c_0005,
    Program = 0x636c_0006,
    Kernel = 0x636c_0007,
    Event = 0x636c_0008,
    Sampler = 0x636c_0009,
}

static DISPATCH: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());
static DISPATCH_DATA: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());

/// Registers the dispatch table pointer written into every new object's header
/// (called once by the C layer before any object is created).
pub fn register_dispatch(table: *const c_void) {
    DISPATCH.store(table.cast_mut(), Ordering::Release);
}

/// The registered dispatch table pointer (null before registration).
pub fn dispatch() -> *const c_void {
    DISPATCH.load(Ordering::Acquire)
}

/// Sets the cl_khr_icd 2.0 dispatch data copied into objects created from now on.
pub fn set_dispatch_data(data: *mut c_void) {
    DISPATCH_DATA.store(data, Ordering::Release);
}

/// `#[repr(C)]` prefix of every API object; the handle points at it.
#[repr(C)]
#[derive(Debug)]
pub struct ApiHeader {
    dispatch: AtomicPtr<c_void>,
    dispatch_data: AtomicPtr<c_void>,
    kind: ObjectKind,
    api_refs: AtomicU32,
}

impl ApiHeader {
    /// A header for a new object with one API reference.
    pub fn new(kind: ObjectKind) -> ApiHeader {
        ApiHeader {
            dispatch: AtomicPtr::new(DISPATCH.load(Ordering::Acquire)),
            dispatch_data: AtomicPtr::new(DISPATCH_DATA.load(Ordering::Acquire)),
            kind,
            api_refs: AtomicU32::new(1),
        }
    }

    /// The dispatch pointer stored in this object.
    pub fn dispatch(&self) -> *const c_void {
        self.dispatch.load(Ordering::Relaxed)
    }

    /// Re-stamps dispatch table and data (static objects created before registration,
    /// and clIcdSetPlatformDispatchDataKHR).
    pub fn refresh_dispatch(&self) {
        self.dispatch
            .store(DISPATCH.load(Ordering::Acquire), Ordering::Release);
        self.dispatch_data
            .store(DISPATCH_DATA.load(Ordering::Acquire), Ordering::Release);
    }

    /// The type stamp.
    pub fn kind(&self) -> ObjectKind {
        self.kind
    }

    /// The API-visible reference count (`CL_*_REFERENCE_COUNT`).
    pub fn api_refs(&self) -> u32 {
        self.api_refs.load(Ordering::Acquire)
    }

    /// Whether the application still holds a reference (a handle released to zero is
    /// invalid even if implicit references keep the object alive).
    pub fn is_live(&self) -> bool {
        self.api_refs() > 0
    }
}

/// An object that can be handed to the application.
pub trait ApiObject: Send + Sync + Sized + 'static {
    /// The type stamp in the header.
    const KIND: ObjectKind;

    /// The object's header (its first field).
    fn header(&self) -> &ApiHeader;

    /// Hands one API reference to the application: the returned pointer is the handle.
    fn into_handle(this: Arc<Self>) -> *mut c_void {
        Arc::into_raw(this).cast_mut().cast()
    }

    /// The handle of an object without transferring a reference (info queries that
    /// return another object's handle).
    fn handle_of(this: &Arc<Self>) -> *mut c_void {
        Arc::as_ptr(this).cast_mut().cast()
    }

    /// `clRetain*`: one more API reference.
    ///
    /// # Safety
    /// `this` must come from [`ApiObject::into_handle`] (checked by the caller to be a live
    /// object of this type).
    unsafe fn retain_handle(this: *const Self) {
        // SAFETY: `this` is a live Arc allocation per the contract.
        let header = unsafe { (*this).header() };
        header.api_refs.fetch_add(1, Ordering::AcqRel);
        // SAFETY: as above; the strong count matches the API reference just added.
        unsafe { Arc::increment_strong_count(this) };
    }

    /// `clRelease*`: drops one API reference; `false` if the application held none.
    ///
    /// # Safety
    /// As for [`ApiObject::retain_handle`].
    unsafe fn release_handle(this: *const Self) -> bool {
        // SAFETY: `this` is a live Arc allocation per the contract.
        let header = unsafe { (*this).header() };
        let mut refs = header.api_refs.load(Ordering::Acquire);
        loop {
            if refs == 0 {
                return false;
            }
            match header.api_refs.compare_exchange(
                refs,
                refs - 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => refs = now,
            }
        }
        // SAFETY: the API reference removed above owned one strong count.
        unsafe { Arc::decrement_strong_count(this) };
        true
    }
}
