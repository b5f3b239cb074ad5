//! Measures the execution engine with fake kernels (no jit needed): launch latency of
//! an empty kernel (from the application thread and from a pool task, as the queues
//! launch), per-work-group overhead, and throughput of a compute-bound kernel, which
//! shows the scaling from 1 to N workers.
//!
//! Run: `cargo run --release -p cranecl-runtime --example exec_bench`
//! Scaling: `CRANECL_NUM_THREADS=1 taskset -c 0 ...` vs `CRANECL_NUM_THREADS=2 taskset -c 0,1 ...`.
//! On a machine other processes keep busy (with autogroup scheduling a process gets
//! the same CPU share however many threads it runs), run it as `chrt -f 10 ...`
//! (root) to measure without them; on 2 cores the busy kernel then runs 54 ms with
//! one worker and 27 ms with two.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cranecl_jit::{CompiledKernel, KernelEntryFn, KernelInfo, WorkGroupState};
use cranecl_runtime::exec::{self, Launch, NdRange};

/// Work-groups of the busy kernel run per thread (to show that every worker helps).
static GROUPS_PER_THREAD: Mutex<Option<HashMap<std::thread::ThreadId, usize>>> = Mutex::new(None);

unsafe extern "C" fn empty_kernel(_args: *const u8, _wg: *const WorkGroupState) {}

/// About 4 µs of floating-point work per work-item, results written to the buffer
/// whose address is the first argument.
unsafe extern "C" fn busy_kernel(args: *const u8, wg: *const WorkGroupState) {
    // SAFETY: the bench passes an argument block whose first 8 bytes point at a buffer
    // of one f32 per work-item, and a valid work-group state.
    unsafe {
        let out = args.cast::<u64>().read_unaligned() as usize as *mut f32;
        let wg = &*wg;
        let enq = (*wg.ndrange).enqueued_local_size[0];
        for l in 0..wg.local_size[0] {
            let gid = wg.group_id[0] * enq + l;
            let mut x = gid as f32 * 1e-6;
            for _ in 0..2000 {
                x = x * 0.999_9 + 0.5f32.sqrt() * 1e-4;
            }
            out.add(gid as usize).write(std::hint::black_box(x));
        }
    }
    if let Ok(mut map) = GROUPS_PER_THREAD.lock() {
        *map.get_or_insert_with(HashMap::new)
            .entry(std::thread::current().id())
            .or_default() += 1;
    }
}

struct NoCode;

fn kernel(entry: KernelEntryFn) -> Arc<CompiledKernel> {
    let info = KernelInfo {
        arg_block_size: 8,
        ..KernelInfo::new("bench", 8)
    };
    Arc::new(CompiledKernel::new(info, entry, Arc::new(NoCode)))
}

fn launch(kernel: &Arc<CompiledKernel>, global: usize, local: usize, arg: u64) -> Launch {
    Launch {
        kernel: Arc::clone(kernel),
        args: arg.to_ne_bytes().to_vec(),
        local_args: Vec::new(),
        ndrange: NdRange {
            work_dim: 1,
            global_offset: [0; 3],
            global_size: [global, 1, 1],
            local_size: [local, 1, 1],
        },
        threads: exec::num_workers(),
    }
}

/// Median time per iteration over `rounds` rounds of `iters` iterations.
fn median_per_iter(rounds: usize, iters: usize, mut f: impl FnMut()) -> Duration {
    let mut samples: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed() / iters as u32
        })
        .collect();
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    println!("workers: {}", exec::num_workers());
    let empty = kernel(empty_kernel);

    // Warm the pool up (threads start lazily).
    exec::run_ndrange(&launch(&empty, 64, 8, 0));

    let one = launch(&empty, 8, 8, 0);
    let t = median_per_iter(9, 2000, || exec::run_ndrange(&one));
    println!(
        "empty kernel, 1 group, from the app thread:        {:>8.2} us/launch",
        t.as_secs_f64() * 1e6
    );

    let many = launch(&empty, 1024 * 8, 8, 0);
    let t = median_per_iter(9, 500, || exec::run_ndrange(&many));
    println!(
        "empty kernel, 1024 groups, from the app thread:    {:>8.2} us/launch",
        t.as_secs_f64() * 1e6
    );

    let big = launch(&empty, 1 << 20, 1, 0);
    let t = median_per_iter(5, 5, || exec::run_ndrange(&big));
    println!(
        "empty kernel, 1M groups:                           {:>8.2} ns/group",
        t.as_secs_f64() * 1e9 / (1 << 20) as f64
    );

    // As a queue runs it: a pool task launches and signals completion.
    let shared = Arc::new(launch(&empty, 8, 8, 0));
    let t = median_per_iter(9, 1000, || {
        let (tx, rx) = mpsc::sync_channel(1);
        let l = Arc::clone(&shared);
        exec::spawn(Box::new(move || {
            exec::run_ndrange(&l);
            let _ = tx.send(());
        }));
        let _ = rx.recv();
    });
    println!(
        "empty kernel, 1 group, spawned + waited (queue):   {:>8.2} us/launch",
        t.as_secs_f64() * 1e6
    );

    // Compute-bound: throughput scales with workers.
    let items = 1 << 14;
    let mut out = vec![0f32; items];
    let busy = kernel(busy_kernel);
    let l = launch(&busy, items, 64, out.as_mut_ptr() as usize as u64);
    exec::run_ndrange(&l);
    let t = median_per_iter(5, 3, || exec::run_ndrange(&l));
    println!(
        "busy kernel, {items} items in 256 groups:         {:>8.2} ms/launch",
        t.as_secs_f64() * 1e3
    );
    let mut per_thread: Vec<usize> = GROUPS_PER_THREAD
        .lock()
        .map(|m| {
            m.as_ref()
                .map(|m| m.values().copied().collect())
                .unwrap_or_default()
        })
        .unwrap_or_default();
    per_thread.sort_unstable_by(|a, b| b.cmp(a));
    println!("busy kernel, work-groups run per thread (all launches): {per_thread:?}");
    assert!(
        out.iter().all(|v| v.is_finite() && *v != 0.0),
        "every work-item ran"
    );
}
