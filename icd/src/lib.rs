//! libcranecl.so: the OpenCL C ABI of cranecl.
//!
//! Exported `cl*` entry points ([`api`]), the ICD loader contract
//! (`clIcdGetPlatformIDsKHR`, cl_khr_icd 2.0 dispatch data, [`dispatch`]), handle <->
//! object conversion ([`handle`]), argument validation and error codes. OpenCL
//! semantics live in `cranecl-runtime`; this crate only checks and translates. Entry
//! points never call each other's exported symbols (they may be interposed by the
//! loader's): they share Rust functions instead.

// This crate is the C boundary: its public functions take the application's raw
// pointers by design (the OpenCL contract makes them valid or NULL) and check what
// can be checked (NULL, alignment, sizes, handle identity) before reading them.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

#[macro_use]
pub mod entry;
pub mod api;
pub mod dispatch;
pub mod handle;
pub mod info;
pub mod util;

#[cfg(test)]
mod tests;

use std::sync::Once;

use cranecl_runtime::object;
use cranecl_runtime::platform::Platform;

/// Registers our dispatch table with the runtime's object headers (once, before any
/// object is handed out).
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // Before any driver thread exists: children of a forking application
        // find every process-wide lock free (`cranecl_runtime::fork`).
        cranecl_runtime::fork::install();
        object::register_dispatch(dispatch::table());
        Platform::get().refresh_dispatch();
    });
}
