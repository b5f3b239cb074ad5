//! `parallel_for`: a scoped parallel loop on the pool for runtime work that is not a
//! kernel (compiling several kernels, large copies and fills). The caller takes items
//! too and returns only when every item has run, so the closure may borrow from the
//! caller's stack. A panic in an item is re-raised on the caller after the loop.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::sync::Mutex;

use super::pool::{self, Assist};
use super::progress::Progress;

/// The closure with its lifetime erased; see the SAFETY comment in [`parallel_for`].
type ErasedBody = *const (dyn Fn(usize) + Sync + 'static);

struct ForJob {
    body: ErasedBody,
    progress: Progress,
    aborted: AtomicBool,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `body` points at a `Sync` closure, and it is only called for items claimed
// before the owning `parallel_for` call returned (see there).
unsafe impl Send for ForJob {}
// SAFETY: as above; all other fields are thread-safe.
unsafe impl Sync for ForJob {}

impl ForJob {
    fn run(&self) {
        while let Some(items) = self.progress.claim() {
            if !self.aborted.load(Ordering::Relaxed) {
                // SAFETY: an item was claimed, so `parallel_for` has not returned yet
                // (it waits for every claimed item to complete): the closure is alive.
                let body = unsafe { &*self.body };
                let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                    for i in items.clone() {
                        body(i);
                    }
                }));
                if let Err(payload) = outcome {
                    self.aborted.store(true, Ordering::Relaxed);
                    self.panic.lock().get_or_insert(payload);
                }
            }
            self.progress.complete(items.len());
        }
    }
}

impl Assist for ForJob {
    fn assist(&self) {
        self.run();
    }
}

/// Calls `body(i)` for every `i` in `0..count`, spread over the pool and the calling
/// thread; returns when all calls have returned. Items are handed out in chunks, in
/// no particular order. If a call panics, the remaining items are skipped and the
/// panic is resumed on the caller.
pub fn parallel_for(count: usize, body: &(dyn Fn(usize) + Sync)) {
    if count == 0 {
        return;
    }
    let workers = pool::num_workers();
    if count == 1 || workers == 1 {
        (0..count).for_each(body);
        return;
    }
    // SAFETY: only the lifetime is changed. The job outlives this call only as an
    // inert `Arc` in pool queues: `body` is dereferenced only after claiming an item,
    // and every item is claimed and completed before `progress.wait()` returns below.
    let body: ErasedBody =
        unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), ErasedBody>(body) };
    let job = Arc::new(ForJob {
        body,
        progress: Progress::new(count, workers),
        aborted: AtomicBool::new(false),
        panic: Mutex::new(None),
    });
    let helpers = (workers - 1).min(job.progress.chunks() - 1);
    let shared: Arc<dyn Assist> = job.clone();
    pool::invite(&shared, helpers);
    job.run();
    job.progress.wait();
    let payload = job.panic.lock().take();
    if let Some(payload) = payload {
        panic::resume_unwind(payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_item_runs_once_and_borrows_work() {
        for count in [0usize, 1, 2, 9, 1000, 100_003] {
            let hits: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
            parallel_for(count, &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "count {count}"
            );
        }
    }

    #[test]
    fn results_written_by_items_are_visible() {
        let out: Vec<Mutex<u64>> = (0..500).map(|_| Mutex::new(0)).collect();
        parallel_for(out.len(), &|i| *out[i].lock() = (i as u64) * 3);
        assert!(out
            .iter()
            .enumerate()
            .all(|(i, v)| *v.lock() == i as u64 * 3));
    }

    #[test]
    fn a_panicking_item_reaches_the_caller() {
        let r = panic::catch_unwind(|| parallel_for(64, &|i| assert!(i != 40, "item forty")));
        let payload = r.expect_err("the panic is resumed");
        assert!(pool::panic_message(payload.as_ref()).contains("item forty"));
        // The pool still works afterwards.
        let n = AtomicUsize::new(0);
        parallel_for(64, &|_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 64);
    }

    #[test]
    fn nested_in_a_pool_task() {
        let (tx, rx) = std::sync::mpsc::channel();
        pool::spawn(Box::new(move || {
            let n = AtomicUsize::new(0);
            parallel_for(100, &|_| {
                n.fetch_add(1, Ordering::Relaxed);
            });
            let _ = tx.send(n.load(Ordering::Relaxed));
        }));
        assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(20)), Ok(100));
    }
}
