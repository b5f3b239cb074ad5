"""pyopencl's scans and sorts (pyopencl.scan, pyopencl.algorithm, pyopencl.bitonic_sort):
inclusive/exclusive and segmented scans over every integer and float dtype and odd
sizes, GenericScanKernel with custom input/output, copy_if/remove_if/partition/
unique, radix sort with values, key-value sort, bitonic sort and argsort, and the
list-of-lists builder, compared with numpy."""

import numpy as np
import pyopencl.array as cla
import pytest
from pyopencl.algorithm import (
    KeyValueSorter,
    ListOfListsBuilder,
    RadixSort,
    copy_if,
    partition,
    remove_if,
    unique,
)
from pyopencl.bitonic_sort import BitonicSort
from pyopencl.scan import ExclusiveScanKernel, GenericDebugScanKernel, GenericScanKernel, InclusiveScanKernel
from pyopencl.tools import VectorArg, dtype_to_ctype

from conftest import budgeted, has_fp64, require

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
# pyopencl scans values of 4 or 8 bytes
SCAN_INT_DTYPES = [np.int32, np.uint32, np.int64, np.uint64]
FLOAT_DTYPES = [np.float32, np.float64]
# below, at and above a work-group's and a scan block's worth, primes, large
SCAN_SIZES = [1, 2, 10, 127, 255, 256, 257, 1021, 1024, 1029, 4093, 4101, 65_537, 2**20 + 1]


def need(device, dtype):
    if np.dtype(dtype) == np.float64:
        require(has_fp64(device), "cl_khr_fp64")


def small_values(rng, n, dtype):
    # integers (so float sums are exact and the order of the additions is free)
    return rng.integers(0, 10, n).astype(dtype)


@pytest.mark.parametrize("dtype", SCAN_INT_DTYPES + FLOAT_DTYPES)
def test_inclusive_and_exclusive_sum_scan(ctx, queue, device, rng, dtype):
    need(device, dtype)
    inclusive = InclusiveScanKernel(ctx, dtype, "a+b", neutral="0")
    exclusive = ExclusiveScanKernel(ctx, dtype, "a+b", "0")
    for n in SCAN_SIZES:
        host = small_values(rng, n, dtype)
        want = np.cumsum(host, dtype=dtype)  # wraps like the device for 8/16 bits
        dev = cla.to_device(queue, host)
        inclusive(dev)
        np.testing.assert_array_equal(dev.get(), want, err_msg=f"inclusive n={n}")
        dev = cla.to_device(queue, host)
        exclusive(dev)
        np.testing.assert_array_equal(dev.get(), (want - host).astype(dtype), err_msg=f"exclusive n={n}")


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_max_scan_into_another_array(ctx, queue, device, rng, dtype):
    need(device, dtype)
    knl = InclusiveScanKernel(ctx, dtype, "max(a, b)", neutral="-1000000")
    for n in [1, 77, 5003, 300_007]:
        host = rng.integers(-10**5, 10**5, n).astype(dtype)
        src = cla.to_device(queue, host)
        dst = cla.empty_like(src)
        knl(src, dst)
        np.testing.assert_array_equal(dst.get(), np.maximum.accumulate(host))
        np.testing.assert_array_equal(src.get(), host)


def test_scan_into_a_new_array_and_cumsum(ctx, queue, rng):
    # (views at an offset: test_generic_scan_index_preservation_and_offsets; the
    # legacy scan kernels ignore an offset)
    host = small_values(rng, 20_011, np.int64)
    dev = cla.to_device(queue, host)
    out = ExclusiveScanKernel(ctx, np.int64, "a+b", neutral="0")(dev, "new")
    np.testing.assert_array_equal(dev.get(), host)
    np.testing.assert_array_equal(out.get(), np.cumsum(host) - host)
    for dtype in [np.int32, np.float32]:
        h = small_values(rng, 9999, dtype)
        np.testing.assert_array_equal(cla.cumsum(cla.to_device(queue, h)).get(), np.cumsum(h, dtype=dtype))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_segmented_scan(ctx, queue, device, rng, dtype, exclusive):
    need(device, dtype)
    ctype = dtype_to_ctype(dtype)
    knl = GenericScanKernel(
        ctx, dtype,
        arguments=f"__global {ctype} *ary, __global char *segflags, __global {ctype} *out",
        input_expr="ary[i]",
        scan_expr="across_seg_boundary ? b : (a+b)", neutral="0",
        is_segment_start_expr="segflags[i]",
        output_statement="out[i] = prev_item" if exclusive else "out[i] = item",
    )
    for n in [1, 13, 256, 1029, 70_001]:
        host = small_values(rng, n, dtype)
        for n_starts in {0, 1, 3, max(1, n // 50), n // 2}:
            flags = np.zeros(n, dtype=np.uint8)
            flags[rng.choice(n, size=min(n_starts, n), replace=False)] = 1
            if n > 1028:
                flags[1028] = 1  # a segment starting right at a block boundary
            want = np.empty_like(host)
            starts = np.concatenate([[0], np.flatnonzero(flags)])
            ends = np.concatenate([starts[1:], [n]])
            for s, e in zip(starts, ends):
                seg = np.cumsum(host[s:e], dtype=dtype)
                want[s:e] = seg - host[s:e] if exclusive else seg
            out = cla.empty(queue, n, dtype)
            knl(cla.to_device(queue, host), cla.to_device(queue, flags), out)
            np.testing.assert_array_equal(out.get(), want, err_msg=f"n={n} starts={n_starts}")


@pytest.mark.parametrize("cls", [GenericScanKernel, GenericDebugScanKernel])
def test_generic_scan_index_preservation_and_offsets(ctx, queue, rng, cls):
    knl = cls(ctx, np.int32, arguments="__global int *out", input_expr="i", scan_expr="b", neutral="0",
              output_statement="out[i] = item;")
    for n in [1, 1000, 4097, 100_003]:
        out = cla.empty(queue, n, np.int32)
        knl(out)
        np.testing.assert_array_equal(out.get(), np.arange(n))
    # array arguments at an offset, a float64 item type
    knl = cls(
        ctx, np.float64,
        arguments=[VectorArg(np.float64, "input", with_offset=True), VectorArg(np.int64, "segment", with_offset=True)],
        input_expr="input[i]", is_segment_start_expr="segment[i]",
        scan_expr="across_seg_boundary ? b : (a+b)", neutral="0",
        output_statement="input[i] = item;",
    )
    host = small_values(rng, 530, np.float64)
    seg = np.zeros(530, dtype=np.int64)
    seg[[40, 41, 300]] = 1
    dev = cla.to_device(queue, host)
    knl(dev[10:], cla.to_device(queue, seg)[10:])
    want = host.copy()
    for s, e in [(10, 40), (40, 41), (41, 300), (300, 530)]:
        want[s:e] = np.cumsum(host[s:e])
    np.testing.assert_array_equal(dev.get(), want)


def test_generic_scan_with_two_outputs(ctx, queue, rng):
    # a scan over a struct-free pair: running count and running sum of positives,
    # written from one output statement
    knl = GenericScanKernel(
        ctx, np.int64,
        arguments="__global const int *x, __global long *count, __global long *total",
        input_expr="(x[i] > 0) ? ((long)x[i] << 20) + 1 : 0",
        scan_expr="a+b", neutral="0",
        output_statement="count[i] = item & ((1 << 20) - 1); total[i] = item >> 20;",
    )
    host = rng.integers(-50, 50, 123_457).astype(np.int32)
    count, total = cla.empty(queue, host.size, np.int64), cla.empty(queue, host.size, np.int64)
    knl(cla.to_device(queue, host), count, total)
    pos = host > 0
    np.testing.assert_array_equal(count.get(), np.cumsum(pos))
    np.testing.assert_array_equal(total.get(), np.cumsum(np.where(pos, host, 0)))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint64, np.float32])
def test_copy_if_remove_if_partition(queue, rng, dtype):
    for n in [1, 10, 1025, 200_003]:
        host = rng.integers(0, 100, n).astype(dtype)
        dev = cla.to_device(queue, host)
        crit = dtype(30)
        out, count, _ = copy_if(dev, "ary[i] > myval", [("myval", crit)])
        k = int(count.get())
        np.testing.assert_array_equal(out.get()[:k], host[host > crit])
        out, count, _ = remove_if(dev, "ary[i] > myval", [("myval", crit)])
        k = int(count.get())
        np.testing.assert_array_equal(out.get()[:k], host[host <= crit])
        yes, no, count, _ = partition(dev, "ary[i] > myval", [("myval", crit)])
        k = int(count.get())
        np.testing.assert_array_equal(yes.get()[:k], host[host > crit])
        np.testing.assert_array_equal(no.get()[: n - k], host[host <= crit])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_unique(queue, device, rng, dtype):
    need(device, dtype)
    for n in [1, 9, 4099, 300_001]:
        host = np.sort(rng.integers(0, 1000, n).astype(dtype))
        out, count, _ = unique(cla.to_device(queue, host))
        k = int(count.get())
        np.testing.assert_array_equal(out.get()[:k], np.unique(host))


@pytest.mark.parametrize("key_dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_radix_sort_with_values(ctx, queue, rng, key_dtype):
    ctype = dtype_to_ctype(key_dtype)
    sort = RadixSort(ctx, f"{ctype} *keys, int *values", key_expr="keys[i]", sort_arg_names=["keys", "values"])
    for n, bits in [(1, 8), (17, 4), (1000, 16), (65_537, 24), (500_000, 32)]:
        keys = rng.integers(0, 2**bits, n).astype(key_dtype)
        values = np.arange(n, dtype=np.int32)
        (dk, dv), _ = sort(cla.to_device(queue, keys), cla.to_device(queue, values), key_bits=bits)
        # radix sort is stable and orders the key's low `bits` bits as unsigned
        order = np.argsort(keys.view(np.dtype(key_dtype).str.replace("i", "u")), kind="stable")
        np.testing.assert_array_equal(dk.get(), keys[order])
        np.testing.assert_array_equal(dv.get(), values[order])


def test_radix_sort_by_computed_key(ctx, queue, rng):
    # sort floats in [0, 1) by a computed integer key; other arrays follow
    sort = RadixSort(ctx, "float *x, int *tag", key_expr="(uint)(x[i] * 65536.f)", sort_arg_names=["x", "tag"])
    x = rng.random(40_000).astype(np.float32)
    tag = rng.integers(0, 10**6, x.size).astype(np.int32)
    (sx, stag), _ = sort(cla.to_device(queue, x), cla.to_device(queue, tag), key_bits=16)
    order = np.argsort((x * 65536).astype(np.uint32), kind="stable")
    np.testing.assert_array_equal(sx.get(), x[order])
    np.testing.assert_array_equal(stag.get(), tag[order])


def test_key_value_sorter(ctx, queue, rng):
    n, nkeys = 100_000, 2000
    keys = rng.integers(0, nkeys, n).astype(np.int32)
    values = rng.integers(0, n, n).astype(np.int64)
    starts, lists, _ = KeyValueSorter(ctx)(
        queue, cla.to_device(queue, keys), cla.to_device(queue, values), nkeys, starts_dtype=np.int32)
    starts, lists = starts.get(), lists.get()
    assert starts[0] == 0 and starts[-1] == n
    for k in range(nkeys):
        np.testing.assert_array_equal(np.sort(lists[starts[k]:starts[k + 1]]), np.sort(values[keys == k]))


# Bitonic sort's kernels are unrolled sorting networks; they run in a child process
# with a time budget (conftest.BudgetedChild) that guards against a build or run that
# never ends, not a speed check: cranecl needs 43-59 s of CPU for all of them from cold
# (peers ~10 s), and a loaded 2-core CI machine adds to that, so the budget leaves
# three times the need (a tighter one failed at load 11).
BITONIC_BUDGET_S = 180
BITONIC_AXIS_CASES = [(dt, size) for dt in ("int32", "uint32", "float32", "float64") for size in (4, 16, 512)]
BITONIC_ARGSORT_CASES = [("int32", 0), ("int32", 4), ("int32", 2**14), ("float64", 2**14), ("float32", 2**18)]
BITONIC_CHILD = f"""
from pyopencl.bitonic_sort import BitonicSort
rng = np.random.default_rng(5)
sorter = BitonicSort(ctx)
for dt, size in {BITONIC_AXIS_CASES}:
    host = rng.integers(0, 239482333, (2, size, 3)).astype(dt)
    if host.dtype.kind == "f":
        host += rng.random(host.shape).astype(dt)
    got, _ = sorter(cla.to_device(queue, host), axis=1)
    save(f"in-axis-{{dt}}-{{size}}", host)
    save(f"out-axis-{{dt}}-{{size}}", got.get())
def argsort(dt, size):
    host = rng.integers(0, 239432234, size).astype(dt)
    idx = cla.arange(queue, 0, size, 1, dtype=np.int32)
    got, _ = sorter(cla.to_device(queue, host), idx=idx, axis=0)
    save(f"in-arg-{{dt}}-{{size}}", host)
    save(f"out-arg-{{dt}}-{{size}}", got.get())
    save(f"idx-arg-{{dt}}-{{size}}", idx.get())
# small sizes (quick to build everywhere) before the large ones
for dt, size in {BITONIC_ARGSORT_CASES}:
    if size < 2**14:
        argsort(dt, size)
flat = rng.integers(-10**6, 10**6, 2**16).astype(np.int32)
save("in-flat", flat)
save("out-flat", sorter(cla.to_device(queue, flat), axis=0)[0].get())
for dt, size in {BITONIC_ARGSORT_CASES}:
    if size >= 2**14:
        argsort(dt, size)
"""


BITONIC = budgeted("bitonic", BITONIC_CHILD, BITONIC_BUDGET_S)


@pytest.fixture(scope="module")
def bitonic(device):
    need(device, np.float64)
    return BITONIC.wait()


@pytest.mark.parametrize(("dtype", "size"), BITONIC_AXIS_CASES)
def test_bitonic_sort_along_an_axis(bitonic, dtype, size):
    got, host = bitonic[f"out-axis-{dtype}-{size}"], bitonic[f"in-axis-{dtype}-{size}"]
    np.testing.assert_array_equal(got, np.sort(host, axis=1))


def test_bitonic_sort_large_flat_array(bitonic):
    np.testing.assert_array_equal(bitonic["out-flat"], np.sort(bitonic["in-flat"]))


@pytest.mark.parametrize(("dtype", "size"), BITONIC_ARGSORT_CASES)
def test_bitonic_argsort(bitonic, dtype, size):
    host = bitonic[f"in-arg-{dtype}-{size}"]
    got, idx = bitonic[f"out-arg-{dtype}-{size}"], bitonic[f"idx-arg-{dtype}-{size}"]
    np.testing.assert_array_equal(got, np.sort(host))
    np.testing.assert_array_equal(host[idx], np.sort(host))
    assert sorted(idx) == list(range(size))


def test_bitonic_sort_rejects_a_length_not_a_power_of_two(ctx, queue):
    with pytest.raises(ValueError):
        BitonicSort(ctx)(cla.zeros(queue, 100, np.int32))


def test_list_of_lists_builder(ctx, queue):
    builder = ListOfListsBuilder(ctx, [("mylist", np.int32)], """//CL//
        void generate(LIST_ARG_DECL USER_ARG_DECL index_type i)
        {
            int count = i % 4;
            for (int j = 0; j < count; ++j)
                APPEND_mylist(count);
        }
        """, arg_decls=[])
    result, _ = builder(queue, 2000)
    lst = result["mylist"]
    assert lst.count == 3000
    want = np.concatenate([np.full(i % 4, i % 4) for i in range(2000)])
    np.testing.assert_array_equal(lst.lists.get(), want)
    np.testing.assert_array_equal(lst.starts.get(), np.concatenate([[0], np.cumsum([i % 4 for i in range(2000)])]))


def test_list_of_lists_builder_with_inputs_and_empty_elimination(ctx, queue, rng):
    builder = ListOfListsBuilder(
        ctx, [("odd", np.int32), ("even", np.int32)], """//CL//
        void generate(LIST_ARG_DECL USER_ARG_DECL index_type i)
        {
            int v = input_list[i];
            for (int j = 0; j < v; ++j) {
                if (j % 2) { APPEND_odd(j); } else { APPEND_even(j); }
            }
        }
        """,
        arg_decls=[VectorArg(np.int32, "input_list", with_offset=True)],
        eliminate_empty_output_lists=["odd"])
    host = rng.integers(0, 6, 5010).astype(np.int32)
    result, _ = builder(queue, 5000, cla.to_device(queue, host)[10:])
    counts = host[10:]
    odd = result["odd"]
    assert odd.count == sum(c // 2 for c in counts)
    nonempty = np.flatnonzero(counts // 2)
    np.testing.assert_array_equal(odd.nonempty_indices.get()[: nonempty.size], nonempty)
    want_odd = np.concatenate([np.arange(1, c, 2) for c in counts]).astype(np.int32)
    np.testing.assert_array_equal(odd.lists.get(), want_odd)
    even = result["even"]
    want_even = np.concatenate([np.arange(0, c, 2) for c in counts]).astype(np.int32)
    np.testing.assert_array_equal(even.lists.get(), want_even)
