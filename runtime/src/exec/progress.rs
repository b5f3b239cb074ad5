//! The hand-out and completion tracking shared by every parallel job: items
//! `0..total` are claimed in chunks with one `fetch_add` (no lock), finished items
//! are counted, and the thread that finishes the last one wakes the waiter.
//! Knows nothing of what an item is.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};

/// How long a waiter whose own chunks are done spins for the others to finish
/// theirs before it sleeps.
const COMPLETION_SPIN: Duration = Duration::from_micros(30);

/// Chunks per worker the hand-out aims for: enough for load balance, few enough that
/// the shared counter is not contended.
pub const CHUNKS_PER_WORKER: usize = 8;

/// A value alone on its cache line(s), so a hot counter does not slow down reads of
/// the job's read-only fields on other cores.
#[repr(align(128))]
struct CacheLine<T>(T);

/// Claiming and completing `total` items in chunks.
pub struct Progress {
    total: usize,
    chunk: usize,
    next: CacheLine<AtomicUsize>,
    done: CacheLine<AtomicUsize>,
    finished: Mutex<bool>,
    finished_cv: Condvar,
}

impl Progress {
    /// `total` items (at most `usize::MAX / 4`), chunked for `workers` threads.
    pub fn new(total: usize, workers: usize) -> Progress {
        let chunk = (total / (workers.max(1) * CHUNKS_PER_WORKER)).max(1);
        Progress {
            total,
            chunk,
            next: CacheLine(AtomicUsize::new(0)),
            done: CacheLine(AtomicUsize::new(0)),
            finished: Mutex::new(total == 0),
            finished_cv: Condvar::new(),
        }
    }

    /// Number of chunks the items are handed out in.
    pub fn chunks(&self) -> usize {
        self.total.div_ceil(self.chunk)
    }

    /// Chunks not claimed yet.
    pub fn unclaimed_chunks(&self) -> usize {
        let next = self.next.0.load(Ordering::Relaxed).min(self.total);
        (self.total - next).div_ceil(self.chunk)
    }

    /// Whether every item has been claimed (not necessarily finished).
    pub fn all_claimed(&self) -> bool {
        self.next.0.load(Ordering::Relaxed) >= self.total
    }

    /// Claims the next chunk; None when every item is claimed.
    pub fn claim(&self) -> Option<Range<usize>> {
        let start = self.next.0.fetch_add(self.chunk, Ordering::Relaxed);
        (start < self.total).then(|| start..(start + self.chunk).min(self.total))
    }

    /// Claims up to `max` items (at most one chunk); None when every item is claimed.
    pub fn claim_at_most(&self, max: usize) -> Option<Range<usize>> {
        let n = max.clamp(1, self.chunk);
        let start = self.next.0.fetch_add(n, Ordering::Relaxed);
        (start < self.total).then(|| start..(start + n).min(self.total))
    }

    /// Records `items` claimed items as finished (run or skipped).
    pub fn complete(&self, items: usize) {
        let before = self.done.0.fetch_add(items, Ordering::AcqRel);
        if before + items == self.total {
            let mut finished = self.finished.lock();
            *finished = true;
            self.finished_cv.notify_all();
        }
    }

    /// Blocks until every item is finished (a short spin, then sleep). Everything
    /// the finishing threads wrote before [`Progress::complete`] is visible after.
    pub fn wait(&self) {
        let spin_until = Instant::now() + COMPLETION_SPIN;
        while self.done.0.load(Ordering::Acquire) < self.total {
            if Instant::now() >= spin_until {
                let mut finished = self.finished.lock();
                while !*finished {
                    self.finished_cv.wait(&mut finished);
                }
                return;
            }
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_claims_cover_every_item_once() {
        let p = Progress::new(1000, 2);
        let mut seen = vec![0u8; 1000];
        let mut size = 1;
        while let Some(r) = p.claim_at_most(size) {
            assert!(r.len() <= size);
            for i in r.clone() {
                seen[i] += 1;
            }
            p.complete(r.len());
            size *= 2;
        }
        assert!(seen.iter().all(|&n| n == 1));
        p.wait();
    }

    #[test]
    fn claims_cover_every_item_once() {
        for (total, workers) in [(0, 2), (1, 2), (7, 2), (1000, 2), (1000, 16), (5, 1)] {
            let p = Progress::new(total, workers);
            let mut seen = vec![0u8; total];
            let mut chunks = 0;
            assert_eq!(p.unclaimed_chunks(), p.chunks());
            while let Some(r) = p.claim() {
                chunks += 1;
                for i in r.clone() {
                    seen[i] += 1;
                }
                p.complete(r.len());
            }
            assert!(seen.iter().all(|&n| n == 1), "total {total}");
            assert_eq!(chunks, p.chunks());
            assert!(p.all_claimed());
            assert_eq!(p.unclaimed_chunks(), 0);
            p.wait();
        }
    }
}
