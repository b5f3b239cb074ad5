//! Events: the status of one command (or a user event), profiling timestamps, and
//! what runs when the status changes.
//!
//! Status changes only move forward (`CL_QUEUED` > `CL_SUBMITTED` > `CL_RUNNING` >
//! `CL_COMPLETE`, or a negative error that also ends the event). Application callbacks
//! and internal completion hooks (how dependent commands learn they may start) run
//! after the lock is released, on the thread that changed the status.
//!
//! Waiting ([`Event::wait`]) first helps: a command event's queue runs its ready
//! commands on the waiting thread ([`CommandQueue::help_until`]), then the waiter spins
//! for a short, bounded time and only then sleeps, so that waiting for a short
//! command costs no sleep/wake-up round trip.
//!
//! Events know their queue only through [`CommandQueue`], which `queue.rs`
//! implements: the dependency runs one way (queue -> event).

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};
use opencl_sys::*;

use crate::callback::{Callback, EventNotifyFn};
use crate::context::Context;
use crate::object::{ApiHeader, ApiObject, ObjectKind};
use crate::platform::now_ns;

/// What a command event needs of its queue (implemented by `queue::Queue`).
pub trait CommandQueue: Send + Sync {
    /// Runs the queue's ready commands on this thread until `event` is finished.
    fn help_until(&self, event: &Event);
    /// Hands queued commands to the workers (`clFlush`).
    fn flush(&self);
    /// Whether commands record profiling timestamps.
    fn profiling(&self) -> bool;
    /// The queue's context.
    fn context(&self) -> &Arc<Context>;
    /// The concrete queue, for the API layer (`CL_EVENT_COMMAND_QUEUE`).
    fn as_any(&self) -> &dyn Any;
    /// The concrete queue as a shared reference.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

/// Something to run once an event is complete (or failed); gets the final status.
pub type CompletionHook = Box<dyn FnOnce(cl_int) + Send>;

/// A command that waits for events to finish: told of each by a call, without a
/// boxed closure per dependency (the enqueue path of an in-order queue).
pub trait Dependent: Send + Sync {
    /// One of the events it waits for finished with `status`.
    fn dependency_finished(self: Arc<Self>, status: cl_int);
}

/// What runs when an event finishes.
enum Hook {
    Call(CompletionHook),
    Dependent(Arc<dyn Dependent>),
}

impl Hook {
    fn run(self, status: cl_int) {
        match self {
            Hook::Call(f) => f(status),
            Hook::Dependent(d) => d.dependency_finished(status),
        }
    }
}

struct EventState {
    status: cl_int,
    callbacks: Vec<(cl_int, Callback<EventNotifyFn>)>,
    /// The first hook (usually the only one: the next command of an in-order queue)
    /// without a Vec allocation.
    first_hook: Option<Hook>,
    more_hooks: Vec<Hook>,
}

/// A command's event or a user event.
#[repr(C)]
pub struct Event {
    header: ApiHeader,
    /// The context (an implicit reference).
    pub context: Arc<Context>,
    /// The queue of a command event (an implicit reference); `None` for user events.
    pub queue: Option<Arc<dyn CommandQueue>>,
    /// `CL_EVENT_COMMAND_TYPE`.
    pub command_type: cl_command_type,
    state: Mutex<EventState>,
    /// `state.status`, readable without the lock (written under it).
    status_now: AtomicI32,
    done: Condvar,
    /// Profiling timestamps: queued, submitted, started, ended (ns, CLOCK_MONOTONIC).
    times: [AtomicU64; 4],
    /// Whether the timestamps are recorded (command events of profiling queues; the
    /// others stay 0 and save reading the clock).
    profiled: bool,
}

impl ApiObject for Event {
    const KIND: ObjectKind = ObjectKind::Event;
    fn header(&self) -> &ApiHeader {
        &self.header
    }
}

/// How long a waiter spins on an unfinished event (after helping with its queue's
/// ready commands) before it sleeps: long enough to catch a short command finishing
/// on a pool worker, short enough not to steal much time from long ones.
pub const WAIT_SPIN: Duration = Duration::from_micros(30);

/// Which timestamp (`CL_PROFILING_COMMAND_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timestamp {
    Queued = 0,
    Submitted = 1,
    Started = 2,
    Ended = 3,
}

impl Event {
    /// A command event in state `CL_QUEUED`.
    pub fn new_command(queue: Arc<dyn CommandQueue>, command_type: cl_command_type) -> Arc<Event> {
        Self::new(
            queue.context().clone(),
            Some(queue),
            command_type,
            CL_QUEUED,
        )
    }

    /// `clCreateUserEvent`: status `CL_SUBMITTED` until the application sets it.
    pub fn new_user(context: Arc<Context>) -> Arc<Event> {
        Self::new(context, None, CL_COMMAND_USER, CL_SUBMITTED)
    }

    fn new(
        context: Arc<Context>,
        queue: Option<Arc<dyn CommandQueue>>,
        command_type: cl_command_type,
        status: cl_int,
    ) -> Arc<Event> {
        let profiled = queue.as_ref().is_some_and(|q| q.profiling());
        let now = if profiled { now_ns() } else { 0 };
        Arc::new(Event {
            header: ApiHeader::new(ObjectKind::Event),
            context,
            queue,
            command_type,
            state: Mutex::new(EventState {
                status,
                callbacks: Vec::new(),
                first_hook: None,
                more_hooks: Vec::new(),
            }),
            status_now: AtomicI32::new(status),
            done: Condvar::new(),
            times: [
                AtomicU64::new(now),
                AtomicU64::new(now),
                AtomicU64::new(now),
                AtomicU64::new(now),
            ],
            profiled,
        })
    }

    /// `CL_EVENT_COMMAND_EXECUTION_STATUS`.
    pub fn status(&self) -> cl_int {
        self.status_now.load(Ordering::Acquire)
    }

    /// Whether the event reached `CL_COMPLETE` or an error.
    pub fn is_finished(&self) -> bool {
        self.status() <= CL_COMPLETE
    }

    /// A profiling timestamp.
    pub fn time(&self, which: Timestamp) -> u64 {
        self.times[which as usize].load(Ordering::Acquire)
    }

    /// Moves the status forward to `status` (ignored if it is not a step forward),
    /// then runs the callbacks and hooks it triggers.
    pub fn set_status(&self, status: cl_int) {
        let now = if self.profiled { now_ns() } else { 0 };
        let (callbacks, hooks) = {
            let mut st = self.state.lock();
            if st.status <= CL_COMPLETE || status >= st.status {
                return;
            }
            st.status = status;
            match status {
                CL_SUBMITTED => self.times[1].store(now, Ordering::Release),
                CL_RUNNING => self.times[2].store(now, Ordering::Release),
                _ => {
                    // Commands that skip states still get ordered timestamps.
                    let mut prev = self.times[0].load(Ordering::Acquire);
                    for t in &self.times[1..3] {
                        prev = prev.max(t.load(Ordering::Acquire));
                        t.store(prev, Ordering::Release);
                    }
                    self.times[3].store(now.max(prev), Ordering::Release);
                }
            }
            // Published after the timestamps: whoever sees the status sees them too.
            self.status_now.store(status, Ordering::Release);
            let fire: Vec<_> = if st.callbacks.is_empty() {
                Vec::new()
            } else {
                let (fire, keep) = std::mem::take(&mut st.callbacks)
                    .into_iter()
                    .partition(|(trigger, _)| status <= *trigger);
                st.callbacks = keep;
                fire
            };
            let hooks = if status <= CL_COMPLETE {
                (st.first_hook.take(), std::mem::take(&mut st.more_hooks))
            } else {
                (None, Vec::new())
            };
            (fire, hooks)
        };
        if status <= CL_COMPLETE {
            self.done.notify_all();
        }
        // Dependent commands first: an application callback may block.
        let (first, more) = hooks;
        for hook in first.into_iter().chain(more) {
            hook.run(status);
        }
        let handle = (self as *const Event).cast_mut().cast::<c_void>();
        for (_, cb) in callbacks {
            // SAFETY: the application registered `func` for (event, status, user_data).
            unsafe { (cb.func)(handle, status, cb.user_data) };
        }
    }

    /// Marks the command as started (queued -> submitted -> running).
    pub fn mark_submitted(&self) {
        self.set_status(CL_SUBMITTED);
    }

    /// `clSetEventCallback`: `trigger` is `CL_SUBMITTED`, `CL_RUNNING` or `CL_COMPLETE`.
    /// Called at once (on this thread) if the event already passed that state.
    pub fn add_callback(&self, trigger: cl_int, cb: Callback<EventNotifyFn>) {
        let status = {
            let mut st = self.state.lock();
            if st.status > trigger {
                st.callbacks.push((trigger, cb));
                return;
            }
            st.status
        };
        let reported = if status < 0 { status } else { trigger };
        let handle = (self as *const Event).cast_mut().cast::<c_void>();
        // SAFETY: the application registered `func` for (event, status, user_data).
        unsafe { (cb.func)(handle, reported, cb.user_data) };
    }

    /// Runs `hook` once the event is finished (at once if it already is).
    pub fn on_finished(&self, hook: CompletionHook) {
        self.add_hook(Hook::Call(hook));
    }

    /// Tells `dependent` once the event is finished (at once if it already is).
    pub fn notify_when_finished(&self, dependent: Arc<dyn Dependent>) {
        self.add_hook(Hook::Dependent(dependent));
    }

    fn add_hook(&self, hook: Hook) {
        let status = {
            let mut st = self.state.lock();
            if st.status > CL_COMPLETE {
                if st.first_hook.is_none() {
                    st.first_hook = Some(hook);
                } else {
                    st.more_hooks.push(hook);
                }
                return;
            }
            st.status
        };
        hook.run(status);
    }

    /// Blocks until the event is finished; returns the final status (negative on error).
    /// A command event's queue runs ready commands on this thread meanwhile; then the
    /// thread spins for at most [`WAIT_SPIN`] before it sleeps.
    pub fn wait(&self) -> cl_int {
        if self.is_finished() {
            return self.status();
        }
        match &self.queue {
            Some(queue) => queue.help_until(self),
            None => {
                self.spin_until_finished(Instant::now() + WAIT_SPIN);
            }
        }
        self.wait_parked()
    }

    /// Spins until the event is finished or `deadline` passes; returns whether it is
    /// finished.
    pub fn spin_until_finished(&self, deadline: Instant) -> bool {
        loop {
            for _ in 0..32 {
                if self.is_finished() {
                    return true;
                }
                std::hint::spin_loop();
            }
            if Instant::now() >= deadline {
                return self.is_finished();
            }
        }
    }

    /// Sleeps until the event is finished; returns the final status.
    fn wait_parked(&self) -> cl_int {
        let mut st = self.state.lock();
        while st.status > CL_COMPLETE {
            self.done.wait(&mut st);
        }
        st.status
    }
}

/// Waits for every event; `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` if any failed.
pub fn wait_all(events: &[Arc<Event>]) -> Result<(), cl_int> {
    let mut failed = false;
    for e in events {
        if let Some(q) = &e.queue {
            q.flush();
        }
        failed |= e.wait() < 0;
    }
    if failed {
        Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    } else {
        Ok(())
    }
}
