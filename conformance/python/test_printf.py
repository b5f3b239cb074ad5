"""Kernel printf seen from pyopencl: the output reaches the process's standard output
(file descriptor 1, captured with capfd) by the time queue.finish() returns, and
matches Python's C-style % formatting of the same values (chosen where Python and C
agree: no `%#x` of 0)."""

import numpy as np
import pyopencl as cl

from conftest import is_cranecl

SRC = r"""
kernel void k(global int* ret, float x) {
    int i = get_global_id(0);
    ret[i] = printf("%d: %5.2f %#x %s|%v2hld\n", i, x * i, (i + 1) * 255, "done", (int2)(i, -i));
}
"""


def test_kernel_printf_reaches_stdout(ctx, queue, capfd):
    prg = cl.Program(ctx, SRC).build()
    capfd.readouterr()
    n = 6
    ret = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * n)
    prg.k(queue, (n,), (n,), ret, np.float32(1.5))
    queue.finish()
    out, _ = capfd.readouterr()
    want = ["%d: %5.2f %#x %s|%d,%d\n" % (i, 1.5 * i, (i + 1) * 255, "done", i, -i) for i in range(n)]
    lines = out.splitlines(keepends=True)
    if not is_cranecl():
        lines.sort(key=lambda line: int(line.split(":")[0]))
    assert lines == want
    got = np.empty(n, np.int32)
    cl.enqueue_copy(queue, got, ret)
    if is_cranecl():
        # OpenCL C: 0 on success (Intel's CPU runtime returns the character count).
        assert (got == 0).all()
