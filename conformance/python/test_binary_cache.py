"""Program binaries through pyopencl: its on-disk binary cache (a build in a second
process comes from the cached binary and gives the same results), and binaries of
compiled objects, libraries and executables reloaded with pyopencl.Program and
linked with pyopencl.link_program."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

from conftest import wanted_platform

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
