//! OpenCL pipes: the storage layout of a pipe memory object and the run-time helpers
//! generated code calls for every pipe built-in (`lower::pipe` emits the calls).
//!
//! A pipe is one allocation: a [`Header`] (packet size, capacity C, and two
//! monotonic 64-bit counters on their own cache lines: `write_pos`, the positions
//! reserved by writers so far, and `read_pos`, those reserved by readers), then one
//! 64-bit sequence word per slot, then the ring of C packets.
//!
//! Concurrency (lock-free, a bounded multi-producer multi-consumer ring in the
//! style of Vyukov's queue, generalised to reservations of n consecutive
//! positions): position p lives in slot p mod C, and that slot's sequence word says
//! which phase position p is in:
//! - `seq == p`: free, a writer may reserve p;
//! - `seq == p + 1`: written and committed, a reader may reserve p;
//! - `seq == p + C`: read and committed, i.e. free for position p + C.
//!
//! A writer reserving n packets reads `write_pos` = w, checks that the slots of
//! w .. w+n are all free for exactly those positions (a sequence word behind means
//! the pipe is full: the reservation fails; one ahead means `w` is stale: retry),
//! then claims the range by a compare-exchange of `write_pos` from w to w+n. No
//! other writer can claim those positions after that, and a slot's word can only
//! move on by a commit of a reservation that owns it, so the check stays true.
//! The writer copies its packets in, then commits each slot with a release store
//! of p + 1 - in any order, so commits never wait for one another (a reservation
//! committed late only delays readers of its own positions: a reader sees the pipe
//! as empty there, which the spec allows, as a pipe's content is immediately
//! stale). Readers do the same with `read_pos`, requiring `seq == p + 1` (acquire:
//! the packet bytes written before the writer's release are visible), and commit
//! with p + C (release: the next writer of the slot sees the read finished).
//! Work-items of any work-group, thread or kernel may use a pipe at once.
//!
//! A reservation id (`reserve_id_t`, 8 bytes) packs the first position (mod 2^40)
//! and the count n (< 2^24): `start << 24 | n`; 0 is the invalid id. Positions and
//! sequence words are compared modulo 2^40, which is unambiguous because a slot is
//! never more than one round (C <= 2^32 positions) behind the counters.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes before the first sequence word.
const HEADER_BYTES: usize = 192;
/// Alignment of the packet ring (and of the whole allocation).
const RING_ALIGN: usize = 128;
/// Bits of a position kept in a reservation id.
const POS_BITS: u32 = 40;
const POS_MASK: u64 = (1 << POS_BITS) - 1;
/// Bits of the packet count of a reservation id.
const COUNT_BITS: u32 = 24;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// The start of a pipe's storage.
#[repr(C, align(64))]
pub struct Header {
    pub packet_size: u32,
    pub max_packets: u32,
    _pad0: [u8; 56],
    write_pos: AtomicU64,
    _pad1: [u8; 56],
    read_pos: AtomicU64,
    _pad2: [u8; 56],
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER_BYTES);

/// Byte offset of the packet ring.
fn ring_offset(max_packets: u32) -> usize {
    (HEADER_BYTES + 8 * max_packets as usize).next_multiple_of(RING_ALIGN)
}

/// Bytes of storage a pipe of `max_packets` packets of `packet_size` bytes needs,
/// None if that overflows.
pub fn storage_bytes(packet_size: u32, max_packets: u32) -> Option<usize> {
    (packet_size as usize)
        .checked_mul(max_packets as usize)?
        .checked_add(ring_offset(max_packets))
}

/// Formats zeroed storage of [`storage_bytes`] bytes as an empty pipe.
///
/// # Safety
/// `p` is valid for writes of `storage_bytes(packet_size, max_packets)` bytes,
/// aligned to 128, and not yet shared with any other thread.
pub unsafe fn init(p: *mut u8, packet_size: u32, max_packets: u32) {
    // SAFETY: the caller guarantees the block is ours, large enough and aligned.
    unsafe {
        let h = p.cast::<Header>();
        (*h).packet_size = packet_size;
        (*h).max_packets = max_packets;
        (*h).write_pos = AtomicU64::new(0);
        (*h).read_pos = AtomicU64::new(0);
        let seq = p.add(HEADER_BYTES).cast::<u64>();
        for i in 0..max_packets as usize {
            seq.add(i).write(i as u64);
        }
    }
}

/// A view of a pipe's storage for the helpers.
struct Pipe<'a> {
    h: &'a Header,
    base: *mut u8,
}

/// Sign of `a - b` modulo 2^40: <0 behind, 0 equal, >0 ahead.
fn diff(a: u64, b: u64) -> i64 {
    ((a.wrapping_sub(b) << (64 - POS_BITS)) as i64) >> (64 - POS_BITS)
}

impl Pipe<'_> {
    /// # Safety
    /// `p` is the storage of a pipe formatted by [`init`] and alive for `'a`.
    unsafe fn at<'a>(p: *mut u8) -> Pipe<'a> {
        // SAFETY: as the caller guarantees.
        Pipe {
            h: unsafe { &*p.cast::<Header>() },
            base: p,
        }
    }

    fn cap(&self) -> u64 {
        u64::from(self.h.max_packets)
    }

    fn seq(&self, pos: u64) -> &AtomicU64 {
        let i = (pos % self.cap()) as usize;
        // SAFETY: slot i < max_packets lies inside the sequence array; the words are
        // only accessed atomically.
        unsafe { &*self.base.add(HEADER_BYTES + 8 * i).cast::<AtomicU64>() }
    }

    fn packet(&self, pos: u64) -> *mut u8 {
        let i = (pos % self.cap()) as usize;
        // SAFETY: slot i < max_packets lies inside the ring.
        unsafe {
            self.base
                .add(ring_offset(self.h.max_packets) + i * self.h.packet_size as usize)
        }
    }

    /// Reserves `n` positions for writing (`write`) or reading; the id or 0.
    fn reserve(&self, n: u32, write: bool) -> u64 {
        let n = u64::from(n);
        if n == 0 || n > self.cap() || n > COUNT_MASK {
            return 0;
        }
        let (counter, phase) = if write {
            (&self.h.write_pos, 0)
        } else {
            (&self.h.read_pos, 1)
        };
        'retry: loop {
            let start = counter.load(Ordering::Acquire);
            for k in 0..n {
                let p = start.wrapping_add(k);
                let d = diff(self.seq(p).load(Ordering::Acquire), p.wrapping_add(phase));
                if d < 0 {
                    // Full (writers) or empty (readers) at this position.
                    return 0;
                }
                if d > 0 {
                    continue 'retry;
                }
            }
            if counter
                .compare_exchange_weak(
                    start,
                    start.wrapping_add(n),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
            {
                return ((start & POS_MASK) << COUNT_BITS) | n;
            }
            std::hint::spin_loop();
        }
    }

    /// Releases the positions of reservation `id` to the other side.
    fn commit(&self, id: u64, write: bool) {
        let (start, n) = (id >> COUNT_BITS, id & COUNT_MASK);
        let next = if write { 1 } else { self.cap() };
        for k in 0..n {
            let p = start.wrapping_add(k);
            self.seq(p)
                .store(p.wrapping_add(next) & POS_MASK, Ordering::Release);
        }
    }

    /// Copies packet `index` of reservation `id` from/to `data`: 0, or -1 when the id
    /// is invalid or the index outside it.
    ///
    /// # Safety
    /// `data` is valid for `size` bytes (read when writing to the pipe, written when
    /// reading).
    unsafe fn access(&self, id: u64, index: u32, data: *mut u8, size: u32, write: bool) -> i32 {
        let n = id & COUNT_MASK;
        if n == 0 || u64::from(index) >= n {
            return -1;
        }
        let slot = self.packet((id >> COUNT_BITS).wrapping_add(u64::from(index)));
        let len = size.min(self.h.packet_size) as usize;
        // SAFETY: the slot is owned by this reservation (module doc); `data` as the
        // caller guarantees; the two never overlap (the ring is the pipe's own).
        unsafe {
            if write {
                std::ptr::copy_nonoverlapping(data, slot, len);
            } else {
                std::ptr::copy_nonoverlapping(slot, data, len);
            }
        }
        0
    }
}

/// `reserve_read_pipe` / `reserve_write_pipe` (and the work-group and sub-group
/// forms, called once per group): a reservation id, 0 if it failed.
///
/// # Safety
/// `pipe` is a pipe's storage (a pipe kernel argument).
pub unsafe extern "C" fn cranecl_pipe_reserve(pipe: *mut u8, n: u32, write: u32) -> u64 {
    // SAFETY: as the caller guarantees.
    unsafe { Pipe::at(pipe) }.reserve(n, write != 0)
}

/// `commit_read_pipe` / `commit_write_pipe`; an invalid id does nothing.
///
/// # Safety
/// `pipe` is a pipe's storage; `id` was returned by [`cranecl_pipe_reserve`] on it
/// with the same `write` and is committed once.
pub unsafe extern "C" fn cranecl_pipe_commit(pipe: *mut u8, id: u64, write: u32) {
    // SAFETY: as the caller guarantees.
    unsafe { Pipe::at(pipe) }.commit(id, write != 0)
}

/// `read_pipe(p, rid, index, ptr)` / `write_pipe(p, rid, index, ptr)`: 0 or -1.
///
/// # Safety
/// `pipe` is a pipe's storage; `data` is valid for `size` bytes.
pub unsafe extern "C" fn cranecl_pipe_reserved_access(
    pipe: *mut u8,
    id: u64,
    index: u32,
    data: *mut u8,
    size: u32,
    write: u32,
) -> i32 {
    // SAFETY: as the caller guarantees.
    unsafe { Pipe::at(pipe).access(id, index, data, size, write != 0) }
}

/// `read_pipe(p, ptr)` / `write_pipe(p, ptr)`: one packet; 0, or -1 when the pipe is
/// empty (read) or full (write).
///
/// # Safety
/// `pipe` is a pipe's storage; `data` is valid for `size` bytes.
pub unsafe extern "C" fn cranecl_pipe_access(
    pipe: *mut u8,
    data: *mut u8,
    size: u32,
    write: u32,
) -> i32 {
    // SAFETY: as the caller guarantees.
    let p = unsafe { Pipe::at(pipe) };
    let w = write != 0;
    let id = p.reserve(1, w);
    if id == 0 {
        return -1;
    }
    // SAFETY: as the caller guarantees; index 0 of a one-packet reservation.
    unsafe { p.access(id, 0, data, size, w) };
    p.commit(id, w);
    0
}

/// `get_pipe_num_packets`: packets written and not yet read (a snapshot).
///
/// # Safety
/// `pipe` is a pipe's storage.
pub unsafe extern "C" fn cranecl_pipe_num_packets(pipe: *mut u8) -> u32 {
    // SAFETY: as the caller guarantees.
    let p = unsafe { Pipe::at(pipe) };
    let r = p.h.read_pos.load(Ordering::Acquire);
    let w = p.h.write_pos.load(Ordering::Acquire);
    w.saturating_sub(r).min(p.cap()) as u32
}

/// `get_pipe_max_packets`.
///
/// # Safety
/// `pipe` is a pipe's storage.
pub unsafe extern "C" fn cranecl_pipe_max_packets(pipe: *mut u8) -> u32 {
    // SAFETY: as the caller guarantees.
    unsafe { Pipe::at(pipe) }.h.max_packets
}

/// The helpers by symbol name, for the JIT.
pub(crate) fn symbols() -> Vec<(&'static str, *const u8)> {
    vec![
        ("cranecl_pipe_reserve", cranecl_pipe_reserve as *const u8),
        ("cranecl_pipe_commit", cranecl_pipe_commit as *const u8),
        (
            "cranecl_pipe_reserved_access",
            cranecl_pipe_reserved_access as *const u8,
        ),
        ("cranecl_pipe_access", cranecl_pipe_access as *const u8),
        (
            "cranecl_pipe_num_packets",
            cranecl_pipe_num_packets as *const u8,
        ),
        (
            "cranecl_pipe_max_packets",
            cranecl_pipe_max_packets as *const u8,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipe in an aligned heap block.
    struct Owned {
        p: *mut u8,
        layout: std::alloc::Layout,
    }
    impl Owned {
        fn new(size: u32, n: u32) -> Owned {
            let bytes = storage_bytes(size, n).expect("size");
            let layout = std::alloc::Layout::from_size_align(bytes, RING_ALIGN).expect("layout");
            // SAFETY: non-zero size.
            let p = unsafe { std::alloc::alloc_zeroed(layout) };
            // SAFETY: fresh block of the right size.
            unsafe { init(p, size, n) };
            Owned { p, layout }
        }
    }
    impl Drop for Owned {
        fn drop(&mut self) {
            // SAFETY: allocated with this layout.
            unsafe { std::alloc::dealloc(self.p, self.layout) };
        }
    }

    #[test]
    fn fill_drain_and_reservations() {
        let o = Owned::new(4, 3);
        let p = o.p;
        // SAFETY: a live pipe of 4-byte packets; the data pointers are locals.
        unsafe {
            for v in 1..=3i32 {
                let mut x = v;
                assert_eq!(cranecl_pipe_access(p, (&raw mut x).cast(), 4, 1), 0);
            }
            let mut x = 9i32;
            assert_eq!(
                cranecl_pipe_access(p, (&raw mut x).cast(), 4, 1),
                -1,
                "full"
            );
            assert_eq!(cranecl_pipe_num_packets(p), 3);
            assert_eq!(cranecl_pipe_reserve(p, 4, 0), 0, "more than capacity");
            let r = cranecl_pipe_reserve(p, 2, 0);
            assert_ne!(r, 0);
            let mut got = [0i32; 2];
            for (i, g) in got.iter_mut().enumerate() {
                assert_eq!(
                    cranecl_pipe_reserved_access(p, r, i as u32, (g as *mut i32).cast(), 4, 0),
                    0
                );
            }
            assert_eq!(
                cranecl_pipe_reserved_access(p, r, 2, got.as_mut_ptr().cast(), 4, 0),
                -1
            );
            assert_eq!(got, [1, 2]);
            // Not yet committed: the slots are not free for writers.
            assert_eq!(cranecl_pipe_reserve(p, 1, 1), 0);
            cranecl_pipe_commit(p, r, 0);
            let w = cranecl_pipe_reserve(p, 2, 1);
            assert_ne!(w, 0);
            // Reserved but uncommitted writes are invisible to readers past pos 2.
            let mut y = 0i32;
            assert_eq!(cranecl_pipe_access(p, (&raw mut y).cast(), 4, 0), 0);
            assert_eq!(y, 3);
            assert_eq!(
                cranecl_pipe_access(p, (&raw mut y).cast(), 4, 0),
                -1,
                "uncommitted"
            );
            for (i, v) in [7i32, 8].iter().enumerate() {
                let mut v = *v;
                assert_eq!(
                    cranecl_pipe_reserved_access(p, w, i as u32, (&raw mut v).cast(), 4, 1),
                    0
                );
            }
            cranecl_pipe_commit(p, w, 1);
            for want in [7, 8] {
                assert_eq!(cranecl_pipe_access(p, (&raw mut y).cast(), 4, 0), 0);
                assert_eq!(y, want);
            }
            assert_eq!(cranecl_pipe_num_packets(p), 0);
            assert_eq!(cranecl_pipe_max_packets(p), 3);
        }
    }

    #[test]
    fn concurrent_producers_and_consumers_keep_the_multiset() {
        const PER: u64 = 20_000;
        let o = Owned::new(8, 64);
        let addr = o.p as usize;
        let sum = std::sync::Arc::new(AtomicU64::new(0));
        let count = std::sync::Arc::new(AtomicU64::new(0));
        let mut hs = Vec::new();
        for t in 0..3u64 {
            hs.push(std::thread::spawn(move || {
                for i in 0..PER {
                    let mut v = t * PER + i + 1;
                    // SAFETY: the pipe outlives the threads (joined below).
                    while unsafe { cranecl_pipe_access(addr as *mut u8, (&raw mut v).cast(), 8, 1) }
                        != 0
                    {
                        std::hint::spin_loop();
                    }
                }
            }));
        }
        for _ in 0..3 {
            let (sum, count) = (sum.clone(), count.clone());
            hs.push(std::thread::spawn(move || {
                while count.load(Ordering::Acquire) < 3 * PER {
                    let r = unsafe { cranecl_pipe_reserve(addr as *mut u8, 2, 0) };
                    if r == 0 {
                        let mut v = 0u64;
                        // SAFETY: as above.
                        if unsafe {
                            cranecl_pipe_access(addr as *mut u8, (&raw mut v).cast(), 8, 0)
                        } == 0
                        {
                            sum.fetch_add(v, Ordering::AcqRel);
                            count.fetch_add(1, Ordering::AcqRel);
                        }
                        continue;
                    }
                    for i in 0..2 {
                        let mut v = 0u64;
                        // SAFETY: as above.
                        unsafe {
                            cranecl_pipe_reserved_access(
                                addr as *mut u8,
                                r,
                                i,
                                (&raw mut v).cast(),
                                8,
                                0,
                            )
                        };
                        sum.fetch_add(v, Ordering::AcqRel);
                        count.fetch_add(1, Ordering::AcqRel);
                    }
                    // SAFETY: as above.
                    unsafe { cranecl_pipe_commit(addr as *mut u8, r, 0) };
                }
            }));
        }
        for h in hs {
            h.join().expect("thread");
        }
        let n = 3 * PER;
        assert_eq!(count.load(Ordering::Acquire), n);
        assert_eq!(sum.load(Ordering::Acquire), n * (n + 1) / 2);
    }
}
