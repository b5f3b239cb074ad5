//! Handle <-> object conversion.
//!
//! A handle is the address of a runtime object, whose first field is the
//! [`ApiHeader`](cranecl_runtime::object::ApiHeader). A handle is accepted when it is
//! non-null, carries our dispatch table and the expected type stamp, and the
//! application still holds a reference; otherwise the type's `CL_INVALID_*` code is
//! returned. This is the C boundary: pointers come from the application, and
//! reading a non-null handle's header is what the OpenCL contract allows.

use std::ffi::c_void;
use std::sync::Arc;

use cranecl_runtime::context::Context;
use cranecl_runtime::event::Event;
use cranecl_runtime::kernel::Kernel;
use cranecl_runtime::memory::Mem;
use cranecl_runtime::object::{self, ApiHeader, ApiObject};
use cranecl_runtime::platform::{Device, Platform};
use cranecl_runtime::program::Program;
use cranecl_runtime::queue::Queue;
use cranecl_runtime::CLResult;
use opencl_sys::*;

/// An API object type and the error for an invalid handle of it. (opencl-sys makes
/// every handle type `*mut c_void`, so the object type picks the check.)
pub trait ClObject: ApiObject {
    /// The error for an invalid handle of this type.
    const INVALID: cl_int;
}

impl ClObject for Platform {
    const INVALID: cl_int = CL_INVALID_PLATFORM;
}
impl ClObject for Device {
    const INVALID: cl_int = CL_INVALID_DEVICE;
}
impl ClObject for Context {
    const INVALID: cl_int = CL_INVALID_CONTEXT;
}
impl ClObject for Queue {
    const INVALID: cl_int = CL_INVALID_COMMAND_QUEUE;
}
impl ClObject for Mem {
    const INVALID: cl_int = CL_INVALID_MEM_OBJECT;
}
impl ClObject for Program {
    const INVALID: cl_int = CL_INVALID_PROGRAM;
}
impl ClObject for Kernel {
    const INVALID: cl_int = CL_INVALID_KERNEL;
}
impl ClObject for Event {
    const INVALID: cl_int = CL_INVALID_EVENT;
}

/// The object pointer of a handle if it is a live object of type `T`.
fn checked<T: ClObject>(h: *mut c_void) -> CLResult<*const T> {
    if h.is_null() {
        return Err(T::INVALID);
    }
    // SAFETY: a non-null handle from the application points at one of our objects (or
    // the application broke the API contract); every object starts with ApiHeader.
    let header = unsafe { &*h.cast::<ApiHeader>() };
    if header.dispatch() != object::dispatch() || header.kind() != T::KIND || !header.is_live() {
        return Err(T::INVALID);
    }
    Ok(h.cast::<T>().cast_const())
}

/// The object behind a handle, as a new `Arc` (the handle keeps its own reference).
pub fn get<T: ClObject>(h: *mut c_void) -> CLResult<Arc<T>> {
    let p = checked::<T>(h)?;
    // SAFETY: `checked` verified a live object created by `Arc::into_raw`/`Arc::new`;
    // we add the strong count the new Arc owns.
    unsafe {
        Arc::increment_strong_count(p);
        Ok(Arc::from_raw(p))
    }
}

/// Like [`get`] but NULL is `None` (optional handles).
pub fn get_opt<T: ClObject>(h: *mut c_void) -> CLResult<Option<Arc<T>>> {
    if h.is_null() {
        Ok(None)
    } else {
        get(h).map(Some)
    }
}

/// `clRetain*`.
pub fn retain<T: ClObject>(h: *mut c_void) -> CLResult<()> {
    let p = checked::<T>(h)?;
    // SAFETY: `checked` verified a live object of this type.
    unsafe { T::retain_handle(p) };
    Ok(())
}

/// `clRelease*`.
pub fn release<T: ClObject>(h: *mut c_void) -> CLResult<()> {
    let p = checked::<T>(h)?;
    // SAFETY: `checked` verified a live object of this type.
    if unsafe { T::release_handle(p) } {
        Ok(())
    } else {
        Err(T::INVALID)
    }
}

/// Hands a new object to the application (transfers one reference).
pub fn new_handle<T: ClObject>(obj: Arc<T>) -> *mut c_void {
    T::into_handle(obj)
}

/// The handle of an object the application may already hold (no reference moves).
pub fn handle_of<T: ClObject>(obj: &Arc<T>) -> *mut c_void {
    T::handle_of(obj)
}

/// A list of handles (`ptr`, `n`): `err` if the list is malformed, the type's error
/// for a bad element.
pub fn list<T: ClObject>(
    ptr: *const *mut c_void,
    n: cl_uint,
    err: cl_int,
) -> CLResult<Vec<Arc<T>>> {
    let items = crate::util::slice(ptr, n as usize).map_err(|_| err)?;
    items.iter().map(|h| get(*h)).collect()
}

/// An event wait list: `CL_INVALID_EVENT_WAIT_LIST` for a malformed list or bad event,
/// `CL_INVALID_CONTEXT` for an event of another context.
pub fn wait_list(
    ptr: *const cl_event,
    n: cl_uint,
    context: &Arc<Context>,
) -> CLResult<Vec<Arc<Event>>> {
    if (n == 0) != ptr.is_null() {
        return Err(CL_INVALID_EVENT_WAIT_LIST);
    }
    let events = list::<Event>(ptr, n, CL_INVALID_EVENT_WAIT_LIST)
        .map_err(|_| CL_INVALID_EVENT_WAIT_LIST)?;
    if events.iter().any(|e| !Arc::ptr_eq(&e.context, context)) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(events)
}

/// Writes a command's event to the application's `event` out-parameter (or drops it).
pub fn return_event(event: Arc<Event>, out: *mut cl_event) {
    if !out.is_null() {
        // SAFETY: a non-null `event` out-parameter points at a cl_event slot.
        unsafe { out.write(new_handle(event)) };
    }
}
