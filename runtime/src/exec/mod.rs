//! The execution engine: one persistent pool of workers (one per core) that runs
//! commands and ND-ranges.
//!
//! Interface used by the queues (`crate::queue`):
//! - [`spawn`] runs a command's body on the pool (no thread per queue).
//! - [`run_ndrange`] executes every work-group of a launch and returns when all are
//!   done; it may be called from a pool worker (the caller takes work-groups too).
//! - [`choose_local_size`] picks a work-group size when the application passes NULL.

use std::sync::Arc;

use cranecl_jit::{CompiledKernel, KernelInfo};

/// The index space of one `clEnqueueNDRangeKernel`, as the application gave it
/// (unused dimensions: offset 0, sizes 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdRange {
    pub work_dim: u32,
    pub global_offset: [usize; 3],
    pub global_size: [usize; 3],
    /// The enqueued (uniform) work-group size; the last group per dimension may be
    /// smaller (non-uniform work-groups).
    pub local_size: [usize; 3],
}

/// A `__local` pointer argument: where its pointer goes in the argument block and how
/// many bytes of local memory it gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalArg {
    pub offset: usize,
    pub size: usize,
}

/// One kernel launch, ready to run: the argument block has every buffer pointer
/// filled in; the slots of `local_args` are filled per worker by [`run_ndrange`].
pub struct Launch {
    pub kernel: Arc<CompiledKernel>,
    pub args: Vec<u8>,
    pub local_args: Vec<LocalArg>,
    pub ndrange: NdRange,
}

/// Runs every work-group of `launch` on the pool and returns when all are done.
/// Callable from a pool worker: the caller takes work-groups as well.
pub fn run_ndrange(launch: &Launch) {
    let _ = launch;
    unimplemented!("exec::run_ndrange")
}

/// Runs `task` on a pool worker (command bodies, callbacks).
pub fn spawn(task: Box<dyn FnOnce() + Send + 'static>) {
    let _ = task;
    unimplemented!("exec::spawn")
}

/// Number of pool workers (`CRANECL_NUM_THREADS`, else one per core); reported as
/// `CL_DEVICE_MAX_COMPUTE_UNITS`.
pub fn num_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The work-group size used when the application passes `local_work_size = NULL`:
/// honours `reqd_work_group_size`, keeps dimension 0 a multiple of the sub-group width
/// where the global size allows, and stays within `max_work_group_size`.
pub fn choose_local_size(
    info: &KernelInfo,
    work_dim: u32,
    global_size: [usize; 3],
    max_work_group_size: usize,
) -> [usize; 3] {
    let _ = (info, work_dim, global_size, max_work_group_size);
    unimplemented!("exec::choose_local_size")
}
