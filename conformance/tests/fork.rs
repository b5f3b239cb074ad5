//! An application that forks while the driver's threads are busy: every child opens
//! its own context, builds and runs a kernel and checks the result, and the parent
//! carries on and exits cleanly. (Python's multiprocessing with the `fork` start
//! method does exactly this.)
//!
//! The scenario runs in a re-executed copy of the test binary, so that the forking
//! process holds only this test's threads: two that keep the worker pool busy with
//! kernels, one that keeps building programs (clang, the build memos, the PCH cache),
//! and the main thread, which forks children in batches.

use std::ffi::{c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const CHILDREN: usize = 64;
const BATCH: usize = 8;

/// What a child does; its exit code says what went wrong (0: all fine).
fn child_work(unique: usize) -> i32 {
    let platform = find_platform();
    let device = first_device(platform);
    let mut err = 0;
    // SAFETY: one valid device, no properties or callback.
    let ctx = unsafe { clCreateContext(ptr::null(), 1, &device, None, ptr::null_mut(), &mut err) };
    if err != 0 {
        return 10;
    }
    // SAFETY: valid context and device.
    let q = unsafe { clCreateCommandQueue(ctx, device, 0, &mut err) };
    if err != 0 {
        return 11;
    }
    // Half the children compile a source of their own (clang runs in the child), the
    // others one the parent's memo may already know.
    let offset = if unique.is_multiple_of(2) { unique } else { 0 };
    let src = CString::new(format!(
        "kernel void sq(global int *a) {{ size_t i = get_global_id(0); a[i] = (int)(i * i) + {offset}; }}"
    ))
    .expect("no NUL");
    let strings = [src.as_ptr()];
    // SAFETY: one NUL-terminated string.
    let prog =
        unsafe { clCreateProgramWithSource(ctx, 1, strings.as_ptr(), ptr::null(), &mut err) };
    if err != 0 {
        return 12;
    }
    // SAFETY: valid program and device.
    if unsafe { clBuildProgram(prog, 1, &device, ptr::null(), None, ptr::null_mut()) } != 0 {
        return 13;
    }
    let name = CString::new("sq").expect("no NUL");
    // SAFETY: valid program, NUL-terminated name.
    let k = unsafe { clCreateKernel(prog, name.as_ptr(), &mut err) };
    if err != 0 {
        return 14;
    }
    let n = 4096usize;
    // SAFETY: no host pointer.
    let buf = unsafe { clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, ptr::null_mut(), &mut err) };
    if err != 0 {
        return 15;
    }
    let mut out = vec![0i32; n];
    // SAFETY: valid objects; `out` has n elements; a blocking read.
    let ok = unsafe {
        clSetKernelArg(
            k,
            0,
            std::mem::size_of::<cl_mem>(),
            (&buf as *const cl_mem).cast(),
        ) == 0
            && clEnqueueNDRangeKernel(
                q,
                k,
                1,
                ptr::null(),
                &n,
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
            ) == 0
            && clEnqueueReadBuffer(
                q,
                buf,
                CL_TRUE,
                0,
                n * 4,
                out.as_mut_ptr().cast::<c_void>(),
                0,
                ptr::null(),
                ptr::null_mut(),
            ) == 0
    };
    if !ok {
        return 16;
    }
    if out
        .iter()
        .enumerate()
        .any(|(i, v)| *v != (i * i) as i32 + offset as i32)
    {
        return 17;
    }
    // SAFETY: releasing what this function created.
    unsafe {
        clReleaseMemObject(buf);
        clReleaseKernel(k);
        clReleaseProgram(prog);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    }
    0
}

/// A queue and a kernel handed to the busy threads.
#[derive(Clone, Copy)]
struct Handles(cl_command_queue, cl_kernel);
// SAFETY: OpenCL handles may be used from any thread.
unsafe impl Send for Handles {}

/// Waits for `pid` at most `limit`; the outcome as text (None: exited with 0).
fn reap(pid: libc::pid_t, limit: Duration) -> Option<String> {
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waits for our own child without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                None
            } else if libc::WIFSIGNALED(status) {
                Some(format!("killed by signal {}", libc::WTERMSIG(status)))
            } else {
                Some(format!("exit code {}", libc::WEXITSTATUS(status)))
            };
        }
        if start.elapsed() > limit {
            // SAFETY: our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Some(format!("hung for {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The scenario (in the re-executed copy).
fn fork_while_busy() {
    let busy_src = "kernel void busy(global float *a) { size_t i = get_global_id(0); float x = a[i]; for (int k = 0; k < 400; k++) x = x * 1.0001f + 0.5f; a[i] = x; }";
    // Two threads share one queue and kernel (contended locks in the driver).
    let ctx = DeviceContext::new();
    let kernel = ctx.kernel(busy_src, "", "busy");
    let buf = ctx.buffer_zeroed::<f32>(1 << 16);
    kernel.arg_buffer(0, &buf);
    let shared = Handles(ctx.queue.raw(), kernel.raw());
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for _ in 0..2 {
        let stop = Arc::clone(&stop);
        threads.push(std::thread::spawn(move || {
            let h = shared; // the whole (Send) struct, not its fields
            let Handles(q, k) = h;
            let g = 1usize << 16;
            while !stop.load(Ordering::Relaxed) {
                // SAFETY: the queue and kernel outlive these threads (joined below);
                // OpenCL allows enqueueing from several threads.
                let code = unsafe {
                    clEnqueueNDRangeKernel(
                        q,
                        k,
                        1,
                        ptr::null(),
                        &g,
                        ptr::null(),
                        0,
                        ptr::null(),
                        ptr::null_mut(),
                    )
                };
                assert_eq!(code, 0, "busy launch");
                // SAFETY: as above.
                assert_eq!(unsafe { clFinish(q) }, 0, "busy clFinish");
            }
        }));
    }
    {
        let stop = Arc::clone(&stop);
        threads.push(std::thread::spawn(move || {
            let ctx = DeviceContext::new();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let src =
                    format!("kernel void u{n}(global int *a) {{ a[get_global_id(0)] = {n}; }}");
                let _ = ctx.build(&src, "");
                n += 1;
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut failures = Vec::new();
    for first in (0..CHILDREN).step_by(BATCH) {
        let mut pids = Vec::new();
        for i in first..first + BATCH {
            std::thread::sleep(Duration::from_millis(2));
            // SAFETY: the child only runs `child_work` (the driver and the allocator,
            // both fork-safe) and leaves with _exit, skipping the parent's destructors.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                let code = std::panic::catch_unwind(|| child_work(i)).unwrap_or(99);
                // SAFETY: ends the child without running the parent's exit handlers.
                unsafe { libc::_exit(code) };
            }
            pids.push((i, pid));
        }
        for (i, pid) in pids {
            if let Some(what) = reap(pid, Duration::from_secs(60)) {
                failures.push(format!("child {i}: {what}"));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("busy thread");
    }
    assert!(
        failures.is_empty(),
        "{} of {CHILDREN} children failed: {failures:?}",
        failures.len()
    );
}

#[test]
fn children_forked_while_the_driver_is_busy_run() {
    if is_child_for("children_forked_while_the_driver_is_busy_run") {
        fork_while_busy();
        println!("CHILD-OK");
        return;
    }
    // The copy must also exit cleanly after its children (run_in_child checks the
    // exit status).
    run_in_child("children_forked_while_the_driver_is_busy_run", &[]);
}
