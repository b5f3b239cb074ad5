//! cranecl's kernel compiler: SPIR-V in, native code for a whole work-group out.
//!
//! Pipeline: [`spirv`] decodes and validates the words into our own typed IR,
//! [`analysis`] computes what lowering needs (CFG, uniformity, barrier regions),
//! [`lower`] translates each kernel to Cranelift IR in the lane model (one call runs a
//! sub-group, one work-item per SIMD lane; a work-group is a loop over sub-groups,
//! split into regions at barriers), [`builtins`] supplies the OpenCL built-ins,
//! [`printf`] parses printf formats into the call sites the runtime formats from.
//! The crate knows nothing of `cl_*` handles; its only contract with the runtime is
//! [`abi`] plus the metadata in [`KernelInfo`] and [`CompiledKernel::printf`].

pub mod abi;
pub mod analysis;
pub mod block2d;
pub mod builtins;
mod codegen;
pub mod device_enqueue;
mod error;
mod kernel;
mod lower;
mod meta;
mod options;
mod perf_map;
pub mod pipe;
mod pipeline;
mod pressure;
pub mod printf;
mod program_data;
pub mod spirv;
mod support;
mod tiers;
mod variants;
mod width;

pub use abi::{DeviceEnqueue, KernelEntryFn, NdRangeInfo, PrintfBuffer, WorkGroupState};
pub use error::{CompileError, CompileErrorKind};
pub use kernel::{
    AddressQualifier, ArgKind, CompiledKernel, CompiledProgram, KernelArg, KernelInfo,
};
pub use options::{
    CompileOptions, DEFAULT_SUB_GROUP_WIDTH, MAX_GLOBAL_VARIABLE_SIZE, SUPPORTED_SUB_GROUP_WIDTHS,
};
pub use pipeline::{compile, link, validate};
pub use spirv::link::LinkOutput;
