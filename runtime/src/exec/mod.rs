//! The execution engine: one persistent pool of workers (one per core) that runs
//! commands and ND-ranges.
//!
//! Interface used by the queues (`crate::queue`):
//! - [`spawn`] runs a command's body on the pool (no thread per queue).
//! - [`run_ndrange`] executes every work-group of a launch and returns when all are
//!   done; it may be called from a pool worker (the caller takes work-groups too).
//! - [`choose_local_size`] picks a work-group size when the application passes NULL.
//! - [`parallel_for`] spreads other runtime work (compiling kernels, big copies) over
//!   the pool.
//!
//! Configuration: `CRANECL_NUM_THREADS` sets the number of workers (default: one per
//! core the process may use).
//!
//! Parts: `pool` (the workers and their queue), `progress` (lock-free chunked
//! hand-out and completion), `ndrange` (the work-group scheduler), `parallel`
//! (`parallel_for`), `local_size` (the NULL-local-size chooser), `memory`
//! (per-thread aligned blocks).

mod local_size;
mod memory;
mod ndrange;
mod parallel;
pub(crate) mod pool;
mod progress;

#[cfg(test)]
pub(crate) mod tests;

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
    /// At most this many threads (the launching thread included) run the launch's
    /// work-groups at once: the compute units of the device it was enqueued on
    /// (clamped to 1..=[`num_workers`]).
    pub threads: usize,
}

/// Runs every work-group of `launch` on the pool and returns when all are done.
/// Callable from a pool worker: the caller takes work-groups as well.
///
/// # Panics
/// If the launch is inconsistent or a work-group panics (see [`try_run_ndrange`],
/// which reports both as an error instead).
pub fn run_ndrange(launch: &Launch) {
    if let Err(err) = try_run_ndrange(launch) {
        panic!("cranecl: {err}");
    }
}

/// Like [`run_ndrange`], but reports an inconsistent launch
/// ([`ExecError::InvalidLaunch`], nothing ran) or a panicking work-group
/// ([`ExecError::Panicked`], the remaining groups were skipped) as an error.
/// A global size of 0 in any used dimension runs nothing and succeeds.
pub fn try_run_ndrange(launch: &Launch) -> Result<(), ExecError> {
    ndrange::try_run_ndrange(launch, 0, 0)
}

/// [`try_run_ndrange`] for a kernel that calls printf: `printf_buffer` is the address
/// of the launch's [`cranecl_jit::PrintfBuffer`], which must stay alive and unmoved
/// until this returns.
pub fn try_run_ndrange_with_printf(launch: &Launch, printf_buffer: u64) -> Result<(), ExecError> {
    ndrange::try_run_ndrange(launch, printf_buffer, 0)
}

/// [`try_run_ndrange_with_printf`] with the address of the launch's
/// [`cranecl_jit::DeviceEnqueue`] hook (0: none), alive until this returns.
pub fn try_run_ndrange_with_hooks(
    launch: &Launch,
    printf_buffer: u64,
    device_enqueue: u64,
) -> Result<(), ExecError> {
    ndrange::try_run_ndrange(launch, printf_buffer, device_enqueue)
}

pub use ndrange::{local_layout, ExecError, LOCAL_ARG_ALIGN};
pub use parallel::parallel_for;

/// Runs `task` on a pool worker (command bodies, callbacks). A panicking task is
/// reported on stderr and does not take its worker down.
///
/// Tasks should not block waiting for other pool tasks: with every worker blocked,
/// queued tasks would wait forever (ND-ranges still progress, their callers run them).
pub fn spawn(task: Box<dyn FnOnce() + Send + 'static>) {
    pool::spawn(task);
}

/// [`spawn`] for a task that lives in an `Arc` already: no closure to box.
pub fn spawn_shared(task: Arc<dyn SharedTask>) {
    pool::spawn_shared(task);
}

pub use pool::SharedTask;

/// Number of pool workers (`CRANECL_NUM_THREADS`, else one per core); reported as
/// `CL_DEVICE_MAX_COMPUTE_UNITS`.
pub fn num_workers() -> usize {
    pool::num_workers()
}

/// Whether the calling thread is a pool worker.
pub fn is_pool_worker() -> bool {
    pool::is_worker()
}

/// The work-group size used when the application passes `local_work_size = NULL`:
/// honours `reqd_work_group_size`, keeps dimension 0 a multiple of the sub-group width
/// where the global size allows, stays within `max_work_group_size`, and leaves
/// enough groups for the `threads` that will run the launch (the device's compute
/// units).
pub fn choose_local_size(
    info: &KernelInfo,
    work_dim: u32,
    global_size: [usize; 3],
    max_work_group_size: usize,
    threads: usize,
) -> [usize; 3] {
    local_size::choose(
        info,
        work_dim,
        global_size,
        max_work_group_size,
        threads.clamp(1, num_workers()),
        false,
    )
}

/// [`choose_local_size`] with the choice of non-uniform work-groups: pass `true` for
/// programs built as OpenCL C 2.0+ without `-cl-uniform-work-group-size`; a global size
/// without a useful divisor (e.g. a large prime) then gets full sub-groups and a ragged
/// last group instead of tiny uniform groups. [`choose_local_size`] never returns a
/// size that leaves a ragged group.
pub fn choose_local_size_non_uniform(
    info: &KernelInfo,
    work_dim: u32,
    global_size: [usize; 3],
    max_work_group_size: usize,
    non_uniform_allowed: bool,
) -> [usize; 3] {
    local_size::choose(
        info,
        work_dim,
        global_size,
        max_work_group_size,
        num_workers(),
        non_uniform_allowed,
    )
}
