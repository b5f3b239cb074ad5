//! The OpenCL object model and execution engine of cranecl.
//!
//! `icd` validates C arguments and calls in here; this crate owns the objects'
//! state and semantics (platform, device, context, queues, events, memory objects,
//! programs, kernels), the build pipeline ([`build`]: clang -> SPIR-V -> jit) and the
//! execution engine ([`exec`]: the worker pool and the ND-range scheduler).
//! It must not know about dispatch tables or C handles.

pub mod build;
pub mod exec;
pub mod features;
