//! The OpenCL object model and execution engine of cranecl.
//!
//! `icd` validates C arguments and calls in here; this crate owns the objects'
//! state and semantics (platform, device, context, queues, events, memory objects,
//! programs, kernels), the build pipeline ([`build`]: clang -> SPIR-V -> jit) and the
//! execution engine ([`exec`]: the worker pool and the ND-range scheduler).
//! It knows nothing of dispatch tables: it only reserves the header the C layer
//! reads ([`object::ApiHeader`]) at the start of every object.

pub mod build;
pub mod callback;
pub mod context;
pub mod device_enqueue;
pub mod event;
pub mod exec;
pub mod features;
pub mod fork;
pub mod kernel;
pub mod memory;
pub mod object;
pub mod partition;
pub mod platform;
pub mod printf;
pub mod program;
pub mod queue;
pub mod svm;
pub mod sync;
pub mod topology;

/// Result of an OpenCL operation: the error is the `CL_*` code the API returns.
pub type CLResult<T> = Result<T, opencl_sys::cl_int>;
