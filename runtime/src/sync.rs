//! The runtime's locks: std's Mutex and Condvar behind the small interface the
//! runtime uses (no poisoning: a panicking holder leaves the data as it is;
//! `Condvar::wait` takes the guard by reference).
//!
//! Not parking_lot: it parks waiting threads in one process-wide hash table whose
//! buckets hold pointers into the waiting threads' stacks. After `fork()` while other
//! threads were parking or unparking (any busy application), the child, which has
//! only the forking thread, inherits a table with held bucket locks and half-linked
//! queues, and the first lock it contends hangs or crashes (CTS-style fork tests: 1 in
//! 20 children). std's locks keep all their state in the lock's own futex word, so a
//! child only has to care about the locks it actually uses (see [`crate::fork`]).

use std::ops::{Deref, DerefMut};
use std::time::Duration;

/// A mutual-exclusion lock around a `T`.
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized>(std::sync::Mutex<T>);

/// The guard of a locked [`Mutex`]; unlocks when dropped.
pub struct MutexGuard<'a, T: ?Sized> {
    // Always Some, except inside `Condvar::wait` (which takes and puts it back).
    inner: Option<std::sync::MutexGuard<'a, T>>,
}

impl<T> Mutex<T> {
    /// An unlocked mutex holding `value`.
    pub const fn new(value: T) -> Mutex<T> {
        Mutex(std::sync::Mutex::new(value))
    }

    /// The value (the mutex is consumed, so nobody holds it).
    pub fn into_inner(self) -> T {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Locks, waiting for other holders.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        MutexGuard {
            inner: Some(self.0.lock().unwrap_or_else(|e| e.into_inner())),
        }
    }

    /// The value through an exclusive reference (no locking needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.0.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.inner.as_deref().expect("a guard holds its lock")
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.inner.as_deref_mut().expect("a guard holds its lock")
    }
}

/// A condition variable to wait on with a [`MutexGuard`].
#[derive(Debug, Default)]
pub struct Condvar(std::sync::Condvar);

impl Condvar {
    /// A condition variable nobody waits on.
    pub const fn new() -> Condvar {
        Condvar(std::sync::Condvar::new())
    }

    /// Wakes one waiter.
    pub fn notify_one(&self) {
        self.0.notify_one();
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.0.notify_all();
    }

    /// Unlocks `guard`, waits for a notification (or a spurious wake-up) and locks
    /// again.
    pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        let inner = guard.inner.take().expect("a guard holds its lock");
        guard.inner = Some(self.0.wait(inner).unwrap_or_else(|e| e.into_inner()));
    }

    /// [`Condvar::wait`] for at most `timeout`; true if it timed out.
    pub fn wait_for<T>(&self, guard: &mut MutexGuard<'_, T>, timeout: Duration) -> bool {
        let inner = guard.inner.take().expect("a guard holds its lock");
        let (inner, result) = self
            .0
            .wait_timeout(inner, timeout)
            .unwrap_or_else(|e| e.into_inner());
        guard.inner = Some(inner);
        result.timed_out()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_waiter_wakes_with_the_lock_held() {
        let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
        let other = Arc::clone(&pair);
        let t = std::thread::spawn(move || {
            let (m, cv) = &*other;
            *m.lock() = 7;
            cv.notify_all();
        });
        let (m, cv) = &*pair;
        let mut g = m.lock();
        while *g != 7 {
            cv.wait(&mut g);
        }
        *g += 1;
        drop(g);
        t.join().expect("notifier");
        assert_eq!(*m.lock(), 8);
        assert!(cv.wait_for(&mut m.lock(), Duration::from_millis(1)));
    }

    #[test]
    fn a_panicking_holder_does_not_poison() {
        let m = Arc::new(Mutex::new(1u32));
        let other = Arc::clone(&m);
        let _ = std::thread::spawn(move || {
            let _g = other.lock();
            panic!("holder panics");
        })
        .join();
        assert_eq!(*m.lock(), 1);
    }
}
