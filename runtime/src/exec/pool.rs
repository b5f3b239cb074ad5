//! The persistent worker pool: one thread per core, created on first use (and again
//! in a child process that the application forked after using the driver, which
//! inherits none of the parent's threads: see `crate::fork`).
//!
//! Workers take two kinds of work from one queue: command bodies ([`spawn`]) and
//! invitations to help with a running ND-range ([`invite`]), which go first. An idle
//! worker spins for a short, bounded time (cheap back-to-back launches) and then
//! parks on a condition variable. Panics in a task are caught, reported on stderr and
//! do not kill the worker. This module knows nothing about kernels: an ND-range is
//! just an [`Assist`] it calls.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};

/// A command body or callback run on the pool.
pub type Task = Box<dyn FnOnce() + Send + 'static>;

/// Work a pool worker can join: a running ND-range. `assist` returns when there is
/// nothing left to take.
pub trait Assist: Send + Sync {
    /// Takes and runs pieces of the work until none are left.
    fn assist(&self);
}

/// How long an idle worker spins (checking for new work without sleeping) before it
/// parks. Short: it only pays for back-to-back launches.
const IDLE_SPIN: Duration = Duration::from_micros(50);

/// Stack of a worker: kernels keep private arrays for all lanes of a sub-group on
/// the stack, so give them as much room as a main thread has (only touched pages
/// cost memory).
const WORKER_STACK_BYTES: usize = 16 << 20;

struct Queue {
    /// ND-range invitations; served before tasks so a launch gets its helpers soon.
    invitations: VecDeque<Arc<dyn Assist>>,
    tasks: VecDeque<Task>,
    /// Workers parked on `Shared::wake`.
    parked: usize,
}

struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
    /// Items in the queue, readable without the lock (the idle spin watches it).
    pending: AtomicUsize,
    workers: usize,
    /// The process whose threads serve this pool: after `fork()` the child has none
    /// of them and starts a pool of its own.
    pid: u32,
}

/// The current pool; pools are leaked (one per process, plus one per forked child
/// that uses the driver), so a published pointer stays valid forever.
static POOL: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());
/// Serialises pool creation.
static POOL_START: Mutex<()> = Mutex::new(());
static NUM_WORKERS: OnceLock<usize> = OnceLock::new();

thread_local! {
    static IS_WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Number of workers: `CRANECL_NUM_THREADS` when it is a positive integer, else the
/// number of cores. Fixed at the first call.
pub fn num_workers() -> usize {
    *NUM_WORKERS.get_or_init(|| {
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        match std::env::var("CRANECL_NUM_THREADS") {
            Ok(text) => match text.trim().parse::<usize>() {
                Ok(n) if n > 0 => n.min(1024),
                _ => {
                    eprintln!(
                        "cranecl: ignoring CRANECL_NUM_THREADS={text:?} (not a positive integer); using {cores} workers"
                    );
                    cores
                }
            },
            Err(_) => cores,
        }
    })
}

/// Whether the calling thread is one of the pool's workers.
pub fn is_worker() -> bool {
    IS_WORKER.with(|w| w.get())
}

/// Whether the `fork()` handlers clear [`POOL`] in the child, so that the pool need
/// not compare process ids (a system call) on every use.
static FORK_HANDLER: AtomicBool = AtomicBool::new(false);

/// Called by `crate::fork` once its handlers are (or failed to be) registered.
pub(crate) fn note_fork_handlers(registered: bool) {
    FORK_HANDLER.store(registered, Ordering::Relaxed);
}

/// In the child after `fork()`: the child has none of the parent's workers, and the
/// forking thread is no worker there.
pub(crate) fn forget_in_child() {
    POOL.store(std::ptr::null_mut(), Ordering::Release);
    IS_WORKER.with(|w| w.set(false));
}

/// Before `fork()`: holds the pool's start lock (see `crate::fork`).
pub(crate) fn hold_for_fork(held: &mut Vec<Box<dyn std::any::Any>>) {
    held.push(Box::new(POOL_START.lock()));
}

/// This process's pool, if it has been started.
fn current_pool() -> Option<&'static Shared> {
    let ptr = POOL.load(Ordering::Acquire);
    // SAFETY: a non-null POOL points at a leaked, never freed `Shared`.
    let shared = unsafe { ptr.as_ref() }?;
    if FORK_HANDLER.load(Ordering::Relaxed) {
        return Some(shared);
    }
    (shared.pid == std::process::id()).then_some(shared)
}

/// This process's pool, started on first use (and again in a forked child).
fn pool() -> &'static Shared {
    if let Some(shared) = current_pool() {
        return shared;
    }
    let _start = POOL_START.lock();
    if let Some(shared) = current_pool() {
        return shared;
    }
    let workers = num_workers();
    let shared: &'static Shared = Box::leak(Box::new(Shared {
        queue: Mutex::new(Queue {
            invitations: VecDeque::new(),
            tasks: VecDeque::new(),
            parked: 0,
        }),
        wake: Condvar::new(),
        pending: AtomicUsize::new(0),
        workers,
        pid: std::process::id(),
    }));
    for index in 0..workers {
        let spawned = thread::Builder::new()
            .name(format!("cranecl-worker-{index}"))
            .stack_size(WORKER_STACK_BYTES)
            .spawn(move || worker_main(shared));
        if let Err(err) = spawned {
            // With no worker at all, spawned tasks could never run; ND-ranges still
            // do (their callers run every group).
            eprintln!("cranecl: could not start pool worker {index}: {err}");
        }
    }
    POOL.store(std::ptr::from_ref(shared).cast_mut(), Ordering::Release);
    crate::fork::install();
    shared
}

/// Queues `task` for a pool worker.
pub fn spawn(task: Task) {
    let shared = pool();
    let mut queue = shared.queue.lock();
    queue.tasks.push_back(task);
    shared.pending.fetch_add(1, Ordering::Release);
    if queue.parked > 0 {
        shared.wake.notify_one();
    }
}

/// Asks up to `helpers` workers to join `work`. Invitations that arrive after the
/// work is finished cost the worker one call of `assist` that finds nothing.
pub fn invite(work: &Arc<dyn Assist>, helpers: usize) {
    if helpers == 0 {
        return;
    }
    let shared = pool();
    let helpers = helpers.min(shared.workers);
    let mut queue = shared.queue.lock();
    for _ in 0..helpers {
        queue.invitations.push_back(Arc::clone(work));
    }
    shared.pending.fetch_add(helpers, Ordering::Release);
    let to_wake = helpers.min(queue.parked);
    for _ in 0..to_wake {
        shared.wake.notify_one();
    }
}

/// Withdraws invitations to `work` that no worker has taken yet (the caller finished
/// it alone).
pub fn withdraw(work: &Arc<dyn Assist>) {
    let Some(shared) = current_pool() else {
        return;
    };
    if shared.pending.load(Ordering::Acquire) == 0 {
        return;
    }
    let mut queue = shared.queue.lock();
    let before = queue.invitations.len();
    queue.invitations.retain(|other| !Arc::ptr_eq(other, work));
    let removed = before - queue.invitations.len();
    if removed > 0 {
        shared.pending.fetch_sub(removed, Ordering::Release);
    }
}

enum Work {
    Assist(Arc<dyn Assist>),
    Task(Task),
}

fn take(queue: &mut Queue, shared: &Shared) -> Option<Work> {
    let work = if let Some(inv) = queue.invitations.pop_front() {
        Work::Assist(inv)
    } else {
        Work::Task(queue.tasks.pop_front()?)
    };
    shared.pending.fetch_sub(1, Ordering::Release);
    Some(work)
}

fn worker_main(shared: &'static Shared) {
    IS_WORKER.with(|w| w.set(true));
    loop {
        let work = next_work(shared);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| match work {
            Work::Assist(inv) => inv.assist(),
            Work::Task(task) => task(),
        }));
        if let Err(payload) = outcome {
            eprintln!(
                "cranecl: a task on {} panicked: {}",
                thread::current().name().unwrap_or("a pool worker"),
                panic_message(payload.as_ref())
            );
        }
    }
}

/// Waits for the next piece of work: spin briefly, then park.
fn next_work(shared: &Shared) -> Work {
    let spin_until = Instant::now() + IDLE_SPIN;
    loop {
        if shared.pending.load(Ordering::Acquire) > 0 {
            let mut queue = shared.queue.lock();
            if let Some(work) = take(&mut queue, shared) {
                return work;
            }
        }
        if Instant::now() >= spin_until {
            break;
        }
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }
    let mut queue = shared.queue.lock();
    loop {
        if let Some(work) = take(&mut queue, shared) {
            return work;
        }
        queue.parked += 1;
        shared.wake.wait(&mut queue);
        queue.parked -= 1;
    }
}

/// The text of a panic payload (`&str` or `String`), for messages.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}
