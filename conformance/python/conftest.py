"""Shared fixtures for the pyopencl conformance tests.

The platform under test is the first whose name contains CRANECL_TEST_PLATFORM
(case-insensitive, default "cranecl"), found through the ICD loader exactly as any
pyopencl application finds it (OCL_ICD_VENDORS for a driver outside /etc/OpenCL).
Features that only cranecl promises are asserted on cranecl and skipped elsewhere
(see `require`).
"""

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

# pyopencl's on-disk binary cache would hide driver build behaviour between runs. It
# reads this at import time, so it must be set before pyopencl is imported
# (test_binary_cache.py turns the cache back on, in a temporary directory).
os.environ.setdefault("PYOPENCL_NO_CACHE", "1")

import numpy as np  # noqa: E402
import pyopencl as cl  # noqa: E402
import pytest  # noqa: E402


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


def known_failure(reason, raises=cl.RuntimeError):
    """Marks a test that fails on cranecl today because of a bug another helper of
    issue 7 owns (the reason names it and the owner). Strict: the test must fail
    there, with `raises` (by default the build failure pyopencl raises), so it turns
    red when the fix lands and the marker must then go, and any other failure is
    reported as one. Other platforms run the test normally."""
    return pytest.mark.xfail(is_cranecl(), reason=reason, raises=raises, strict=True)


def has_fp64(device):
    return "cl_khr_fp64" in device.extensions.split()


@pytest.fixture()
def rng():
    return np.random.default_rng(20240607)


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


# Set up in a child process by run_with_budget: the platform under test, `ctx`, `queue`,
# `np`, `cl`, `cla`, and `save(name, array)`, which makes a result visible to the
# parent as soon as it is computed.
CHILD_PRELUDE = r"""
import os, sys
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
_want = os.environ.get("CRANECL_TEST_PLATFORM", "cranecl").lower()
_dev = next(p for p in cl.get_platforms() if _want in p.name.lower()).get_devices()[0]
ctx = cl.Context([_dev])
queue = cl.CommandQueue(ctx)
_out = sys.argv[1]
_results = {}
def save(name, value):
    _results[name] = np.asarray(value)
    np.savez(_out + ".tmp.npz", **_results)
    os.replace(_out + ".tmp.npz", _out)
"""


class Budgeted:
    """What a child process computed within its time budget (see run_with_budget)."""

    def __init__(self, results, status, budget_s):
        self.results, self.status, self.budget_s = results, status, budget_s

    def __getitem__(self, name):
        if name in self.results:
            return self.results[name]
        if self.status == "timeout":
            raise TimeoutError(f"not computed within the budget of {self.budget_s} s of CPU time")
        raise AssertionError(f"the child process failed before computing {name!r}:\n{self.status}")


# A budget counts the child's CPU time (all its threads), so a loaded machine (CI
# runners, parallel test jobs) does not turn a build that fits into a timeout; wall
# time is capped at this many budgets in case the child waits on something forever.
WALL_BUDGETS = 5


def _limit_cpu(budget_s):
    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (budget_s, budget_s + 5))

    return limit


def run_with_budget(tmp_path, script, budget_s):
    """Runs `script` (after CHILD_PRELUDE) in a child process and stops it after
    `budget_s` seconds of CPU time (SIGXCPU): a build that takes minutes fails the
    tests that need its results instead of stalling the suite. The budgets are
    several times what Intel's and PoCL's runtimes need."""
    out = tmp_path / "results.npz"
    cmd = [sys.executable, "-c", CHILD_PRELUDE + script, str(out)]
    try:
        done = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=WALL_BUDGETS * budget_s,
            preexec_fn=_limit_cpu(budget_s),
        )
        if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            status = "timeout"
        else:
            status = done.stderr[-4000:] if done.returncode else None
    except subprocess.TimeoutExpired:
        status = "timeout"
    results = dict(np.load(out)) if out.exists() else {}
    return Budgeted(results, status, budget_s)


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
