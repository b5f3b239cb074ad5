//! The ND-range scheduler: runs every work-group of one launch on the pool.
//!
//! A launch becomes an [`NdJob`]: an owned copy of what the work-groups need plus a
//! [`Progress`]. Work-groups, numbered linearly (dimension 0 fastest), are handed
//! out in chunks by one `fetch_add`; finished groups are counted, and the thread that
//! finishes the last one wakes the caller. The caller
//! takes chunks too, so a launch always completes even when every pool worker is busy
//! (or when the caller itself is a pool worker). Each participating thread copies the
//! argument block once per launch into its own memory, patches the `__local` pointers
//! to its own `__local` block and reuses its blocks across launches.
//! This module must not validate OpenCL semantics (the queue does); it only refuses
//! launches it cannot run safely.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sync::Mutex;
use cranecl_jit::{CompiledKernel, NdRangeInfo, WorkGroupState};

use super::memory::{WorkerMemory, BLOCK_ALIGN};
use super::pool::{self, Assist};
use super::progress::Progress;
use super::Launch;

/// Alignment of each `__local` argument inside the `__local` block.
pub const LOCAL_ARG_ALIGN: usize = 128;

/// How long the launching thread runs a launch alone before it wakes helpers: a
/// launch shorter than about twice what waking a parked worker costs is not worth it.
const HELP_WORTH_IT: Duration = Duration::from_micros(50);

/// Why a launch did not run to completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// The launch is inconsistent (a bug of the caller; nothing ran).
    InvalidLaunch(String),
    /// Running a work-group panicked; the rest of the launch was skipped.
    Panicked(String),
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::InvalidLaunch(msg) => write!(f, "invalid launch: {msg}"),
            ExecError::Panicked(msg) => write!(f, "a work-group panicked: {msg}"),
        }
    }
}

impl std::error::Error for ExecError {}

thread_local! {
    static MEMORY: RefCell<WorkerMemory> = RefCell::new(WorkerMemory::default());
}

/// One launch in flight: on the caller's stack when it runs alone (borrowing the
/// launch's argument block), in an `Arc` shared with its helpers otherwise.
pub(crate) struct NdJob<'a> {
    kernel: Arc<CompiledKernel>,
    args: Cow<'a, [u8]>,
    /// `(offset in the argument block, offset in the __local block)` per `__local` arg.
    local_patches: Vec<(usize, usize)>,
    /// Bytes of the `__local` block: static variables then the `__local` arguments.
    local_bytes: usize,
    scratch_bytes: usize,
    info: NdRangeInfo,
    /// Work-groups per dimension.
    groups: [usize; 3],
    enqueued: [usize; 3],
    global: [usize; 3],
    progress: Progress,
    aborted: AtomicBool,
    failure: Mutex<Option<String>>,
}

/// The layout of the `__local` block for a kernel with `static_local_bytes` of
/// kernel-scope variables and `__local` arguments of `sizes`: each argument's offset
/// (128-byte aligned) and the total size.
pub fn local_layout(
    static_local_bytes: usize,
    sizes: impl IntoIterator<Item = usize>,
) -> (Vec<usize>, usize) {
    let mut offset = static_local_bytes;
    let mut offsets = Vec::new();
    for size in sizes {
        offset = offset.next_multiple_of(LOCAL_ARG_ALIGN);
        offsets.push(offset);
        offset = offset.saturating_add(size);
    }
    (offsets, offset)
}

impl<'a> NdJob<'a> {
    /// Checks `launch` and builds the launch's state; `Ok(None)` when there is nothing
    /// to run (a zero global size).
    fn new(
        launch: &'a Launch,
        workers: usize,
        printf_buffer: u64,
        device_enqueue: u64,
    ) -> Result<Option<NdJob<'a>>, ExecError> {
        let nd = &launch.ndrange;
        let dims = nd.work_dim as usize;
        if !(1..=3).contains(&dims) {
            return Err(ExecError::InvalidLaunch(format!(
                "work_dim is {}, must be 1, 2 or 3",
                nd.work_dim
            )));
        }
        let mut offset = [0usize; 3];
        let mut global = [1usize; 3];
        let mut enqueued = [1usize; 3];
        let mut groups = [1usize; 3];
        for d in 0..dims {
            if nd.global_size[d] == 0 {
                return Ok(None);
            }
            if nd.local_size[d] == 0 {
                return Err(ExecError::InvalidLaunch(format!(
                    "local size of dimension {d} is 0"
                )));
            }
            offset[d] = nd.global_offset[d];
            global[d] = nd.global_size[d];
            enqueued[d] = nd.local_size[d];
            groups[d] = global[d].div_ceil(enqueued[d]);
        }
        let total = groups
            .iter()
            .try_fold(1usize, |acc, &g| acc.checked_mul(g))
            .filter(|&t| t <= usize::MAX / 4)
            .ok_or_else(|| ExecError::InvalidLaunch(format!("too many work-groups: {groups:?}")))?;
        let local_items = enqueued
            .iter()
            .try_fold(1usize, |acc, &l| acc.checked_mul(l))
            .ok_or_else(|| {
                ExecError::InvalidLaunch(format!("local size {enqueued:?} overflows"))
            })?;

        let info = &launch.kernel.info;
        if launch.args.len() < info.arg_block_size {
            return Err(ExecError::InvalidLaunch(format!(
                "argument block of kernel {} has {} bytes, the kernel needs {}",
                info.name,
                launch.args.len(),
                info.arg_block_size
            )));
        }
        let (local_offsets, local_bytes) = local_layout(
            info.static_local_bytes,
            launch.local_args.iter().map(|a| a.size),
        );
        let mut local_patches = Vec::with_capacity(launch.local_args.len());
        for (arg, local_offset) in launch.local_args.iter().zip(local_offsets) {
            if arg
                .offset
                .checked_add(8)
                .is_none_or(|end| end > launch.args.len())
            {
                return Err(ExecError::InvalidLaunch(format!(
                    "__local argument slot at offset {} lies outside the {}-byte argument block of kernel {}",
                    arg.offset,
                    launch.args.len(),
                    info.name
                )));
            }
            local_patches.push((arg.offset, local_offset));
        }
        let to_u64 = |a: [usize; 3]| a.map(|v| v as u64);
        let ndinfo = NdRangeInfo {
            work_dim: nd.work_dim,
            _pad: 0,
            global_offset: to_u64(offset),
            global_size: to_u64(global),
            enqueued_local_size: to_u64(enqueued),
            num_groups: to_u64(groups),
            printf_buffer,
            device_enqueue,
        };
        Ok(Some(NdJob {
            kernel: Arc::clone(&launch.kernel),
            args: Cow::Borrowed(&launch.args),
            local_patches,
            local_bytes,
            scratch_bytes: info.scratch_bytes(local_items),
            info: ndinfo,
            groups,
            enqueued,
            global,
            progress: Progress::new(total, workers),
            aborted: AtomicBool::new(false),
            failure: Mutex::new(None),
        }))
    }

    /// Takes and runs chunks on the calling thread until none are left. The launching
    /// thread passes its [`Recruiter`], which calls helpers in once the launch has run
    /// long enough to be worth it.
    fn participate(&self, recruiter: Option<&mut Recruiter>) {
        if self.progress.all_claimed() {
            return;
        }
        MEMORY.with(|cell| match cell.try_borrow_mut() {
            Ok(mut memory) => self.run_chunks(&mut memory, recruiter),
            // Only if a kernel launch is somehow nested on this thread: use fresh blocks.
            Err(_) => self.run_chunks(&mut WorkerMemory::default(), recruiter),
        });
    }

    fn run_chunks(&self, memory: &mut WorkerMemory, mut recruiter: Option<&mut Recruiter>) {
        let mut prepared: Option<(*const u8, *mut u8, *mut u8)> = None;
        // While recruiting, claim small pieces (1, 2, 4, ... groups) so that helpers
        // called in after the first ones still find most of the work.
        let mut size = if recruiter.is_some() { 1 } else { usize::MAX };
        while let Some(chunk) = self.progress.claim_at_most(size) {
            if !self.aborted.load(Ordering::Relaxed) {
                // Everything that may panic is inside: a claimed chunk is always
                // completed, so the caller never returns while groups could still run.
                let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                    let (args, local, scratch) =
                        *prepared.get_or_insert_with(|| self.prepare(memory));
                    // Group ids from the linear index once per chunk, then counted up
                    // (no divisions per group).
                    let mut group = self.group_of(chunk.start);
                    for _ in chunk.clone() {
                        self.run_group(group, args, local, scratch);
                        self.advance(&mut group);
                    }
                }));
                if let Err(payload) = outcome {
                    self.aborted.store(true, Ordering::Relaxed);
                    let mut failure = self.failure.lock();
                    failure.get_or_insert_with(|| pool::panic_message(payload.as_ref()));
                }
            }
            self.progress.complete(chunk.len());
            if let Some(r) = recruiter.as_deref_mut() {
                if r.started.elapsed() >= HELP_WORTH_IT {
                    r.call_in(self.progress.unclaimed_chunks());
                    recruiter = None;
                    size = usize::MAX;
                } else {
                    size = size.saturating_mul(2);
                }
            }
        }
    }

    /// Sizes this thread's blocks for the launch and makes its argument copy.
    fn prepare(&self, memory: &mut WorkerMemory) -> (*const u8, *mut u8, *mut u8) {
        let local = memory.local.reserve(self.local_bytes);
        let scratch = memory.scratch.reserve(self.scratch_bytes);
        let args = memory.args.fill_from(&self.args);
        for &(arg_offset, local_offset) in &self.local_patches {
            let pointer = local.wrapping_add(local_offset) as u64;
            // SAFETY: NdJob::new checked `arg_offset + 8 <= args.len()`, and the copy
            // holds `args.len()` bytes; the slot may be unaligned.
            unsafe { args.add(arg_offset).cast::<u64>().write_unaligned(pointer) };
        }
        debug_assert_eq!(local as usize % BLOCK_ALIGN, 0);
        (args, local, scratch)
    }

    /// The 3-D group id of linear group `index` (dimension 0 fastest).
    fn group_of(&self, index: usize) -> [usize; 3] {
        let mut group = [0usize; 3];
        let mut rest = index;
        for (g, &n) in group.iter_mut().zip(&self.groups) {
            *g = rest % n;
            rest /= n;
        }
        group
    }

    /// Steps `group` to the next linear group id.
    fn advance(&self, group: &mut [usize; 3]) {
        for (g, &n) in group.iter_mut().zip(&self.groups) {
            *g += 1;
            if *g < n {
                return;
            }
            *g = 0;
        }
    }

    fn run_group(&self, group: [usize; 3], args: *const u8, local: *mut u8, scratch: *mut u8) {
        let mut group_id = [0u64; 3];
        let mut local_size = [1u64; 3];
        for d in 0..3 {
            let g = group[d];
            group_id[d] = g as u64;
            let first = g * self.enqueued[d];
            local_size[d] = self.enqueued[d].min(self.global[d] - first) as u64;
        }
        let wg = WorkGroupState {
            ndrange: &self.info,
            group_id,
            local_size,
            local_mem: local,
            local_mem_size: self.local_bytes as u64,
            scratch,
        };
        // SAFETY: `args` is this thread's copy of an argument block the queue built for
        // this kernel (size checked in NdJob::new) with its __local pointers patched to
        // this thread's __local block of `local_bytes`; the scratch block holds
        // `scratch_bytes(enqueued local size)`, enough for every (possibly smaller) group;
        // `wg.ndrange` points at `self.info`, alive for the call.
        unsafe { self.kernel.run_work_group(args, &wg) };
    }
}

impl Assist for NdJob<'static> {
    fn assist(&self) {
        self.participate(None);
    }
}

/// The launching thread's plan for helpers: how many it may call in and when it
/// started, so a launch that finishes within [`HELP_WORTH_IT`] never wakes anyone.
struct Recruiter {
    started: Instant,
    helpers: usize,
    job: Arc<dyn Assist>,
}

impl Recruiter {
    /// Invites up to `helpers` workers, no more than there are `unclaimed` chunks.
    fn call_in(&mut self, unclaimed: usize) {
        let n = self.helpers.min(unclaimed);
        pool::invite(&self.job, n);
    }
}

/// Runs every work-group of `launch`; see [`super::run_ndrange`].
pub fn try_run_ndrange(
    launch: &Launch,
    printf_buffer: u64,
    device_enqueue: u64,
) -> Result<(), ExecError> {
    // A sub-device's launch uses no more threads than its compute units: the caller
    // plus at most `workers - 1` invited helpers (each invitation is one thread).
    let workers = launch.threads.clamp(1, pool::num_workers());
    let Some(job) = NdJob::new(launch, workers, printf_buffer, device_enqueue)? else {
        return Ok(());
    };
    let helpers = workers.saturating_sub(1).min(job.progress.chunks() - 1);
    if helpers == 0 {
        // Nothing to share (one chunk, or one thread): no shared state, no copy.
        job.participate(None);
        return job.outcome();
    }
    let job = Arc::new(job.into_shared());
    let mut recruiter = Recruiter {
        started: Instant::now(),
        helpers,
        job: job.clone(),
    };
    job.participate(Some(&mut recruiter));
    job.outcome()
}

impl NdJob<'_> {
    /// The job with its own copy of the argument block, for sharing with helpers.
    fn into_shared(self) -> NdJob<'static> {
        NdJob {
            kernel: self.kernel,
            args: Cow::Owned(self.args.into_owned()),
            local_patches: self.local_patches,
            local_bytes: self.local_bytes,
            scratch_bytes: self.scratch_bytes,
            info: self.info,
            groups: self.groups,
            enqueued: self.enqueued,
            global: self.global,
            progress: self.progress,
            aborted: self.aborted,
            failure: self.failure,
        }
    }

    /// Waits until every claimed group has run; the launch's error, if a group
    /// panicked.
    fn outcome(&self) -> Result<(), ExecError> {
        self.progress.wait();
        let failure = self.failure.lock().take();
        match failure {
            Some(message) => Err(ExecError::Panicked(format!(
                "kernel {}: {message}",
                self.kernel.info.name
            ))),
            None => Ok(()),
        }
    }
}
