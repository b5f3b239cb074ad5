//! What a compiled program hands the runtime: each kernel's metadata (arguments,
//! sizes, attributes) and its native entry.

use std::sync::Arc;

use crate::abi::{KernelEntryFn, WorkGroupState};
use crate::printf;

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
    /// A pipe (`OpTypePipe`): a pipe memory object; its storage address, 8 bytes.
    Pipe,
    /// `queue_t`: a device queue (`CL_QUEUE_ON_DEVICE`); its handle, 8 bytes.
    Queue,
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
    pub kind: ArgKind,
    pub address_qualifier: AddressQualifier,
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
    /// Scratch bytes needed per sub-group (see [`crate::abi::WorkGroupState::scratch`]).
    pub scratch_bytes_per_sub_group: usize,
    /// Private memory per work-item (`CL_KERNEL_PRIVATE_MEM_SIZE`).
    pub private_bytes_per_item: usize,
    /// Whether the kernel has barriers or work-group collectives (region-split code).
    pub has_barriers: bool,
    /// Bytes of the generated code's stack frame (spill slots and private arrays),
    /// at most [`crate::codegen::MAX_FRAME_BYTES`].
    pub frame_bytes: usize,
    /// The number of sub-groups a work-group must have (`SubgroupsPerWorkgroup`,
    /// `CL_KERNEL_COMPILE_NUM_SUB_GROUPS`).
    pub required_num_sub_groups: Option<u32>,
    /// Whether the kernel calls device-side enqueue built-ins (`enqueue_kernel`,
    /// `get_default_queue`, device events): its launches need a
    /// [`crate::abi::DeviceEnqueue`] hook.
    pub device_enqueue: bool,
}

impl KernelInfo {
    /// A kernel named `name` at sub-group width `sub_group_width` with no arguments,
    /// attributes, memory needs or special features: the base that the runtime's tests
    /// and benchmarks complete with struct-update syntax.
    pub fn new(name: &str, sub_group_width: u32) -> Self {
        KernelInfo {
            name: name.into(),
            args: Vec::new(),
            arg_block_size: 0,
            sub_group_width,
            reqd_work_group_size: None,
            work_group_size_hint: None,
            attributes: String::new(),
            static_local_bytes: 0,
            scratch_bytes_per_sub_group: 0,
            private_bytes_per_item: 0,
            has_barriers: false,
            frame_bytes: 0,
            required_num_sub_groups: None,
            device_enqueue: false,
        }
    }

    /// Number of sub-groups of a work-group of size `local` (`get_num_sub_groups`):
    /// sub-group `s` holds the work-items with linear local ids `s*W .. s*W+W-1`
    /// (x fastest), so this is `ceil(lx*ly*lz / W)`.
    pub fn num_sub_groups(&self, local: [usize; 3]) -> usize {
        let w = self.sub_group_width as usize;
        (local[0] * local[1] * local[2]).div_ceil(w)
    }

    /// Scratch bytes for a work-group of `local_size` work-items.
    pub fn scratch_bytes(&self, local_size: usize) -> usize {
        let w = self.sub_group_width as usize;
        local_size.div_ceil(w) * self.scratch_bytes_per_sub_group
    }
}

/// One compiled kernel: its metadata and its native entry.
pub struct CompiledKernel {
    pub info: KernelInfo,
    /// The kernel's printf call sites (empty when it calls no printf).
    printf: printf::PrintfInfo,
    entry: KernelEntryFn,
    /// Keeps the executable memory alive as long as any kernel of the program lives.
    _code: Arc<dyn Send + Sync>,
}

impl CompiledKernel {
    /// Wraps a native entry; `code` owns the memory `entry` points into.
    pub fn new(info: KernelInfo, entry: KernelEntryFn, code: Arc<dyn Send + Sync>) -> Self {
        CompiledKernel {
            info,
            printf: printf::PrintfInfo::default(),
            entry,
            _code: code,
        }
    }

    /// Attaches the printf call sites the generated code refers to.
    pub fn with_printf(mut self, printf: printf::PrintfInfo) -> Self {
        self.printf = printf;
        self
    }

    /// How to turn this kernel's printf records into text; a launch needs a
    /// [`crate::PrintfBuffer`] unless this is empty.
    pub fn printf(&self) -> &printf::PrintfInfo {
        &self.printf
    }

    /// Runs one work-group.
    ///
    /// # Safety
    /// `args` must be a block of `info.arg_block_size` bytes laid out as `info.args`
    /// says, every buffer pointer in it valid for what the kernel accesses, and
    /// `wg` filled as [`crate::abi::WorkGroupState`] documents.
    pub unsafe fn run_work_group(&self, args: *const u8, wg: &WorkGroupState) {
        // SAFETY: the caller upholds the ABI contract documented above.
        unsafe { (self.entry)(args, wg) }
    }
}

/// A compiled SPIR-V module: all of its kernels.
pub struct CompiledProgram {
    pub kernels: Vec<Arc<CompiledKernel>>,
    /// Bytes of program-scope `global` variables, shared by the kernels and kept
    /// between launches (`CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE`).
    pub global_variable_bytes: usize,
}

impl CompiledProgram {
    /// The kernel named `name`, if the module has one.
    pub fn kernel(&self, name: &str) -> Option<&Arc<CompiledKernel>> {
        self.kernels.iter().find(|k| k.info.name == name)
    }
}
