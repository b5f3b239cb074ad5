//! The calling convention between generated kernel code and the runtime.
//!
//! This is the only contract between `jit` and `runtime`: the runtime fills these
//! `#[repr(C)]` structures and calls a kernel's entry once per work-group; the generated
//! code runs every sub-group of that work-group (and every barrier region) itself.
//! Nothing here may depend on OpenCL handles.

/// Constants of one ND-range launch, shared by all of its work-groups.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct NdRangeInfo {
    /// 1, 2 or 3.
    pub work_dim: u32,
    pub _pad: u32,
    /// `get_global_offset(d)`.
    pub global_offset: [u64; 3],
    /// `get_global_size(d)`; unused dimensions are 1.
    pub global_size: [u64; 3],
    /// `get_enqueued_local_size(d)`: the uniform work-group size; unused dimensions are 1.
    pub enqueued_local_size: [u64; 3],
    /// `get_num_groups(d)`, counting the ragged last group.
    pub num_groups: [u64; 3],
    /// Address of this launch's [`PrintfBuffer`], 0 when it has none (printf then
    /// returns -1 and writes nothing).
    pub printf_buffer: u64,
    /// Address of this launch's [`DeviceEnqueue`], 0 when it has none (device-side
    /// enqueue built-ins then fail: `enqueue_kernel` returns `CLK_ENQUEUE_FAILURE`).
    pub device_enqueue: u64,
}

/// The runtime's side of device-side enqueue for one launch: generated code calls
/// `call` once per active work-item and device built-in (see
/// [`crate::device_enqueue`] for the operations and their argument lists).
#[repr(C)]
pub struct DeviceEnqueue {
    /// The runtime's state, passed back to `call`.
    pub data: *const std::ffi::c_void,
    /// Runs operation `op` with `nargs` arguments (each widened to 64 bits).
    pub call: unsafe extern "C" fn(
        data: *const std::ffi::c_void,
        op: u32,
        args: *const u64,
        nargs: u32,
    ) -> u64,
}

/// Where the printf calls of one launch append their records (see
/// [`crate::printf`] for the record layout). Generated code claims space with one
/// atomic add on `used` per call and sub-group; a claim that does not fit lowers
/// `limit` to its start and the call returns -1, so the records are exactly the
/// bytes `data[..min(used, limit)]`.
#[repr(C)]
#[derive(Debug)]
pub struct PrintfBuffer {
    /// Start of the record area, 8-byte aligned.
    pub data: *mut u8,
    /// Bytes at `data`.
    pub capacity: u64,
    /// Bytes claimed so far (may pass `capacity` after a failed claim).
    pub used: std::sync::atomic::AtomicU64,
    /// The start of the first failed claim; `capacity` while none failed.
    pub limit: std::sync::atomic::AtomicU64,
}

/// What one call of a kernel entry needs to know about its work-group.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WorkGroupState {
    /// The launch this work-group belongs to.
    pub ndrange: *const NdRangeInfo,
    /// `get_group_id(d)`.
    pub group_id: [u64; 3],
    /// `get_local_size(d)`: the real size of this group, smaller than the enqueued size
    /// for the last group of a ragged ND-range.
    pub local_size: [u64; 3],
    /// This worker's `__local` block, 128-byte aligned (the largest OpenCL type). Kernel-scope `__local` variables
    /// live at offsets `0..KernelInfo::static_local_bytes`; `__local` pointer arguments
    /// point further into the same block (the runtime writes those pointers into the
    /// argument block).
    pub local_mem: *mut u8,
    /// Bytes of the `__local` block this launch uses (kernel-scope variables and
    /// `__local` arguments): `to_local` and `get_fence` on generic pointers test
    /// whether an address lies in `local_mem .. local_mem + local_mem_size`.
    pub local_mem_size: u64,
    /// This worker's scratch area, 64-byte aligned, at least
    /// `KernelInfo::scratch_bytes(local_size)` bytes: values and private arrays that live
    /// across a barrier, kept per sub-group. Contents are undefined on entry.
    pub scratch: *mut u8,
}

/// The native signature of a compiled kernel: run one whole work-group.
///
/// `args` points at the argument block laid out by [`crate::KernelArg::offset`]: global and
/// constant buffers as a raw device pointer (8 bytes, may be null), `__local` arguments
/// as a pointer into `WorkGroupState::local_mem`, values (scalars, vectors, structs)
/// by value in their SPIR-V layout.
pub type KernelEntryFn = unsafe extern "C" fn(args: *const u8, wg: *const WorkGroupState);
