//! Every exported entry point, one module per object type. Each is a [`cl_entry!`]
//! shim over a body returning `CLResult`; modules are glob-exported here so the
//! dispatch slot list can name them.

pub mod context;
pub mod device;
pub mod enqueue;
pub mod event;
pub mod kernel;
pub mod memory;
pub mod pipe;
pub mod platform;
pub mod program;
pub mod queue;
pub mod svm;
pub mod unsupported;
pub mod usm;

pub use context::*;
pub use device::*;
pub use enqueue::*;
pub use event::*;
pub use kernel::*;
pub use memory::*;
pub use pipe::*;
pub use platform::*;
pub use program::*;
pub use queue::*;
pub use svm::*;
pub use unsupported::*;
pub use usm::*;

/// What every api module needs.
pub mod prelude {
    pub use std::ffi::{c_char, c_void};
    pub use std::sync::Arc;

    pub use cranecl_runtime::CLResult;
    pub use libc::{intptr_t, size_t};
    pub use opencl_sys::cl_d3d10::*;
    pub use opencl_sys::cl_d3d11::*;
    pub use opencl_sys::cl_dx9_media_sharing::*;
    pub use opencl_sys::cl_egl::*;
    pub use opencl_sys::*;

    pub use crate::cl_entry;
    pub use crate::handle::{self, get, get_opt, handle_of, new_handle};
    pub use crate::info::InfoOut;
    pub use crate::util::{self, write_out};
}
