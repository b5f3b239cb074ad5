"""pyopencl with Python's multiprocessing `fork` start method while the parent is busy.

The parent keeps the driver's threads busy (two threads launching kernels on one
queue, one building programs) while a pool forks a fresh worker per task; every
worker opens its own context, builds and runs a kernel and returns whether the result
matches numpy. A child that inherited a lock some parent thread held at the fork
would hang (the task times out) or crash (the pool reports it).
"""

import multiprocessing
import threading
import warnings

import numpy as np
import pyopencl as cl
import pytest

from conftest import wanted_platform

TASKS = 64

SQUARE = "kernel void sq(global int *a) { size_t i = get_global_id(0); a[i] = (int)(i * i) + %d; }"
BUSY = """kernel void busy(global float *a) {
    size_t i = get_global_id(0); float x = a[i];
    for (int k = 0; k < 400; k++) x = x * 1.0001f + 0.5f;
    a[i] = x;
}"""


def _devices():
    want = wanted_platform().lower()
    for p in cl.get_platforms():
        if want in p.name.lower():
            return p.get_devices()
    raise RuntimeError(f"no platform like {want!r}")


def _child(i):
    ctx = cl.Context(_devices())
    queue = cl.CommandQueue(ctx)
    # Odd tasks compile a source of their own: clang runs in the child.
    offset = i if i % 2 else 0
    prg = cl.Program(ctx, SQUARE % offset).build()
    n = 4096
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    prg.sq(queue, (n,), None, buf)
    out = np.empty(n, np.int32)
    cl.enqueue_copy(queue, out, buf)
    return bool((out == np.arange(n, dtype=np.int64) ** 2 + offset).all())


def test_fork_children_run_while_the_parent_is_busy(ctx, queue):
    # Everything pyopencl imports lazily is imported before the first fork: a child
    # forked while another thread held a module's import lock would hang in Python.
    _child(0)
    prg = cl.Program(ctx, BUSY).build()
    kernel = prg.busy
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 << 16)
    kernel.set_arg(0, buf)
    stop = threading.Event()
    errors = []

    def launch():
        try:
            while not stop.is_set():
                cl.enqueue_nd_range_kernel(queue, kernel, (1 << 16,), None)
                queue.finish()
        except Exception as e:  # reported below
            errors.append(repr(e))

    def build():
        n = 0
        try:
            while not stop.is_set():
                cl.Program(ctx, "kernel void u%d(global int *a) { a[0] = %d; }" % (n, n)).build()
                n += 1
        except Exception as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=launch) for _ in range(2)]
    threads.append(threading.Thread(target=build))
    for t in threads:
        t.start()
    results = []
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns about forking a process with threads: that is the point.
            warnings.simplefilter("ignore", DeprecationWarning)
            mp = multiprocessing.get_context("fork")
            with mp.Pool(4, maxtasksperchild=1) as pool:
                pending = [pool.apply_async(_child, (i,)) for i in range(1, TASKS + 1)]
                for i, p in enumerate(pending, 1):
                    try:
                        results.append((i, p.get(timeout=120)))
                    except Exception as e:
                        results.append((i, repr(e)))
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors
    bad = [(i, r) for i, r in results if r is not True]
    assert not bad, f"{len(bad)} of {TASKS} forked workers failed: {bad}"
