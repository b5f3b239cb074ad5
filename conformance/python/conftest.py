"""Shared fixtures for the pyopencl conformance tests.

The platform under test is the first whose name contains CRANECL_TEST_PLATFORM
(case-insensitive, default "cranecl"), found through the ICD loader exactly as any
pyopencl application finds it (OCL_ICD_VENDORS for a driver outside /etc/OpenCL).
Features that only cranecl promises are asserted on cranecl and skipped elsewhere
(see `require`).
"""

import os
import shutil
import subprocess
import tempfile

import pyopencl as cl
import pytest

# pyopencl's on-disk binary cache would hide driver build behaviour between runs.
os.environ.setdefault("PYOPENCL_NO_CACHE", "1")


def wanted_platform():
    return os.environ.get("CRANECL_TEST_PLATFORM", "cranecl")


def is_cranecl():
    return "cranecl" in wanted_platform().lower()


def require(supported, what):
    """Skip (elsewhere) or fail (on cranecl) when a promised feature is missing."""
    if supported:
        return
    if is_cranecl():
        pytest.fail(f"cranecl must support {what}")
    pytest.skip(f"platform {wanted_platform()!r} lacks {what}")


@pytest.fixture(scope="session")
def device():
    want = wanted_platform().lower()
    names = []
    for platform in cl.get_platforms():
        names.append(platform.name)
        if want in platform.name.lower():
            devices = platform.get_devices()
            assert devices, f"platform {platform.name} has no device"
            return devices[0]
    pytest.fail(
        f"no OpenCL platform named like {want!r} (found {names}); "
        f"OCL_ICD_VENDORS={os.environ.get('OCL_ICD_VENDORS')!r}"
    )


@pytest.fixture(scope="session")
def ctx(device):
    return cl.Context([device])


@pytest.fixture()
def queue(ctx):
    return cl.CommandQueue(ctx)


def clang_binary():
    explicit = os.environ.get("CRANECL_TEST_CLANG")
    if explicit:
        return explicit
    for name in ("clang-22", "clang-21", "clang-20"):
        if shutil.which(name):
            return name
    return None


def compile_spirv(source, extra=()):
    """OpenCL C -> SPIR-V bytes with the same clang the driver uses."""
    clang = clang_binary()
    if clang is None:
        pytest.fail("no clang-22/21/20 for test-time SPIR-V (set CRANECL_TEST_CLANG)")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.cl")
        out = os.path.join(tmp, "k.spv")
        with open(src, "w") as f:
            f.write(source)
        cmd = [
            clang, "-cc1", "-triple", "spirv64-unknown-unknown", "-cl-std=CL3.0",
            "-finclude-default-header", "-O2",
            "-cl-ext=+cl_khr_subgroups,+cl_intel_subgroups,+__opencl_c_subgroups",
            "-mllvm", "-spirv-ext=+SPV_INTEL_subgroups",
            *extra, "-emit-obj", "-o", out, src,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stderr}"
        with open(out, "rb") as f:
            return f.read()
