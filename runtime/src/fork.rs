//! What the driver does around the application's `fork()`, so that a child can use
//! OpenCL while the parent's driver threads were busy (Python's multiprocessing with
//! the `fork` start method, servers that fork workers).
//!
//! A child starts with one thread, the one that forked, and a copy of every lock as
//! it was at that instant: a lock another thread held then stays locked forever in the
//! child. So, through `pthread_atfork`:
//!
//! - before the fork (in the parent), the forking thread takes every process-wide
//!   lock a child may need (the worker pool's start lock, the build memos, the PCH
//!   cache, the printf buffer pool, the spare buffer mappings) in one fixed order, after finishing the
//!   initialisation of the process-wide singletons, so none is held elsewhere at the
//!   fork; no code path holds two of these locks at once, so this cannot deadlock;
//! - after the fork, parent and child release them;
//! - the child also forgets the parent's worker pool (its threads do not exist there;
//!   a new pool starts on first use).
//!
//! The locks themselves keep their whole state in their futex word ([`crate::sync`]),
//! so nothing else is shared. Objects the parent created stay usable in the child
//! when no parent thread was working on them at the fork (their commands run on the
//! child's pool); a command the parent had in flight never completes in the child.

use std::any::Any;
use std::cell::RefCell;
use std::sync::Once;

thread_local! {
    /// Guards taken before a fork, released after it (by the same thread: the
    /// handlers of one fork run on the forking thread).
    static HELD: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// Registers the fork handlers (once per process; a child inherits them). The ICD
/// calls it on its first entry, before any driver thread starts.
pub fn install() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: the handlers are plain functions that never unwind.
        let rc = unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
        if rc != 0 {
            eprintln!("cranecl: pthread_atfork failed ({rc}): forked children may hang");
        }
        crate::exec::pool::note_fork_handlers(rc == 0);
    });
}

extern "C" fn prepare() {
    // Singletons a child may need, initialised now rather than found half-built.
    let _ = crate::platform::Platform::get();
    let _ = crate::exec::pool::num_workers();
    crate::build::init_for_fork();
    let mut held: Vec<Box<dyn Any>> = Vec::new();
    crate::exec::pool::hold_for_fork(&mut held);
    crate::build::hold_for_fork(&mut held);
    crate::printf::hold_for_fork(&mut held);
    crate::memory::hold_for_fork(&mut held);
    HELD.with(|h| *h.borrow_mut() = held);
}

fn release() {
    let held = HELD.with(|h| std::mem::take(&mut *h.borrow_mut()));
    // Release in the reverse order of taking.
    for guard in held.into_iter().rev() {
        drop(guard);
    }
}

extern "C" fn parent() {
    release();
}

extern "C" fn child() {
    release();
    crate::exec::pool::forget_in_child();
}
