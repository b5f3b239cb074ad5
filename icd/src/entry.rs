//! The shim rules shared by every exported entry point: catch unwinding, turn a
//! `CLResult` into the C return value or `*errcode_ret`.
//!
//! [`cl_entry!`] generates each `extern "C"` shim; the body is ordinary Rust returning
//! `CLResult<T>`. No panic crosses the C ABI: a panic becomes `CL_OUT_OF_HOST_MEMORY`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use cranecl_runtime::CLResult;
use opencl_sys::*;

/// Error code reported when an entry point panics (a bug of ours).
pub const PANIC_CODE: cl_int = CL_OUT_OF_HOST_MEMORY;

/// Runs a status-returning body.
pub fn status_call(name: &str, body: impl FnOnce() -> CLResult<()>) -> cl_int {
    crate::init();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => CL_SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => {
            report_panic(name);
            PANIC_CODE
        }
    }
}

/// A value an object-returning entry point returns on error.
pub trait ErrorValue {
    fn error_value() -> Self;
}

impl<T> ErrorValue for *mut T {
    fn error_value() -> Self {
        std::ptr::null_mut()
    }
}

/// Runs a body that returns an object and reports its status through `errcode_ret`.
pub fn object_call<T: ErrorValue>(
    name: &str,
    errcode_ret: *mut cl_int,
    body: impl FnOnce() -> CLResult<T>,
) -> T {
    crate::init();
    let (value, code) = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => (v, CL_SUCCESS),
        Ok(Err(code)) => (T::error_value(), code),
        Err(_) => {
            report_panic(name);
            (T::error_value(), PANIC_CODE)
        }
    };
    if !errcode_ret.is_null() {
        // SAFETY: a non-null `errcode_ret` points at a cl_int the application provided.
        unsafe { errcode_ret.write(code) };
    }
    value
}

/// Runs a body with no error channel (void / pointer results).
pub fn plain_call<T>(name: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    crate::init();
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        report_panic(name);
        fallback
    })
}

fn report_panic(name: &str) {
    if std::env::var_os("CRANECL_QUIET").is_none() {
        eprintln!("cranecl: internal error in {name}; reporting it as an OpenCL error");
    }
}

/// Defines one exported entry point.
///
/// - `fn name(args) -> cl_int { body: CLResult<()> }`
/// - `fn name(args; errcode_ret) -> T { body: CLResult<T> }` (the last C parameter is
///   `errcode_ret: *mut cl_int`)
/// - `fn name(args) -> T { body: T }` (no error channel: a panic returns null)
/// - `fn name(args) { body }` (void)
#[macro_export]
macro_rules! cl_entry {
    (fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> cl_int $body:block) => {
        #[no_mangle]
        #[allow(non_snake_case, unused_variables)]
        pub extern "C" fn $name($($arg: $ty),*) -> cl_int {
            $crate::entry::status_call(stringify!($name), move || -> cranecl_runtime::CLResult<()> { $body })
        }
    };
    (fn $name:ident($($arg:ident: $ty:ty),* ; $err:ident) -> $ret:ty $body:block) => {
        #[no_mangle]
        #[allow(non_snake_case, unused_variables)]
        pub extern "C" fn $name($($arg: $ty,)* $err: *mut cl_int) -> $ret {
            $crate::entry::object_call(stringify!($name), $err, move || -> cranecl_runtime::CLResult<$ret> { $body })
        }
    };
    (fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        #[no_mangle]
        #[allow(non_snake_case, unused_variables)]
        pub extern "C" fn $name($($arg: $ty),*) -> $ret {
            $crate::entry::plain_call(stringify!($name), std::ptr::null_mut(), move || -> $ret { $body })
        }
    };
    (fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        #[no_mangle]
        #[allow(non_snake_case, unused_variables)]
        pub extern "C" fn $name($($arg: $ty),*) {
            $crate::entry::plain_call(stringify!($name), (), move || $body)
        }
    };
}
