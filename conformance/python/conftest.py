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
import time

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


# Set up in a child process by BudgetedChild: the platform under test, `ctx`, `queue`,
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
    """What a child process computed within its time budget (see BudgetedChild)."""

    def __init__(self, results, status, budget_s):
        self.results, self.status, self.budget_s = results, status, budget_s

    def __getitem__(self, name):
        if name in self.results:
            return self.results[name]
        if self.status == "timeout":
            raise TimeoutError(f"not computed within the budget of {self.budget_s} s of CPU time")
        raise AssertionError(f"the child process failed before computing {name!r}:\n{self.status}")


# A budget counts the child's CPU time (all its threads), so a loaded machine (CI
# runners, parallel test jobs, the other children) does not turn a build that fits
# into a timeout; wall time is capped at this many budgets in case the child waits on
# something forever.
WALL_BUDGETS = 5

# Fixture name -> BudgetedChild, filled by `budgeted` when test modules are imported.
_CHILDREN = {}


class BudgetedChild:
    """`script` (after CHILD_PRELUDE) in a child process stopped after `budget_s`
    seconds of CPU time (SIGXCPU): a build that takes minutes fails the tests that
    need its results instead of stalling the suite. The budgets are several times
    what Intel's and PoCL's runtimes need. Children whose fixture a selected test
    uses start when collection ends (pytest_collection_finish), so their long builds
    overlap the rest of the suite instead of adding to it."""

    def __init__(self, script, budget_s):
        self.script, self.budget_s = script, budget_s
        self.proc = self.dir = self.result = None

    def start(self):
        if self.proc is not None:
            return
        self.dir = tempfile.mkdtemp(prefix="cranecl-budgeted-")
        self.stderr = open(os.path.join(self.dir, "stderr"), "w+")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD_PRELUDE + self.script, os.path.join(self.dir, "results.npz")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
            preexec_fn=self._limit_cpu,
        )

    def _limit_cpu(self):
        resource.setrlimit(resource.RLIMIT_CPU, (self.budget_s, self.budget_s + 5))

    def wait(self):
        """What the child computed (a Budgeted), waiting for it to end."""
        if self.result is not None:
            return self.result
        self.start()
        left = WALL_BUDGETS * self.budget_s - (time.monotonic() - self.started)
        try:
            code = self.proc.wait(timeout=max(left, 0.1))
            if code in (-signal.SIGXCPU, -signal.SIGKILL):
                status = "timeout"
            elif code:
                self.stderr.seek(0)
                status = self.stderr.read()[-4000:]
            else:
                status = None
        except subprocess.TimeoutExpired:
            self.stop()
            status = "timeout"
        out = os.path.join(self.dir, "results.npz")
        results = dict(np.load(out)) if os.path.exists(out) else {}
        self.result = Budgeted(results, status, self.budget_s)
        return self.result

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def clean_up(self):
        self.stop()
        if self.dir is not None:
            self.stderr.close()
            shutil.rmtree(self.dir, ignore_errors=True)


def budgeted(fixture_name, script, budget_s):
    """Registers the child that module-scoped fixture `fixture_name` waits for (see
    BudgetedChild); the fixture returns `child.wait()`."""
    child = BudgetedChild(script, budget_s)
    _CHILDREN[fixture_name] = child
    return child


def pytest_collection_finish(session):
    wanted = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    for name, child in _CHILDREN.items():
        if name in wanted:
            child.start()


def pytest_sessionfinish(session):
    for child in _CHILDREN.values():
        child.clean_up()


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
