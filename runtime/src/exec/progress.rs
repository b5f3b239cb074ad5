//! The hand-out and completion tracking shared by every parallel job: items
//! `0..total` are claimed in chunks with one compare-exchange (no lock), finished
//! items are counted, and the thread that finishes the last one wakes the waiter.
//! Knows nothing of what an item is.
//!
//! Chunks are guided: at most a fixed share of the items ([`CHUNKS_PER_WORKER`] per
//! worker), and toward the end at most the remaining items over twice the workers,
//! down to one item. The last chunks are then small, so no thread runs a big one
//! alone while the others are done: a launch of 32 heavy work-groups on 2 threads
//! (clbench `nbody`) used to end with one thread running a 2-group chunk alone. On
//! many cores the number of claims stays about `workers * (CHUNKS_PER_WORKER +
//! 2 ln(total / workers))`, so the shared counter is not contended.

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
    /// Twice the number of workers: the tail's chunks are the remaining items over it.
    tail_divisor: usize,
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
            tail_divisor: 2 * workers.max(1),
            next: CacheLine(AtomicUsize::new(0)),
            done: CacheLine(AtomicUsize::new(0)),
            finished: Mutex::new(total == 0),
            finished_cv: Condvar::new(),
        }
    }

    /// Number of full-size chunks the items make (the tail is handed out in more,
    /// smaller ones): how many threads can usefully share them.
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
        self.claim_at_most(usize::MAX)
    }

    /// Claims up to `max` items (at most one guided chunk); None when every item is
    /// claimed.
    pub fn claim_at_most(&self, max: usize) -> Option<Range<usize>> {
        let mut start = self.next.0.load(Ordering::Relaxed);
        loop {
            if start >= self.total {
                return None;
            }
            let guided = (self.total - start).div_ceil(self.tail_divisor);
            let n = max.min(self.chunk).min(guided).max(1);
            match self.next.0.compare_exchange_weak(
                start,
                start + n,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(start..start + n),
                Err(now) => start = now,
            }
        }
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

    /// The chunks shrink toward the end: none is larger than the remaining items over
    /// twice the workers, and the last ones are single items, so a thread that takes
    /// the last big chunk does not leave the others idle for long.
    #[test]
    fn tail_chunks_are_small() {
        for (total, workers) in [(32, 2), (1000, 2), (4096, 2), (100_000, 64)] {
            let p = Progress::new(total, workers);
            let mut sizes = Vec::new();
            let mut remaining = total;
            while let Some(r) = p.claim() {
                assert!(r.len() <= remaining.div_ceil(2 * workers), "total {total}");
                remaining -= r.len();
                sizes.push(r.len());
                p.complete(r.len());
            }
            assert_eq!(remaining, 0);
            assert_eq!(sizes.last(), Some(&1), "total {total}: {sizes:?}");
            // Not many more claims than the fixed chunks: the hand-out stays cheap.
            assert!(
                sizes.len() <= p.chunks() + 2 * workers * (1 + (total as f64).ln() as usize),
                "total {total}: {} claims",
                sizes.len()
            );
            p.wait();
        }
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
            assert!(chunks >= p.chunks());
            assert!(p.all_claimed());
            assert_eq!(p.unclaimed_chunks(), 0);
            p.wait();
        }
    }
}
