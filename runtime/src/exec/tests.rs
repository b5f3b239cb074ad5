//! Tests of the execution engine with a fake kernel: a plain `extern "C"` Rust function
//! wrapped as a [`CompiledKernel`] that records every work-group it runs and checks
//! what the runtime handed it (ids, sizes, ND-range info, `__local` pointers, scratch).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cranecl_jit::{CompiledKernel, KernelInfo, WorkGroupState};

use super::*;

/// What the fake kernel knows about the launch it is part of; its address is the
/// first 8 bytes of the argument block.
struct Recorder {
    nd: NdRange,
    /// Times each work-group (linear index, dimension 0 fastest) ran.
    runs: Vec<AtomicU32>,
    /// `(argument offset, expected offset from local_mem, size)` per `__local` arg.
    local_args: Vec<(usize, usize, usize)>,
    static_local_bytes: usize,
    scratch_per_sub_group: usize,
    width: usize,
    errors: Mutex<Vec<String>>,
    /// Work-groups whose run took this long (to keep workers busy in tests).
    delay: Duration,
    threads: Mutex<std::collections::HashSet<std::thread::ThreadId>>,
}

impl Recorder {
    fn error(&self, msg: String) {
        if let Ok(mut errors) = self.errors.lock() {
            errors.push(msg);
        }
    }

    fn record(&self, args: *const u8, wg: &WorkGroupState) {
        // SAFETY: the runtime passes a valid NdRangeInfo pointer for the call.
        let info = unsafe { &*wg.ndrange };
        let dims = self.nd.work_dim as usize;
        let mut linear = 0usize;
        let mut stride = 1usize;
        for d in 0..3 {
            let (global, enq, offset) = if d < dims {
                (
                    self.nd.global_size[d],
                    self.nd.local_size[d],
                    self.nd.global_offset[d],
                )
            } else {
                (1, 1, 0)
            };
            let groups = global.div_ceil(enq);
            if info.global_size[d] != global as u64
                || info.enqueued_local_size[d] != enq as u64
                || info.global_offset[d] != offset as u64
                || info.num_groups[d] != groups as u64
            {
                self.error(format!("dimension {d}: wrong NdRangeInfo {info:?}"));
            }
            let g = wg.group_id[d] as usize;
            if g >= groups {
                self.error(format!("group id {:?} out of range", wg.group_id));
                return;
            }
            let expected_local = enq.min(global - g * enq);
            if wg.local_size[d] != expected_local as u64 {
                self.error(format!(
                    "group {:?}: local size {:?}, expected {expected_local} in dimension {d}",
                    wg.group_id, wg.local_size
                ));
            }
            linear += g * stride;
            stride *= groups;
        }
        if info.work_dim != self.nd.work_dim {
            self.error(format!("work_dim {}", info.work_dim));
        }
        if !(wg.local_mem as usize).is_multiple_of(64) || !(wg.scratch as usize).is_multiple_of(64)
        {
            self.error("local or scratch block not 64-byte aligned".into());
        }
        // The __local arguments point where the layout says, and all of the block is
        // writable: fill static variables and every argument.
        let mut local_end = self.static_local_bytes;
        for &(arg_offset, local_offset, size) in &self.local_args {
            // SAFETY: the argument block holds a pointer at `arg_offset`.
            let ptr = unsafe { args.add(arg_offset).cast::<u64>().read_unaligned() } as usize;
            if ptr != wg.local_mem as usize + local_offset {
                self.error(format!(
                    "__local arg at {arg_offset} points {ptr:#x}, expected block+{local_offset}"
                ));
            }
            if !ptr.is_multiple_of(LOCAL_ARG_ALIGN) {
                self.error(format!("__local arg at {arg_offset} not aligned: {ptr:#x}"));
            }
            local_end = local_end.max(local_offset + size);
        }
        // SAFETY: the runtime promises `local_end` bytes of __local memory.
        unsafe { std::ptr::write_bytes(wg.local_mem, 0xA5, local_end) };
        let items: usize = wg.local_size.iter().map(|&l| l as usize).product();
        let scratch = items.div_ceil(self.width) * self.scratch_per_sub_group;
        // SAFETY: the runtime promises KernelInfo::scratch_bytes(local size) bytes.
        unsafe { std::ptr::write_bytes(wg.scratch, 0x5A, scratch) };
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        self.runs[linear].fetch_add(1, Ordering::Relaxed);
        if let Ok(mut threads) = self.threads.lock() {
            threads.insert(std::thread::current().id());
        }
    }
}

unsafe extern "C" fn recording_kernel(args: *const u8, wg: *const WorkGroupState) {
    // SAFETY: the tests put a live `*const Recorder` in the first 8 bytes of the
    // argument block and the runtime passes a valid `wg`.
    unsafe {
        let recorder = &*(args.cast::<u64>().read_unaligned() as usize as *const Recorder);
        recorder.record(args, &*wg);
    }
}

struct Code;

/// Held by tests that occupy pool workers on purpose or need them free, so those
/// tests do not disturb each other.
static POOL_USE: Mutex<()> = Mutex::new(());

fn fake_kernel(
    width: u32,
    static_local_bytes: usize,
    scratch_per_sub_group: usize,
    arg_block_size: usize,
) -> Arc<CompiledKernel> {
    let info = KernelInfo {
        arg_block_size,
        static_local_bytes,
        scratch_bytes_per_sub_group: scratch_per_sub_group,
        has_barriers: scratch_per_sub_group > 0,
        ..KernelInfo::new("recording_kernel", width)
    };
    Arc::new(CompiledKernel::new(info, recording_kernel, Arc::new(Code)))
}

/// Runs one launch of the recording kernel and checks every group ran exactly once
/// with the right ids and sizes.
fn run_and_check(
    nd: NdRange,
    local_sizes: &[usize],
    static_local: usize,
    scratch: usize,
    delay: Duration,
) -> Arc<Recorder> {
    run_on_threads(nd, local_sizes, static_local, scratch, delay, num_workers())
}

/// [`run_and_check`] for a launch that may use at most `threads` threads.
fn run_on_threads(
    nd: NdRange,
    local_sizes: &[usize],
    static_local: usize,
    scratch: usize,
    delay: Duration,
    threads: usize,
) -> Arc<Recorder> {
    let width = 8;
    let dims = nd.work_dim as usize;
    let groups: usize = (0..dims)
        .map(|d| nd.global_size[d].div_ceil(nd.local_size[d]))
        .product();
    let arg_block_size = 8 + 8 * local_sizes.len() + 4;
    let (offsets, _) = local_layout(static_local, local_sizes.iter().copied());
    let local_args: Vec<LocalArg> = local_sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| LocalArg {
            offset: 8 + 8 * i,
            size,
        })
        .collect();
    let recorder = Arc::new(Recorder {
        nd,
        runs: (0..groups).map(|_| AtomicU32::new(0)).collect(),
        local_args: local_args
            .iter()
            .zip(&offsets)
            .map(|(a, &o)| (a.offset, o, a.size))
            .collect(),
        static_local_bytes: static_local,
        scratch_per_sub_group: scratch,
        width,
        errors: Mutex::new(Vec::new()),
        delay,
        threads: Mutex::new(Default::default()),
    });
    let mut args = vec![0u8; arg_block_size];
    args[..8].copy_from_slice(&(Arc::as_ptr(&recorder) as usize as u64).to_ne_bytes());
    let launch = Launch {
        kernel: fake_kernel(width as u32, static_local, scratch, arg_block_size),
        args,
        local_args,
        ndrange: nd,
        threads,
    };
    try_run_ndrange(&launch).expect("launch runs");
    let errors = recorder.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "{nd:?}: {errors:?}");
    for (i, runs) in recorder.runs.iter().enumerate() {
        assert_eq!(
            runs.load(Ordering::Relaxed),
            1,
            "{nd:?}: group {i} ran a wrong number of times"
        );
    }
    recorder
}

/// An ND-range of `work_dim` dimensions (also used by `build::exec_e2e`).
pub(crate) fn nd(
    work_dim: u32,
    offset: [usize; 3],
    global: [usize; 3],
    local: [usize; 3],
) -> NdRange {
    NdRange {
        work_dim,
        global_offset: offset,
        global_size: global,
        local_size: local,
    }
}

#[test]
fn one_dimensional_uniform_and_ragged() {
    run_and_check(
        nd(1, [0; 3], [1024, 1, 1], [64, 1, 1]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
    run_and_check(
        nd(1, [5, 0, 0], [1000, 1, 1], [64, 1, 1]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
    run_and_check(
        nd(1, [0; 3], [1, 1, 1], [1, 1, 1]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
    run_and_check(
        nd(1, [0; 3], [7, 1, 1], [16, 1, 1]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
    // A large count of tiny groups exercises the chunked hand-out.
    run_and_check(
        nd(1, [3, 0, 0], [100_003, 1, 1], [1, 1, 1]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
}

#[test]
fn two_and_three_dimensional_with_offsets() {
    run_and_check(
        nd(2, [1, 2, 0], [64, 48, 1], [16, 4, 1]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
    run_and_check(
        nd(2, [0, 7, 0], [65, 47, 1], [16, 4, 1]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
    run_and_check(
        nd(3, [1, 2, 3], [9, 10, 11], [4, 3, 2]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
    run_and_check(
        nd(3, [0; 3], [32, 32, 32], [8, 4, 2]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
}

#[test]
fn unused_dimensions_are_normalised() {
    // Garbage in unused dimensions must not change the launch.
    run_and_check(
        nd(1, [0, 9, 9], [100, 0, 5], [10, 0, 3]),
        &[],
        0,
        0,
        Duration::ZERO,
    );
}

#[test]
fn local_pointers_and_scratch() {
    let r = run_and_check(
        nd(1, [0; 3], [4096, 1, 1], [128, 1, 1]),
        &[100, 4096, 1],
        200,
        48,
        Duration::ZERO,
    );
    assert_eq!(r.local_args[0].1, 256);
    assert_eq!(r.local_args[1].1, 384);
    assert_eq!(r.local_args[2].1, 384 + 4096);
    // Only __local args, no static variables.
    run_and_check(
        nd(2, [0; 3], [64, 64, 1], [8, 8, 1]),
        &[64],
        0,
        16,
        Duration::ZERO,
    );
    // Growing blocks across launches.
    run_and_check(
        nd(1, [0; 3], [256, 1, 1], [256, 1, 1]),
        &[65536],
        100_000,
        4096,
        Duration::ZERO,
    );
}

#[test]
fn zero_global_size_runs_nothing() {
    let launch = Launch {
        kernel: fake_kernel(8, 0, 0, 8),
        // A null recorder: the kernel would crash if it ran.
        args: vec![0u8; 8],
        local_args: Vec::new(),
        ndrange: nd(2, [0; 3], [16, 0, 1], [4, 4, 1]),
        threads: num_workers(),
    };
    assert_eq!(try_run_ndrange(&launch), Ok(()));
}

#[test]
fn inconsistent_launches_are_refused() {
    let launch = |args: usize, local_args: Vec<LocalArg>, ndrange: NdRange| Launch {
        kernel: fake_kernel(8, 0, 0, 16),
        args: vec![0u8; args],
        local_args,
        ndrange,
        threads: num_workers(),
    };
    let ok_nd = nd(1, [0; 3], [16, 1, 1], [4, 1, 1]);
    for (l, needle) in [
        (launch(8, vec![], ok_nd), "argument block"),
        (
            launch(
                16,
                vec![LocalArg {
                    offset: 12,
                    size: 4,
                }],
                ok_nd,
            ),
            "__local argument slot",
        ),
        (
            launch(16, vec![], nd(4, [0; 3], [16, 1, 1], [4, 1, 1])),
            "work_dim",
        ),
        (
            launch(16, vec![], nd(1, [0; 3], [16, 1, 1], [0, 1, 1])),
            "local size",
        ),
        (
            launch(
                16,
                vec![],
                nd(3, [0; 3], [usize::MAX, usize::MAX, 2], [1, 1, 1]),
            ),
            "too many",
        ),
    ] {
        match try_run_ndrange(&l) {
            Err(ExecError::InvalidLaunch(msg)) => assert!(msg.contains(needle), "{msg}"),
            other => panic!("expected InvalidLaunch({needle}), got {other:?}"),
        }
    }
}

#[test]
fn concurrent_launches_from_several_threads() {
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..40 {
                    let g = 64 + 37 * i + t;
                    run_and_check(
                        nd(1, [t, 0, 0], [g, 1, 1], [16, 1, 1]),
                        &[32],
                        64,
                        8,
                        Duration::ZERO,
                    );
                    run_and_check(
                        nd(2, [0; 3], [g, 3, 1], [8, 2, 1]),
                        &[],
                        0,
                        0,
                        Duration::ZERO,
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("launching thread");
    }
}

#[test]
fn nested_launch_from_a_pool_worker_while_others_are_busy() {
    let _pool = POOL_USE.lock().unwrap_or_else(|e| e.into_inner());
    // Occupy every other worker with a slow task, then launch from a pool task: the
    // launching worker must run everything itself and not wait for busy helpers.
    let workers = num_workers();
    let (busy_tx, busy_rx) = mpsc::channel();
    for _ in 1..workers {
        let tx = busy_tx.clone();
        spawn(Box::new(move || {
            std::thread::sleep(Duration::from_millis(300));
            let _ = tx.send(());
        }));
    }
    let (tx, rx) = mpsc::channel();
    spawn(Box::new(move || {
        let worker = is_pool_worker();
        let r = std::panic::catch_unwind(|| {
            run_and_check(
                nd(1, [0; 3], [512, 1, 1], [8, 1, 1]),
                &[16],
                0,
                0,
                Duration::ZERO,
            );
        });
        let _ = tx.send((worker, r.is_ok()));
    }));
    let (worker, ok) = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("nested launch finished");
    assert!(worker, "spawned task runs on a pool worker");
    assert!(ok, "nested launch checks passed");
    for _ in 1..workers {
        busy_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("busy task finished");
    }
}

#[test]
fn launches_spread_over_workers() {
    let _pool = POOL_USE.lock().unwrap_or_else(|e| e.into_inner());
    // Slow groups: with more than one worker, more than one thread takes part.
    let r = run_and_check(
        nd(1, [0; 3], [256, 1, 1], [4, 1, 1]),
        &[],
        0,
        0,
        Duration::from_millis(2),
    );
    let threads = r.threads.lock().unwrap().len();
    assert!(threads >= 1);
    if num_workers() > 1 {
        assert!(
            threads > 1,
            "only {threads} thread ran 64 slow groups with {} workers",
            num_workers()
        );
    }
}

#[test]
fn a_launch_uses_at_most_its_threads() {
    let _pool = POOL_USE.lock().unwrap_or_else(|e| e.into_inner());
    // Slow groups would spread over every worker; a launch of a one-compute-unit
    // sub-device stays on the launching thread, a two-unit one on at most two.
    for limit in [1, 2] {
        let r = run_on_threads(
            nd(1, [0; 3], [256, 1, 1], [4, 1, 1]),
            &[],
            0,
            0,
            Duration::from_millis(1),
            limit,
        );
        let threads = r.threads.lock().unwrap().len();
        assert!(
            (1..=limit).contains(&threads),
            "{threads} threads ran a launch limited to {limit} ({} workers)",
            num_workers()
        );
        if limit == 2 && num_workers() >= 2 {
            assert_eq!(threads, 2, "64 slow groups with 2 threads allowed");
        }
    }
}

#[test]
fn panicking_tasks_do_not_kill_workers() {
    let workers = num_workers();
    for _ in 0..workers * 2 {
        spawn(Box::new(|| panic!("deliberate test panic")));
    }
    let done = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    for _ in 0..workers * 4 {
        let done = done.clone();
        let tx = tx.clone();
        spawn(Box::new(move || {
            if done.fetch_add(1, Ordering::SeqCst) + 1 == workers * 4 {
                let _ = tx.send(());
            }
        }));
    }
    rx.recv_timeout(Duration::from_secs(20))
        .expect("tasks after panics still run");
}

#[test]
fn choose_local_size_divides_global() {
    let info = fake_kernel(8, 0, 0, 0).info.clone();
    let l = choose_local_size(&info, 2, [640, 480, 1], 1024, num_workers());
    assert_eq!(640 % l[0], 0);
    assert_eq!(480 % l[1], 0);
    assert_eq!(l[0] % 8, 0);
    let l = choose_local_size_non_uniform(&info, 1, [100_003, 1, 1], 1024, true);
    assert_eq!(l[0] % 8, 0);
}

/// Tasks queued from several threads, with pauses long enough for every worker to
/// park between them, all run: no wake-up is lost between the lock-free queues and
/// parking (a lost one would leave a task queued while every worker sleeps).
#[test]
fn tasks_queued_while_workers_park_all_run() {
    struct Count(Arc<AtomicUsize>, mpsc::Sender<()>, usize);
    impl SharedTask for Count {
        fn run(self: Arc<Self>) {
            if self.0.fetch_add(1, Ordering::SeqCst) + 1 == self.2 {
                let _ = self.1.send(());
            }
        }
    }
    const THREADS: usize = 3;
    const ROUNDS: usize = 40;
    let total = THREADS * ROUNDS * 2;
    let done = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    let producers: Vec<_> = (0..THREADS)
        .map(|t| {
            let done = done.clone();
            let tx = tx.clone();
            std::thread::spawn(move || {
                for round in 0..ROUNDS {
                    let d = done.clone();
                    let tx2 = tx.clone();
                    spawn(Box::new(move || {
                        if d.fetch_add(1, Ordering::SeqCst) + 1 == total {
                            let _ = tx2.send(());
                        }
                    }));
                    spawn_shared(Arc::new(Count(done.clone(), tx.clone(), total)));
                    // Longer than the idle spin on some rounds: workers park.
                    if (round + t) % 3 == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("{} of {total} tasks ran", done.load(Ordering::SeqCst)));
    assert_eq!(done.load(Ordering::SeqCst), total);
}

/// A task that queues two tasks which can only finish together: the first is left to
/// the queuing worker (it takes it when its task returns, no wake-up), so the second
/// must wake a parked worker, or both would wait forever. Rounds sleep past the idle
/// spin so that the other worker has parked.
#[test]
fn second_task_queued_by_a_task_wakes_a_worker() {
    if num_workers() < 2 {
        return;
    }
    for round in 0..6 {
        std::thread::sleep(Duration::from_millis(2));
        let (tx, rx) = mpsc::channel();
        let started = Arc::new(AtomicUsize::new(0));
        spawn(Box::new(move || {
            for _ in 0..2 {
                let started = started.clone();
                let tx = tx.clone();
                spawn(Box::new(move || {
                    started.fetch_add(1, Ordering::SeqCst);
                    let deadline = Instant::now() + Duration::from_secs(10);
                    while started.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
                        std::hint::spin_loop();
                    }
                    let _ = tx.send(started.load(Ordering::SeqCst));
                }));
            }
        }));
        for _ in 0..2 {
            let seen = rx
                .recv_timeout(Duration::from_secs(20))
                .expect("a queued task never ran");
            assert_eq!(
                seen, 2,
                "round {round}: the two tasks did not run at the same time"
            );
        }
    }
}

/// A chain of tasks, each queuing the next (an in-order queue's commands released by
/// their predecessors), with pauses past the idle spin: every link runs.
#[test]
fn chains_of_tasks_queued_by_tasks_all_run() {
    fn link(left: usize, tx: mpsc::Sender<()>) {
        if left == 0 {
            let _ = tx.send(());
            return;
        }
        if left.is_multiple_of(16) {
            std::thread::sleep(Duration::from_micros(300));
        }
        spawn(Box::new(move || link(left - 1, tx)));
    }
    let (tx, rx) = mpsc::channel();
    spawn(Box::new(move || link(200, tx)));
    rx.recv_timeout(Duration::from_secs(30))
        .expect("a chain of tasks stopped");
}
