"""pyopencl's binary cache on the driver: a program built once is stored as the
driver's binary (CL_PROGRAM_BINARIES) in a temporary cache directory and a second
context, or a second process, loads it from there with clCreateProgramWithBinary
without compiling the source again (on cranecl: without running clang at all), and
computes the same results. Also the raw binary round trip, pyopencl's own generated
kernels through the cache, a corrupted cache entry, and binaries of compiled
objects, libraries and executables reloaded with pyopencl.Program and linked with
pyopencl.link_program."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.characterize
import pyopencl.clmath as clmath
import pyopencl.invoker
import pyopencl.scan
import pytest
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel
from pyopencl.scan import InclusiveScanKernel

from conftest import CHILD_PRELUDE, is_cranecl, wanted_platform

BUILD_SUCCESS = 0  # CL_BUILD_SUCCESS

SOURCE = """
#include <pyopencl-complex.h>
kernel void poly(global const float *x, global float *y)
{
    size_t i = get_global_id(0);
    y[i] = SCALE * x[i] * x[i] - 3.0f * x[i] + 1.0f;
}
kernel void cmul(global const cfloat_t *a, global const cfloat_t *b, global cfloat_t *c)
{
    size_t i = get_global_id(0);
    c[i] = cfloat_new(a[i].real * b[i].real - a[i].imag * b[i].imag,
                      a[i].real * b[i].imag + a[i].imag * b[i].real);
}
constant int table[4] = {1, 10, 100, 1000};
kernel void lookup(global int *out) { out[get_global_id(0)] = table[get_global_id(0) % 4]; }
"""


@pytest.fixture()
def cache_on(monkeypatch, tmp_path):
    """pyopencl's binary cache in a temporary directory (the suite turns it off;
    pyopencl also skips it for platforms it believes cache builds themselves)."""
    monkeypatch.setattr(cl, "_PYOPENCL_NO_CACHE", False)
    monkeypatch.setattr(pyopencl.characterize, "has_src_build_cache", lambda dev: False)
    monkeypatch.setenv("PYOPENCL_CACHE_FAILURE_FATAL", "1")
    # pyopencl sets up its memos of generated code (kernel invokers, scan kernels)
    # only when the cache is on at import time: give them in-memory ones
    monkeypatch.setattr(pyopencl.invoker, "invoker_cache", _Memo(), raising=False)
    monkeypatch.setattr(pyopencl.scan, "generic_scan_kernel_cache", _Memo(), raising=False)
    return tmp_path / "pyopencl-cache"


class _Memo(dict):
    def store_if_not_present(self, key, value):
        self.setdefault(key, value)


def no_compiler(monkeypatch):
    """On cranecl, make any source compile fail from here on: loading from the cache
    must not need clang."""
    if is_cranecl():
        monkeypatch.setenv("CRANECL_CLANG", "/nonexistent/clang-for-cache-test")


def run_program(ctx, prg, rng_seed=3):
    queue = cl.CommandQueue(ctx)
    rng = np.random.default_rng(rng_seed)
    x = rng.standard_normal(10_007).astype(np.float32)
    a = (rng.standard_normal(999) + 1j * rng.standard_normal(999)).astype(np.complex64)
    b = (rng.standard_normal(999) + 1j * rng.standard_normal(999)).astype(np.complex64)
    dx, dy = cla.to_device(queue, x), cla.empty(queue, x.size, np.float32)
    prg.poly(queue, x.shape, None, dx.data, dy.data)
    da, db, dc = cla.to_device(queue, a), cla.to_device(queue, b), cla.empty(queue, a.size, np.complex64)
    prg.cmul(queue, a.shape, None, da.data, db.data, dc.data)
    dl = cla.empty(queue, 13, np.int32)
    prg.lookup(queue, (13,), None, dl.data)
    y, c, lookup = dy.get(), dc.get(), dl.get()
    np.testing.assert_allclose(y, 2.5 * x * x - 3 * x + 1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, a * b, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(lookup, [1, 10, 100, 1000] * 3 + [1])
    return y, c, lookup


def build(ctx, cache_dir, scale="2.5f"):
    prg = cl.Program(ctx, SOURCE).build(options=[f"-DSCALE={scale}"], cache_dir=str(cache_dir))
    descr, was_cached, _ = prg._build_duration_info
    return prg, was_cached, descr


def test_second_context_loads_from_the_cache(device, cache_on, monkeypatch):
    ctx1 = cl.Context([device])
    prg1, cached, descr = build(ctx1, cache_on)
    assert not cached, descr
    first = run_program(ctx1, prg1)
    entries = os.listdir(cache_on)
    assert any(os.path.exists(cache_on / e / "binary") for e in entries), entries

    no_compiler(monkeypatch)
    ctx2 = cl.Context([device])
    prg2, cached, descr = build(ctx2, cache_on)
    assert cached, descr
    assert descr == "cache retrieval"
    assert prg2.get_build_info(device, cl.program_build_info.BINARY_TYPE) == cl.program_binary_type.EXECUTABLE
    assert prg2.get_build_info(device, cl.program_build_info.STATUS) == BUILD_SUCCESS
    assert sorted(prg2.get_info(cl.program_info.KERNEL_NAMES).split(";")) == ["cmul", "lookup", "poly"]
    second = run_program(ctx2, prg2)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    # other options are another entry: a miss, which needs the compiler again
    monkeypatch.delenv("CRANECL_CLANG", raising=False)
    _, cached, _ = build(ctx2, cache_on, scale="2.5f+0.0f")
    assert not cached
    assert len(os.listdir(cache_on)) > len(entries)


def test_a_new_process_loads_what_this_one_cached(device, cache_on, monkeypatch, tmp_path):
    ctx = cl.Context([device])
    prg, cached, _ = build(ctx, cache_on)
    assert not cached
    want = run_program(ctx, prg)
    np.save(tmp_path / "want.npy", want[0])
    no_compiler(monkeypatch)
    child = CHILD_PRELUDE + f"""
import pyopencl.characterize
cl._PYOPENCL_NO_CACHE = False
pyopencl.characterize.has_src_build_cache = lambda dev: False
prg = cl.Program(ctx, {SOURCE!r}).build(options=["-DSCALE=2.5f"], cache_dir={str(cache_on)!r})
assert prg._build_duration_info[1], prg._build_duration_info
x = np.random.default_rng(3).standard_normal(10_007).astype(np.float32)
dx, dy = cla.to_device(queue, x), cla.empty(queue, x.size, np.float32)
prg.poly(queue, x.shape, None, dx.data, dy.data)
save("y", dy.get())
"""
    out = tmp_path / "child.npz"
    done = subprocess.run([sys.executable, "-c", child, str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    np.testing.assert_array_equal(np.load(out)["y"], np.load(tmp_path / "want.npy"))


def test_generated_kernels_through_the_cache(device, cache_on, monkeypatch):
    # pyopencl's own kernels (elementwise, reductions, scans, clmath) find the cache
    # directory through the context
    def compute(ctx):
        ctx.cache_dir = str(cache_on)
        queue = cl.CommandQueue(ctx)
        x = cla.to_device(queue, np.arange(20_000, dtype=np.float32) / 1000)
        total = cla.sum(x).get()
        sines = clmath.sin(x).get()
        scaled = (x * 3 + 1).get()
        knl = ElementwiseKernel(ctx, "float *z, float *x", "z[i] = x[i] * x[i]")
        sq = cla.empty_like(x)
        knl(sq, x)
        red = ReductionKernel(ctx, np.float32, "0", "a+b", "x[i]*x[i]", "__global float *x")
        ints = cla.to_device(queue, np.arange(5000, dtype=np.int32))
        InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")(ints)
        return total, sines, scaled, sq.get(), red(x).get(), ints.get()

    first = compute(cl.Context([device]))
    assert len(os.listdir(cache_on)) >= 5
    no_compiler(monkeypatch)
    second = compute(cl.Context([device]))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(second[5], np.cumsum(np.arange(5000)))


def test_binary_round_trip(ctx, device, monkeypatch):
    # clGetProgramInfo(CL_PROGRAM_BINARIES) -> clCreateProgramWithBinary, by hand
    prg = cl.Program(ctx, SOURCE).build(options=["-DSCALE=2.5f", "-I", cl._find_pyopencl_include_path()])
    (binary,) = prg.get_info(cl.program_info.BINARIES)
    assert binary and prg.get_info(cl.program_info.BINARY_SIZES) == [len(binary)]
    no_compiler(monkeypatch)
    ctx2 = cl.Context([device])
    loaded = cl.Program(ctx2, [device], [binary]).build()
    assert loaded.get_build_info(device, cl.program_build_info.STATUS) == BUILD_SUCCESS
    run_program(ctx2, loaded)
    # and once more from the loaded program's own binary
    (again,) = loaded.get_info(cl.program_info.BINARIES)
    run_program(ctx2, cl.Program(ctx2, [device], [again]).build())


@pytest.mark.parametrize("garbage", [b"", b"\x00" * 64, b"CRANECL\x02" + b"\xff" * 100, b"not a binary at all"],
                         ids=["empty", "zeros", "bad-body", "text"])
def test_invalid_binaries_are_rejected(ctx, device, garbage):
    if not garbage:
        with pytest.raises((cl.LogicError, cl.RuntimeError, ValueError)):
            cl.Program(ctx, [device], [garbage]).build()
        return
    with pytest.raises((cl.LogicError, cl.RuntimeError)) as info:
        cl.Program(ctx, [device], [garbage]).build()
    assert info.value.code in (cl.status_code.INVALID_BINARY, cl.status_code.BUILD_PROGRAM_FAILURE)


def test_corrupted_cache_entry_falls_back_to_the_source(device, cache_on, monkeypatch):
    ctx = cl.Context([device])
    prg, cached, _ = build(ctx, cache_on)
    assert not cached
    for entry in os.listdir(cache_on):
        path = cache_on / entry / "binary"
        if path.exists():
            path.write_bytes(b"\x00garbage" * 100)
    monkeypatch.setenv("PYOPENCL_CACHE_FAILURE_FATAL", "")
    ctx2 = cl.Context([device])
    with pytest.warns(UserWarning):
        prg2, cached, descr = build(ctx2, cache_on)
    assert not cached, descr
    run_program(ctx2, prg2)


# clCompileProgram through pyopencl bypasses its source cache, and it says so.
pytestmark = pytest.mark.filterwarnings("ignore:Pre-build attribute access")

# Runs in a fresh interpreter: pyopencl reads PYOPENCL_NO_CACHE at import.
CACHED_BUILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla

    want = sys.argv[1].lower()
    platform = next(p for p in cl.get_platforms() if want in p.name.lower())
    ctx = cl.Context(platform.get_devices()[:1])
    queue = cl.CommandQueue(ctx)
    src = '''
    #include <pyopencl-complex.h>
    inline float twice(float x) { return 2.0f * x; }
    kernel void scale(global float* a, float s) {
        int i = get_global_id(0);
        a[i] = twice(a[i]) * s;
    }
    kernel void rotate(global cfloat_t* z) {
        int i = get_global_id(0);
        z[i] = cfloat_mul(z[i], cfloat_new(0.0f, 1.0f));
    }
    '''
    prg = cl.Program(ctx, src).build(options=["-cl-mad-enable"], cache_dir=sys.argv[2])
    how, was_cached = prg._build_duration_info[:2]
    a = cla.to_device(queue, np.arange(1000, dtype=np.float32))
    prg.scale(queue, (1000,), None, a.data, np.float32(1.5))
    z = cla.to_device(queue, (np.arange(64) + 1j * np.arange(64)).astype(np.complex64))
    prg.rotate(queue, (64,), None, z.data)
    print(json.dumps({
        "how": how,
        "was_cached": was_cached,
        "a": a.get().tolist(),
        "z": [[c.real, c.imag] for c in z.get().tolist()],
    }))
    """
)


def run_cached_build(cache_dir):
    env = dict(os.environ)
    env.pop("PYOPENCL_NO_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", CACHED_BUILD, wanted_platform(), str(cache_dir)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_pyopencl_binary_cache_round_trip(tmp_path):
    first = run_cached_build(tmp_path)
    assert not first["was_cached"], first["how"]
    cached = [f for _, _, files in os.walk(tmp_path) for f in files if f == "binary"]
    assert cached, "pyopencl stored the program binary"
    second = run_cached_build(tmp_path)
    assert second["was_cached"], f"second build: {second['how']}"
    want_a = np.arange(1000, dtype=np.float32) * 2 * np.float32(1.5)
    want_z = [[-float(i), float(i)] for i in range(64)]
    for run in (first, second):
        np.testing.assert_array_equal(run["a"], want_a)
        assert run["z"] == want_z


HELPER = "float helper(float x) { return x * 3.0f + 1.0f; }"
USER = """
float helper(float x);
kernel void k(global float* a) { int i = get_global_id(0); a[i] = helper(a[i]); }
"""


def binary_type(prg, device):
    return prg.get_build_info(device, cl.program_build_info.BINARY_TYPE)


def reload(ctx, prg):
    (binary,) = prg.binaries
    assert len(binary) > 0
    return cl.Program(ctx, ctx.devices, [binary])


def run_k(queue, prg):
    a = cla.to_device(queue, np.arange(256, dtype=np.float32))
    prg.k(queue, (256,), None, a.data)
    np.testing.assert_array_equal(a.get(), np.arange(256, dtype=np.float32) * 3 + 1)


def test_binaries_of_every_type_through_pyopencl(ctx, queue, device):
    helper = cl.Program(ctx, HELPER).compile()
    user = cl.Program(ctx, USER).compile()
    assert binary_type(helper, device) == cl.program_binary_type.COMPILED_OBJECT
    lib = cl.link_program(ctx, [helper], options=["-create-library"])
    assert binary_type(lib, device) == cl.program_binary_type.LIBRARY

    user2 = reload(ctx, user)
    lib2 = reload(ctx, lib)
    assert binary_type(user2, device) == cl.program_binary_type.COMPILED_OBJECT
    assert binary_type(lib2, device) == cl.program_binary_type.LIBRARY
    exe = cl.link_program(ctx, [user2, lib2])
    assert binary_type(exe, device) == cl.program_binary_type.EXECUTABLE
    run_k(queue, exe)

    exe2 = reload(ctx, exe).build()
    assert binary_type(exe2, device) == cl.program_binary_type.EXECUTABLE
    run_k(queue, exe2)


def test_garbage_binary_is_refused(ctx):
    try:
        cl.Program(ctx, ctx.devices, [b"not a binary at all"]).build()
    except cl.Error as e:
        assert e.code == cl.status_code.INVALID_BINARY, e
    else:
        raise AssertionError("a garbage binary was accepted")
