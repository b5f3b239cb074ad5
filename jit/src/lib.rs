//! cranecl's kernel compiler: SPIR-V in, native code for a whole work-group out.
//!
//! Pipeline: [`spirv`] decodes and validates the words into our own typed IR,
//! [`analysis`] computes what lowering needs (CFG, uniformity, barrier regions),
//! [`lower`] translates each kernel to Cranelift IR in the lane model (one call runs a
//! sub-group, one work-item per SIMD lane; a work-group is a loop over sub-groups,
//! split into regions at barriers), [`builtins`] supplies the OpenCL built-ins.
//! The crate knows nothing of `cl_*` handles; its only contract with the runtime is
//! [`abi`] plus the metadata in [`KernelInfo`].

pub mod abi;
pub mod builtins;

use std::fmt;
use std::sync::Arc;

pub use abi::{KernelEntryFn, NdRangeInfo, WorkGroupState};

/// Sub-group widths the code generator supports; reported as
/// `CL_DEVICE_SUB_GROUP_SIZES_INTEL`.
pub const SUPPORTED_SUB_GROUP_WIDTHS: [u32; 4] = [4, 8, 16, 32];

/// Width used when neither the kernel (`SubgroupSize` / `intel_reqd_sub_group_size`) nor
/// the build options ask for one.
pub const DEFAULT_SUB_GROUP_WIDTH: u32 = 8;

/// Options that change generated code, parsed by the runtime from the build options.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// `-cl-fast-relaxed-math` / `-cl-unsafe-math-optimizations`: allow fused and
    /// approximate math.
    pub fast_relaxed_math: bool,
    /// `-cl-mad-enable`: `mad` may be fused.
    pub mad_enable: bool,
    /// `-cl-denorms-are-zero`.
    pub denorms_are_zero: bool,
    /// `-cl-opt-disable`: trade code quality for compile time.
    pub opt_disable: bool,
    /// Overrides [`DEFAULT_SUB_GROUP_WIDTH`] for kernels without a required size
    /// (`CRANECL_SUBGROUP_WIDTH`, tests).
    pub default_sub_group_width: Option<u32>,
}

/// A build failure: the message goes verbatim into the program's build log, so it
/// names the kernel, the instruction and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub kind: CompileErrorKind,
    pub message: String,
}

/// What went wrong, so the runtime can pick the OpenCL error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileErrorKind {
    /// The words are not a well-formed SPIR-V module (`CL_INVALID_VALUE` for
    /// clCreateProgramWithIL, `CL_BUILD_PROGRAM_FAILURE` at build).
    Malformed,
    /// A capability, extension, instruction or built-in we do not implement.
    Unsupported,
    /// Cranelift rejected the generated code (a bug of ours, reported not crashed).
    Codegen,
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CompileError {}

/// How an argument is passed, which decides what `clSetKernelArg` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// `__global T*`: a buffer (or NULL); 8 bytes in the argument block.
    GlobalPtr,
    /// `__constant T*`: a buffer (or NULL); 8 bytes in the argument block.
    ConstantPtr,
    /// `__local T*`: `clSetKernelArg(size, NULL)`; the runtime places it in local memory
    /// and writes the pointer (8 bytes) into the argument block.
    LocalPtr,
    /// A scalar, vector or struct passed by value; `size` bytes copied verbatim.
    Value,
    /// `sampler_t` (not yet supported by the code generator).
    Sampler,
    /// An image (not yet supported by the code generator).
    Image,
}

/// `CL_KERNEL_ARG_ADDRESS_QUALIFIER` values (OpenCL numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressQualifier {
    Global,
    Local,
    Constant,
    Private,
}

/// One kernel parameter.
#[derive(Clone, Debug)]
pub struct KernelArg {
    /// Parameter name from `OpName` (empty when the module has none).
    pub name: String,
    /// OpenCL C type name (`float*`, `uint4`, ...) when the module carries it
    /// (clang's `kernel_arg_type` strings), else a best-effort name from the SPIR-V type.
    pub type_name: String,
    pub kind: ArgKind,
    pub address_qualifier: AddressQualifier,
    /// `CL_KERNEL_ARG_TYPE_QUALIFIER` bits (const/restrict/volatile/pipe).
    pub type_qualifier: u64,
    /// Bytes `clSetKernelArg` must be given: 8 for pointers, the value size otherwise.
    /// For `LocalPtr` this is 8 too; the local allocation size comes from the app.
    pub size: usize,
    /// Offset of this argument in the argument block.
    pub offset: usize,
}

/// Everything the runtime needs to know about one kernel.
#[derive(Clone, Debug)]
pub struct KernelInfo {
    pub name: String,
    pub args: Vec<KernelArg>,
    /// Size of the argument block (all arguments, each at its `offset`).
    pub arg_block_size: usize,
    /// Sub-group width W this kernel was compiled for.
    pub sub_group_width: u32,
    /// `reqd_work_group_size`.
    pub reqd_work_group_size: Option<[u32; 3]>,
    /// `work_group_size_hint`.
    pub work_group_size_hint: Option<[u32; 3]>,
    /// `CL_KERNEL_ATTRIBUTES` text, e.g. `reqd_work_group_size(16,16,1)`.
    pub attributes: String,
    /// Bytes of kernel-scope `__local` variables (`CL_KERNEL_LOCAL_MEM_SIZE` adds the
    /// `__local` argument sizes).
    pub static_local_bytes: usize,
    /// Scratch bytes needed per sub-group (see [`abi::WorkGroupState::scratch`]).
    pub scratch_bytes_per_sub_group: usize,
    /// Private memory per work-item (`CL_KERNEL_PRIVATE_MEM_SIZE`).
    pub private_bytes_per_item: usize,
    /// Whether the kernel has barriers or work-group collectives (region-split code).
    pub has_barriers: bool,
}

impl KernelInfo {
    /// Scratch bytes for a work-group of `local_size` work-items.
    pub fn scratch_bytes(&self, local_size: usize) -> usize {
        let w = self.sub_group_width as usize;
        local_size.div_ceil(w) * self.scratch_bytes_per_sub_group
    }
}

/// One compiled kernel: its metadata and its native entry.
pub struct CompiledKernel {
    pub info: KernelInfo,
    entry: KernelEntryFn,
    /// Keeps the executable memory alive as long as any kernel of the program lives.
    _code: Arc<dyn Send + Sync>,
}

impl CompiledKernel {
    /// Wraps a native entry; `code` owns the memory `entry` points into.
    pub fn new(info: KernelInfo, entry: KernelEntryFn, code: Arc<dyn Send + Sync>) -> Self {
        CompiledKernel { info, entry, _code: code }
    }

    /// Runs one work-group.
    ///
    /// # Safety
    /// `args` must be a block of `info.arg_block_size` bytes laid out as `info.args`
    /// says, every buffer pointer in it valid for what the kernel accesses, and
    /// `wg` filled as [`abi::WorkGroupState`] documents.
    pub unsafe fn run_work_group(&self, args: *const u8, wg: &WorkGroupState) {
        // SAFETY: the caller upholds the ABI contract documented above.
        unsafe { (self.entry)(args, wg) }
    }
}

/// A compiled SPIR-V module: all of its kernels.
pub struct CompiledProgram {
    pub kernels: Vec<Arc<CompiledKernel>>,
}

impl CompiledProgram {
    /// The kernel named `name`, if the module has one.
    pub fn kernel(&self, name: &str) -> Option<&Arc<CompiledKernel>> {
        self.kernels.iter().find(|k| k.info.name == name)
    }
}

/// Checks that `words` are a SPIR-V module we can decode (clCreateProgramWithIL);
/// cheap, no code generation.
pub fn validate(words: &[u32]) -> Result<(), CompileError> {
    let _ = words;
    Err(CompileError {
        kind: CompileErrorKind::Unsupported,
        message: "the SPIR-V compiler is not built yet".into(),
    })
}

/// Decodes, validates and compiles every kernel of `words` to native code.
pub fn compile(words: &[u32], options: &CompileOptions) -> Result<CompiledProgram, CompileError> {
    let _ = (words, options);
    Err(CompileError {
        kind: CompileErrorKind::Unsupported,
        message: "the SPIR-V compiler is not built yet".into(),
    })
}
