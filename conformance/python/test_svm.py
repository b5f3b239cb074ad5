"""Shared virtual memory through pyopencl: coarse-grained allocations (SVMAllocation,
csvm_empty, svm_empty) mapped and unmapped, filled and copied (clEnqueueSVMMemFill/
Memcpy/MigrateMem), passed to kernels directly, at an offset and wrapped in buffers;
fine-grained buffers shared with the host without maps; pointers stored in SVM and
followed by a kernel; pyopencl arrays on SVMAllocator and SVMPool; what the device
claims (atomics only if it says so)."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest
from pyopencl.characterize import has_coarse_grain_buffer_svm, has_fine_grain_buffer_svm
from pyopencl.tools import SVMAllocator, SVMPool

from conftest import is_cranecl, require

TWICE = """
kernel void twice(global float *a) { a[get_global_id(0)] *= 2; }
kernel void twice_ro(global int *out, global const int *in) { out[get_global_id(0)] = 2 * in[get_global_id(0)]; }
"""


@pytest.fixture()
def coarse(device):
    require(has_coarse_grain_buffer_svm(device), "coarse-grained buffer SVM")


@pytest.fixture()
def fine(device):
    require(has_fine_grain_buffer_svm(device), "fine-grained buffer SVM")


@pytest.fixture(scope="module")
def twice(ctx):
    return cl.Program(ctx, TWICE).build()


def test_capabilities_are_what_cranecl_implements(device):
    caps = device.svm_capabilities
    if is_cranecl():
        assert caps & cl.device_svm_capabilities.COARSE_GRAIN_BUFFER
        assert caps & cl.device_svm_capabilities.FINE_GRAIN_BUFFER
        # Fine-grain buffers with SVM atomics (conformance/tests/kernels_memory_model.rs
        # check host/device atomics on them)
        assert caps & cl.device_svm_capabilities.ATOMICS
    if caps & cl.device_svm_capabilities.ATOMICS:
        assert caps & cl.device_svm_capabilities.FINE_GRAIN_BUFFER


@pytest.mark.parametrize("opaque", [False, True])
def test_coarse_grain_map_kernel_and_copy(ctx, queue, twice, coarse, opaque):
    n = 3001
    if opaque:
        svm = cl.SVMAllocation(ctx, n * 4, alignment=64, flags=cl.svm_mem_flags.READ_WRITE)
    else:
        svm = cl.SVM(cl.csvm_empty(ctx, (n,), np.float32, alignment=64))
        assert isinstance(svm.mem.base, cl.SVMAllocation)
    assert svm.svm_ptr % 64 == 0
    cl.enqueue_svm_memfill(queue, svm, np.zeros((), np.float32))
    with svm.map_rw(queue) as ary:
        ary = ary.view(np.float32)
        assert ary.nbytes == n * 4 and (ary == 0).all()
        ary[:] = np.arange(n, dtype=np.float32)
    twice.twice(queue, (n,), None, svm)
    twice.twice(queue, (n,), None, svm.as_buffer(ctx))  # clCreateBuffer(USE_HOST_PTR) on SVM
    with svm.map_ro(queue) as ary:
        np.testing.assert_array_equal(ary.view(np.float32), 4 * np.arange(n, dtype=np.float32))
    host = np.full(n, -1, np.float32)
    cl.enqueue_copy(queue, host, svm)  # SVM -> host memcpy
    np.testing.assert_array_equal(host, 4 * np.arange(n, dtype=np.float32))


def test_read_only_svm_input(ctx, queue, twice, coarse):
    src = cl.svm_empty(ctx, cl.svm_mem_flags.READ_ONLY, 1000, np.int32)
    dst = cl.svm_empty(ctx, cl.svm_mem_flags.READ_WRITE, 1000, np.int32)
    with cl.SVM(src).map_rw(queue) as ary:
        ary[:] = np.arange(1000, dtype=np.int32) - 500
    twice.twice_ro(queue, (1000,), None, cl.SVM(dst), cl.SVM(src))
    with cl.SVM(dst).map_ro(queue) as ary:
        np.testing.assert_array_equal(ary, 2 * (np.arange(1000) - 500))


def test_memcpy_and_memfill_patterns(ctx, queue, coarse):
    # parts of allocations (pyopencl passes a numpy view's pointer and size; its
    # byte_count argument is not passed on)
    n = 4096
    a_mem, b_mem = cl.csvm_empty(ctx, n, np.uint8), cl.csvm_empty(ctx, n, np.uint8)
    a, b = cl.SVM(a_mem), cl.SVM(b_mem)
    for size in [1, 2, 4, 8, 16, 32, 64, 128]:
        pattern = (np.arange(size, dtype=np.uint8) * 37 + size).astype(np.uint8)
        start, count = size, (n // size - 3) * size  # pattern-aligned, not the whole
        cl.enqueue_svm_memfill(queue, a, np.zeros(1, np.uint8))
        cl.enqueue_svm_memfill(queue, cl.SVM(a_mem[start:start + count]), pattern)
        cl.enqueue_svm_memfill(queue, b, np.full(4, 0xEE, np.uint8))
        cl.enqueue_copy(queue, cl.SVM(b_mem[5:5 + n - 10]), cl.SVM(a_mem[3:3 + n - 10]))  # SVM -> SVM
        host = np.empty(n, np.uint8)
        cl.enqueue_copy(queue, host, b)
        filled = np.zeros(n, np.uint8)
        filled[start:start + count] = np.tile(pattern, count // size)
        want = np.full(n, 0xEE, np.uint8)
        want[5:5 + n - 10] = filled[3:3 + n - 10]
        np.testing.assert_array_equal(host, want, err_msg=f"pattern of {size} bytes")
    # host -> SVM
    src = np.arange(n, dtype=np.uint8)
    cl.enqueue_copy(queue, a, src)
    with a.map_ro(queue) as ary:
        np.testing.assert_array_equal(ary, src)


def test_migrate_mem(ctx, queue, coarse):
    a = cl.csvm_empty(ctx, 1000, np.float32)
    b = cl.csvm_empty(ctx, 1000, np.float32)
    cl.enqueue_svm_memfill(queue, cl.SVM(a), np.float32(3.5))
    evt = cl.enqueue_svm_migrate_mem(queue, [cl.SVM(a), cl.SVM(b)], cl.mem_migration_flags.CONTENT_UNDEFINED)
    evt.wait()
    cl.enqueue_svm_migrate_mem(queue, [cl.SVM(a)], 0).wait()
    with cl.SVM(a).map_ro(queue) as ary:
        assert (ary == 3.5).all()


def test_kernel_arguments_at_an_offset_into_svm(ctx, queue, coarse):
    prg = cl.Program(ctx, "kernel void add(global int *x, int v) { x[get_global_id(0)] += v; }").build()
    ary = cl.csvm_empty(ctx, 1000, np.int32)
    svm = cl.SVM(ary)
    with svm.map_rw(queue) as m:
        m[:] = 0
    prg.add(queue, (100,), None, cl.SVM(ary[300:]), np.int32(7))  # a pointer inside the allocation
    with svm.map_ro(queue) as m:
        want = np.zeros(1000, np.int32)
        want[300:400] = 7
        np.testing.assert_array_equal(m, want)


def test_fine_grain_shared_with_the_host(ctx, queue, twice, fine):
    ary = cl.fsvm_empty(ctx, 3000, np.float32, alignment=64)
    assert isinstance(ary.base, cl.SVMAllocation)
    ary[:] = np.arange(3000, dtype=np.float32)  # no map: the host writes directly
    orig = ary.copy()
    twice.twice(queue, ary.shape, None, cl.SVM(ary))
    queue.finish()
    np.testing.assert_array_equal(ary, 2 * orig)
    ary[::2] = -1  # and again, interleaved with the device
    twice.twice(queue, ary.shape, None, cl.SVM(ary))
    queue.finish()
    want = 4 * orig
    want[::2] = -2
    np.testing.assert_array_equal(ary, want)


LIST_WALK = """
typedef struct node { global struct node *next; int value; } node;
kernel void walk(global node *heads, global int *sums, global int *lengths)
{
    size_t i = get_global_id(0);
    int s = 0, n = 0;
    for (global node *p = heads[i].next; p; p = p->next) { s += p->value; ++n; }
    sums[i] = s;
    lengths[i] = n;
}
"""


def test_pointers_stored_in_svm_are_followed(ctx, queue, fine, rng):
    # linked lists built by the host inside one fine-grained allocation: the
    # addresses the host stores are the ones the kernel dereferences
    node = np.dtype([("next", np.uint64), ("value", np.int32), ("pad", np.int32)])
    n_lists, n_nodes = 64, 2000
    nodes = cl.fsvm_empty(ctx, n_lists + n_nodes, node, alignment=64)
    base = cl.SVM(nodes).svm_ptr
    nodes[:] = np.zeros((), node)
    owner = rng.integers(0, n_lists, n_nodes)
    values = rng.integers(-100, 100, n_nodes).astype(np.int32)
    for k in range(n_nodes):  # push node k onto list owner[k]
        slot = n_lists + k
        nodes[slot]["value"] = values[k]
        nodes[slot]["next"] = nodes[owner[k]]["next"]
        nodes[owner[k]]["next"] = base + slot * node.itemsize
    prg = cl.Program(ctx, LIST_WALK).build()
    sums, lengths = cla.empty(queue, n_lists, np.int32), cla.empty(queue, n_lists, np.int32)
    prg.walk(queue, (n_lists,), None, cl.SVM(nodes), sums.data, lengths.data)
    np.testing.assert_array_equal(sums.get(), np.bincount(owner, weights=values, minlength=n_lists).astype(np.int32))
    np.testing.assert_array_equal(lengths.get(), np.bincount(owner, minlength=n_lists))


@pytest.mark.parametrize("use_pool", [False, True])
def test_arrays_on_svm_allocators(ctx, coarse, use_pool):
    queue, queue2 = cl.CommandQueue(ctx), cl.CommandQueue(ctx)
    alloc = SVMAllocator(ctx, queue=queue)
    if use_pool:
        alloc = SVMPool(alloc)

    def alloc2(size):
        allocation = alloc(size)
        allocation.bind_to_queue(queue2)
        return allocation

    a = cla.arange(queue, 2000, dtype=np.float32, allocator=alloc)
    b = cla.to_device(queue, np.arange(2000), allocator=alloc) + 4000
    assert a.allocator is alloc and isinstance(a.data, cl.SVMPointer)
    a2 = cla.arange(queue2, 2000, dtype=np.float32, allocator=alloc2)
    b2 = cla.to_device(queue2, np.arange(2000), allocator=alloc2) + 4000
    np.testing.assert_array_equal((a + b).get(), (a2 + b2).get())
    np.testing.assert_array_equal((a * b).get(), np.arange(2000, dtype=np.float32) * (np.arange(2000) + 4000))
    assert cla.sum(a).get() == np.arange(2000).sum()
    s = cla.cumsum(cla.to_device(queue, np.ones(5000, np.int32), allocator=alloc))
    np.testing.assert_array_equal(s.get(), np.arange(1, 5001))


def test_zero_size_svm_allocations(ctx, coarse):
    cl.SVMAllocation(ctx, 0, 0, cl.svm_mem_flags.READ_WRITE).release()
    alloc = SVMAllocator(ctx)
    alloc(0).release()
    SVMPool(alloc)(0).release()
