//! The persistent worker pool: one thread per core, created on first use (and again
//! in a child process that the application forked after using the driver, which
//! inherits none of the parent's threads: see `crate::fork`).
//!
//! Workers take two kinds of work from two lock-free queues: command bodies
//! ([`spawn`]) and invitations to help with a running ND-range ([`invite`]), which go
//! first. Queuing takes no lock, so threads enqueuing into different command queues
//! never meet on one mutex; the mutex beside the condition variable is touched only
//! to park a worker and to wake a parked one. An idle worker spins for a short,
//! bounded time (cheap back-to-back launches) and then parks. Panics in a task are caught, reported on stderr and
//! do not kill the worker. This module knows nothing about kernels: an ND-range is
//! just an [`Assist`] it calls.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_queue::SegQueue;

use crate::sync::{Condvar, Mutex};

/// A command body or callback run on the pool.
pub type Task = Box<dyn FnOnce() + Send + 'static>;

/// Work that already lives in an `Arc` (a queued command): queued without boxing a
/// closure around it.
pub trait SharedTask: Send + Sync {
    /// Runs the task (once per time it was queued).
    fn run(self: Arc<Self>);
}

/// What the task queue holds.
enum Queued {
    Boxed(Task),
    Shared(Arc<dyn SharedTask>),
}

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

struct Shared {
    /// ND-range invitations; served before tasks so a launch gets its helpers soon.
    invitations: SegQueue<Arc<dyn Assist>>,
    tasks: SegQueue<Queued>,
    /// Items queued and not yet taken: counted up before an item is pushed and down
    /// after it is popped, so it never undercounts (the idle spin watches it, and a
    /// worker about to park checks it).
    pending: AtomicUsize,
    /// Workers parked (or about to park) on `wake`; changed under `sleep`.
    parked: AtomicUsize,
    /// Workers in their idle spin: each takes the next queued item without being
    /// woken, so queuing wakes parked workers only beyond these.
    spinning: AtomicUsize,
    /// Held only to park a worker and to wake a parked one.
    sleep: Mutex<()>,
    wake: Condvar,
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
    /// Set while a worker runs a task and until that task queues one: the first task
    /// a running task queues (the next command of an in-order queue, released when
    /// this one completes) is left to this worker, which takes it as soon as it
    /// returns, instead of waking a parked one to race it for it.
    static SUCCESSOR_FREE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
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
        invitations: SegQueue::new(),
        tasks: SegQueue::new(),
        pending: AtomicUsize::new(0),
        parked: AtomicUsize::new(0),
        spinning: AtomicUsize::new(0),
        sleep: Mutex::new(()),
        wake: Condvar::new(),
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
    shared
}

/// Queues `task` for a pool worker.
pub fn spawn(task: Task) {
    queue_task(Queued::Boxed(task));
}

/// Queues `task` for a pool worker, which calls its [`SharedTask::run`].
pub fn spawn_shared(task: Arc<dyn SharedTask>) {
    queue_task(Queued::Shared(task));
}

fn queue_task(task: Queued) {
    let shared = pool();
    shared.pending.fetch_add(1, Ordering::SeqCst);
    shared.tasks.push(task);
    if !SUCCESSOR_FREE.with(|f| f.replace(false)) {
        shared.wake_parked(1);
    }
}

/// Asks up to `helpers` workers to join `work`. Invitations that arrive after the
/// work is finished cost the worker one call of `assist` that finds nothing (and
/// keep `work` alive until then).
pub fn invite(work: &Arc<dyn Assist>, helpers: usize) {
    if helpers == 0 {
        return;
    }
    let shared = pool();
    let helpers = helpers.min(shared.workers);
    shared.pending.fetch_add(helpers, Ordering::SeqCst);
    for _ in 0..helpers {
        shared.invitations.push(Arc::clone(work));
    }
    shared.wake_parked(helpers);
}

impl Shared {
    /// Wakes up to `n` parked workers after `n` items were queued.
    ///
    /// No wake-up is lost: a parking worker raises `parked` and then reads `pending`
    /// (both SeqCst, under `sleep`); the queuing thread raised `pending` and then reads
    /// `parked`. One of the two sees the other's write: either the worker finds the
    /// item and does not sleep, or this sees it parked and notifies under `sleep`,
    /// which the worker holds until it waits.
    ///
    /// Spinning workers count as woken: one that stops spinning without having found
    /// the item raises nothing and reads `pending` before it parks (see
    /// [`next_work`]), so it finds the item; one that took an item while others
    /// were queued wakes another.
    fn wake_parked(&self, n: usize) {
        let n = n.saturating_sub(self.spinning.load(Ordering::SeqCst));
        if n == 0 {
            return;
        }
        let parked = self.parked.load(Ordering::SeqCst);
        if parked == 0 {
            return;
        }
        let _sleep = self.sleep.lock();
        for _ in 0..n.min(parked) {
            self.wake.notify_one();
        }
    }

    /// The next queued item, invitations first.
    fn take(&self) -> Option<Work> {
        let work = match self.invitations.pop() {
            Some(inv) => Work::Assist(inv),
            None => Work::Task(self.tasks.pop()?),
        };
        self.pending.fetch_sub(1, Ordering::SeqCst);
        Some(work)
    }
}

enum Work {
    Assist(Arc<dyn Assist>),
    Task(Queued),
}

fn worker_main(shared: &'static Shared) {
    IS_WORKER.with(|w| w.set(true));
    loop {
        let work = next_work(shared);
        let is_task = matches!(work, Work::Task(_));
        SUCCESSOR_FREE.with(|f| f.set(is_task));
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| match work {
            Work::Assist(inv) => inv.assist(),
            Work::Task(Queued::Boxed(task)) => task(),
            Work::Task(Queued::Shared(task)) => task.run(),
        }));
        SUCCESSOR_FREE.with(|f| f.set(false));
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
    shared.spinning.fetch_add(1, Ordering::SeqCst);
    loop {
        if shared.pending.load(Ordering::Acquire) > 0 {
            if let Some(work) = shared.take() {
                shared.spinning.fetch_sub(1, Ordering::SeqCst);
                // Queuing threads counted on this spinner: if more is queued, another
                // worker must come.
                if shared.pending.load(Ordering::SeqCst) > 0 {
                    shared.wake_parked(1);
                }
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
    shared.spinning.fetch_sub(1, Ordering::SeqCst);
    loop {
        if let Some(work) = shared.take() {
            return work;
        }
        let mut sleep = shared.sleep.lock();
        shared.parked.fetch_add(1, Ordering::SeqCst);
        // `pending` may count an item whose push has not landed yet: then loop and
        // take it rather than sleep.
        if shared.pending.load(Ordering::SeqCst) == 0 {
            shared.wake.wait(&mut sleep);
        }
        shared.parked.fetch_sub(1, Ordering::SeqCst);
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
