//! Device-side enqueue (OpenCL C 2.0 `enqueue_kernel`, `queue_t`, `clk_event_t`): the
//! operations generated code hands to the runtime.
//!
//! The build pipeline turns clang's device-enqueue built-ins into calls of imports
//! named `__cranecl_*` (runtime `build::device_enqueue`); `lower::device_enqueue`
//! lowers each call to one call of [`cranecl_device_call`] per sub-group, which calls
//! the launch's [`DeviceEnqueue`] hook once per active lane, in lane order, with the
//! arguments of [`DeviceOp`] (each widened to 64 bits; absent ones are 0).

use crate::abi::{DeviceEnqueue, NdRangeInfo};

/// Symbol of [`cranecl_device_call`] in generated code.
pub const CALL_SYMBOL: &str = "cranecl_device_call";

/// The operations, with the arguments the hook receives.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceOp {
    /// `get_default_queue()` -> queue handle (0 when there is none).
    GetDefaultQueue = 0,
    /// `enqueue_kernel`: queue, flags, `ndrange_t*`, number of wait events, wait list
    /// (`clk_event_t*`), event to return (`clk_event_t*`, may be null), the invoke
    /// kernel's name (NUL-terminated), the block literal, number of `__local`
    /// arguments, their sizes (`size_t*`), the block literal's size (0: read it from
    /// the literal's first 4 bytes, as clang lays it out) -> `CLK_SUCCESS` or an
    /// error code.
    EnqueueKernel = 1,
    /// `get_kernel_work_group_size`: (unused), name, block -> size.
    KernelWorkGroupSize = 2,
    /// `get_kernel_preferred_work_group_size_multiple`: (unused), name, block.
    KernelPreferredMultiple = 3,
    /// `get_kernel_max_sub_group_size_for_ndrange`: `ndrange_t*`, name, block.
    KernelMaxSubGroupSize = 4,
    /// `get_kernel_sub_group_count_for_ndrange`: `ndrange_t*`, name, block.
    KernelSubGroupCount = 5,
    /// `create_user_event()` -> event handle.
    CreateUserEvent = 6,
    /// `is_valid_event(e)` -> 0 or 1.
    IsValidEvent = 7,
    /// `retain_event(e)`.
    RetainEvent = 8,
    /// `release_event(e)`.
    ReleaseEvent = 9,
    /// `set_user_event_status(e, status)`.
    SetUserEventStatus = 10,
    /// `capture_event_profiling_info(e, name, global void* value)`.
    CaptureProfilingInfo = 11,
    /// `enqueue_marker`: queue, number of wait events, wait list, event to return
    /// -> `CLK_SUCCESS` or an error code.
    EnqueueMarker = 12,
    /// `OpGetKernelLocalSizeForSubgroupCount`: sub-group count, name, block ->
    /// `CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT`'s first dimension.
    KernelLocalSizeForSubGroupCount = 13,
    /// `OpGetKernelMaxNumSubgroups`: (unused), name, block -> `CL_KERNEL_MAX_NUM_SUB_GROUPS`.
    KernelMaxNumSubGroups = 14,
}

/// Number of arguments of every `EnqueueKernel` call.
pub const ENQUEUE_ARGS: usize = 11;

/// Name prefix of the hidden kernels the jit compiles for `OpEnqueueKernel` invoke
/// functions that are not entry points (`.` keeps them apart from OpenCL C names);
/// the runtime leaves them out of `CL_PROGRAM_KERNEL_NAMES` and `clCreateKernel`.
pub const HIDDEN_KERNEL_PREFIX: &str = "__cranecl.invoke.";

/// Whether `name` is one of the hidden invoke kernels.
pub fn is_hidden_kernel(name: &str) -> bool {
    name.starts_with(HIDDEN_KERNEL_PREFIX)
}

/// How an import's parameters map onto its operation's arguments: `(operation,
/// argument count, for each parameter its argument index)`.
pub fn import(name: &str) -> Option<(DeviceOp, usize, &'static [usize])> {
    use DeviceOp::*;
    Some(match name {
        "__cranecl_get_default_queue" => (GetDefaultQueue, 0, &[]),
        "__cranecl_enqueue_kernel_basic" => (EnqueueKernel, ENQUEUE_ARGS, &[0, 1, 2, 6, 7]),
        "__cranecl_enqueue_kernel_basic_events" => {
            (EnqueueKernel, ENQUEUE_ARGS, &[0, 1, 2, 3, 4, 5, 6, 7])
        }
        "__cranecl_enqueue_kernel_varargs" => (EnqueueKernel, ENQUEUE_ARGS, &[0, 1, 2, 6, 7, 8, 9]),
        "__cranecl_enqueue_kernel_events_varargs" => {
            (EnqueueKernel, ENQUEUE_ARGS, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
        }
        "__cranecl_get_kernel_work_group_size_impl" => (KernelWorkGroupSize, 3, &[1, 2]),
        "__cranecl_get_kernel_preferred_work_group_size_multiple_impl" => {
            (KernelPreferredMultiple, 3, &[1, 2])
        }
        "__cranecl_get_kernel_max_sub_group_size_for_ndrange_impl" => {
            (KernelMaxSubGroupSize, 3, &[0, 1, 2])
        }
        "__cranecl_get_kernel_sub_group_count_for_ndrange_impl" => {
            (KernelSubGroupCount, 3, &[0, 1, 2])
        }
        "__cranecl_enqueue_marker" => (EnqueueMarker, 4, &[0, 1, 2, 3]),
        "__cranecl_create_user_event" => (CreateUserEvent, 0, &[]),
        "__cranecl_is_valid_event" => (IsValidEvent, 1, &[0]),
        "__cranecl_retain_event" => (RetainEvent, 1, &[0]),
        "__cranecl_release_event" => (ReleaseEvent, 1, &[0]),
        "__cranecl_set_user_event_status" => (SetUserEventStatus, 2, &[0, 1]),
        "__cranecl_capture_event_profiling_info" => (CaptureProfilingInfo, 3, &[0, 1, 2]),
        _ => return None,
    })
}

/// `CLK_ENQUEUE_FAILURE`: what `enqueue_kernel` returns when the launch has no hook.
pub const CLK_ENQUEUE_FAILURE: i32 = -101;

/// Runs `op` for every active lane of a sub-group: `args` holds `nargs` rows of `w`
/// lane values (row `i` = argument `i`), `mask` the active lanes as bits, `out` gets
/// each active lane's result.
///
/// # Safety
/// `nd` is the launch's [`NdRangeInfo`]; `args` points at `nargs * w` values and `out`
/// at `w` writable values (generated code passes its stack arrays).
pub unsafe extern "C" fn cranecl_device_call(
    nd: *const NdRangeInfo,
    op: u32,
    args: *const u64,
    nargs: u32,
    mask: u64,
    w: u32,
    out: *mut u64,
) {
    let (w, nargs) = (w as usize, nargs as usize);
    // SAFETY: generated code passes the launch's NdRangeInfo.
    let hook = unsafe { (*nd).device_enqueue } as *const DeviceEnqueue;
    let mut lane_args = [0u64; 16];
    for lane in 0..w.min(64) {
        if mask & (1 << lane) == 0 {
            continue;
        }
        for (i, a) in lane_args.iter_mut().enumerate().take(nargs.min(16)) {
            // SAFETY: `args` holds `nargs` rows of `w` values.
            *a = unsafe { *args.add(i * w + lane) };
        }
        let r = if hook.is_null() {
            if op == DeviceOp::EnqueueKernel as u32 || op == DeviceOp::EnqueueMarker as u32 {
                CLK_ENQUEUE_FAILURE as i64 as u64
            } else {
                0
            }
        } else {
            // SAFETY: a non-null hook is the runtime's, alive for the launch.
            unsafe { ((*hook).call)((*hook).data, op, lane_args.as_ptr(), nargs as u32) }
        };
        // SAFETY: `out` holds `w` values.
        unsafe { *out.add(lane) = r };
    }
}
