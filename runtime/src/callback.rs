//! Application callbacks (C function pointer + user data) stored by objects and
//! invoked later, always outside the object's locks.

use std::ffi::c_void;

/// A C callback with its `user_data`; the pointer is only passed back to the
/// application, never dereferenced here.
#[derive(Clone, Copy)]
pub struct Callback<F: Copy> {
    pub func: F,
    pub user_data: *mut c_void,
}

// SAFETY: the application promises callbacks may be invoked from any thread (OpenCL
// calls them from driver threads); we never dereference `user_data`.
unsafe impl<F: Copy> Send for Callback<F> {}
// SAFETY: as above; the value is immutable.
unsafe impl<F: Copy> Sync for Callback<F> {}

/// `void (CL_CALLBACK *)(cl_xxx obj, void *user_data)`: destructor callbacks of memory
/// objects, contexts and programs.
pub type ObjectNotifyFn = unsafe extern "C" fn(obj: *mut c_void, user_data: *mut c_void);

/// `void (CL_CALLBACK *)(cl_event, cl_int status, void *user_data)`.
pub type EventNotifyFn =
    unsafe extern "C" fn(event: *mut c_void, status: i32, user_data: *mut c_void);

/// `void (CL_CALLBACK *)(const char *errinfo, const void *private_info, size_t cb, void *user_data)`.
pub type ContextNotifyFn = unsafe extern "C" fn(
    errinfo: *const std::ffi::c_char,
    private_info: *const c_void,
    cb: usize,
    user_data: *mut c_void,
);

/// Calls destructor-style callbacks in reverse registration order (as the spec asks).
pub(crate) fn run_object_callbacks(callbacks: Vec<Callback<ObjectNotifyFn>>, obj: *mut c_void) {
    for cb in callbacks.into_iter().rev() {
        // SAFETY: the application registered `func` for exactly this call shape.
        unsafe { (cb.func)(obj, cb.user_data) };
    }
}
