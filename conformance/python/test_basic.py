"""pyopencl basics against the driver: discovery, device facts, building from source
and from SPIR-V, running kernels, and build failures surfacing as exceptions."""

import subprocess

import numpy as np
import pyopencl as cl
import pytest

from conftest import compile_spirv, require, is_cranecl


def test_platform_and_device(device):
    platform = device.platform
    assert platform.profile == "FULL_PROFILE"
    assert "cl_khr_icd" in platform.extensions.split()
    assert device.max_compute_units >= 1
    assert device.address_bits == 64
    if is_cranecl():
        assert platform.name == "cranecl"
        assert device.type & cl.device_type.CPU
        assert device.version.startswith("OpenCL 3.1 ")
        assert "SPIR-V" in device.il_version


SAXPY = """
kernel void saxpy(global float* y, global const float* x, const float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
"""


def run_saxpy(ctx, queue, program, n=10000):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    program.saxpy(queue, (n,), None, yb, xb, np.float32(1.75))
    out = np.empty_like(y)
    cl.enqueue_copy(queue, out, yb)
    np.testing.assert_allclose(out, 1.75 * x + y, rtol=1e-6, atol=1e-6)


def test_build_from_source_and_run(ctx, queue):
    program = cl.Program(ctx, SAXPY).build()
    run_saxpy(ctx, queue, program)


def test_build_from_spirv_and_run(ctx, device, queue):
    require("SPIR-V" in (device.il_version or ""), "SPIR-V programs")
    il = compile_spirv(SAXPY)
    program = cl.Program(ctx, il).build()
    assert program.get_info(cl.program_info.KERNEL_NAMES) == "saxpy"
    run_saxpy(ctx, queue, program)


# The shape of the Khronos LLVM/SPIR-V translator's output before 2019, as in
# pyopencl's own test_spirv module (add-vectors-64.spv): built-ins declared
# UniformConstant and imported by linkage, parameter attributes through a decoration
# group. Intel's runtime runs it.
LEGACY_TRANSLATOR_SUM = """
               OpCapability Addresses
               OpCapability Linkage
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "sum"
               OpDecorate %grp FuncParamAttr NoWrite
        %grp = OpDecorationGroup
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
               OpDecorate %gid LinkageAttributes "__spirv_BuiltInGlobalInvocationId" Import
               OpGroupDecorate %grp %a %b
      %ulong = OpTypeInt 64 0
       %uint = OpTypeInt 32 0
    %v3ulong = OpTypeVector %ulong 3
     %ptr_bi = OpTypePointer UniformConstant %v3ulong
       %void = OpTypeVoid
      %float = OpTypeFloat 32
         %pf = OpTypePointer CrossWorkgroup %float
         %ft = OpTypeFunction %void %pf %pf %pf
        %gid = OpVariable %ptr_bi UniformConstant
          %k = OpFunction %void None %ft
          %a = OpFunctionParameter %pf
          %b = OpFunctionParameter %pf
        %res = OpFunctionParameter %pf
      %entry = OpLabel
         %g3 = OpLoad %v3ulong %gid
       %call = OpCompositeExtract %ulong %g3 0
       %conv = OpUConvert %uint %call
        %idx = OpSConvert %ulong %conv
         %pa = OpInBoundsPtrAccessChain %pf %a %idx
         %va = OpLoad %float %pa Aligned 4
         %pb = OpInBoundsPtrAccessChain %pf %b %idx
         %vb = OpLoad %float %pb Aligned 4
        %add = OpFAdd %float %va %vb
         %pr = OpInBoundsPtrAccessChain %pf %res %idx
               OpStore %pr %add Aligned 4
               OpReturn
               OpFunctionEnd
"""


def test_legacy_translator_spirv_builtins(ctx, device, queue, tmp_path):
    require("SPIR-V" in (device.il_version or ""), "SPIR-V programs")
    src, spv = tmp_path / "sum.spvasm", tmp_path / "sum.spv"
    src.write_text(LEGACY_TRANSLATOR_SUM)
    subprocess.run(["spirv-as", "--target-env", "spv1.0", "-o", str(spv), str(src)], check=True)
    program = cl.Program(ctx, spv.read_bytes()).build()
    rng = np.random.default_rng(3)
    n = 50000
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    mf = cl.mem_flags
    ab = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    rb = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    program.sum(queue, (n,), None, ab, bb, rb)
    out = np.empty_like(a)
    cl.enqueue_copy(queue, out, rb)
    np.testing.assert_array_equal(out, a + b)


def test_build_options_and_local_size(ctx, queue):
    src = """
    kernel void fill(global int* o) {
        o[get_global_id(0)] = VALUE + (int)get_local_size(0);
    }
    """
    program = cl.Program(ctx, src).build(options=["-DVALUE=40"])
    out = np.zeros(64, dtype=np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    program.fill(queue, (64,), (2,), buf)
    cl.enqueue_copy(queue, out, buf)
    assert (out == 42).all()


def test_syntax_error_raises_with_log(ctx):
    program = cl.Program(ctx, "kernel void k(global int* o) { o[0] = 1 }")
    with pytest.raises(cl.RuntimeError) as info:
        program.build()
    text = str(info.value)
    assert "BUILD_PROGRAM_FAILURE" in text or "build program failure" in text.lower()
    assert "expected" in text


def test_2d_kernel_with_offset(ctx, queue):
    src = """
    kernel void grid(global int* o, int width) {
        int x = get_global_id(0), y = get_global_id(1);
        o[(y - 2) * width + (x - 3)] = x * 1000 + y;
    }
    """
    program = cl.Program(ctx, src).build()
    w, h = 40, 24
    out = np.zeros((h, w), dtype=np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    knl = cl.Kernel(program, "grid")
    knl.set_args(buf, np.int32(w))
    cl.enqueue_nd_range_kernel(queue, knl, (w, h), (8, 4), global_work_offset=(3, 2))
    cl.enqueue_copy(queue, out, buf)
    ys, xs = np.mgrid[0:h, 0:w]
    np.testing.assert_array_equal(out, (xs + 3) * 1000 + (ys + 2))


def test_map_and_use_host_ptr(ctx, queue):
    host = np.arange(1024, dtype=np.float32)
    mf = cl.mem_flags
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=host)
    program = cl.Program(ctx, "kernel void dbl(global float* a) { a[get_global_id(0)] *= 2.0f; }").build()
    program.dbl(queue, (1024,), None, buf)
    mapped, _ = cl.enqueue_map_buffer(queue, buf, cl.map_flags.READ, 0, host.shape, host.dtype)
    np.testing.assert_array_equal(mapped, np.arange(1024, dtype=np.float32) * 2)
    del mapped
    queue.finish()


SUBGROUP_SRC = """
__attribute__((intel_reqd_sub_group_size(%d)))
kernel void sg(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    out[3 * i] = get_sub_group_size();
    out[3 * i + 1] = sub_group_reduce_add(in[i]);
    out[3 * i + 2] = intel_sub_group_shuffle_xor(in[i], 1u);
}
"""


@pytest.mark.parametrize("width", [4, 8, 16])
@pytest.mark.parametrize("from_spirv", [False, True])
def test_sub_groups_at_required_width(ctx, device, queue, width, from_spirv):
    require("cl_intel_subgroups" in device.extensions.split(), "cl_intel_subgroups")
    src = SUBGROUP_SRC % width
    if from_spirv:
        require("SPIR-V" in (device.il_version or ""), "SPIR-V programs")
        program = cl.Program(ctx, compile_spirv(src)).build()
    else:
        program = cl.Program(ctx, src).build(options=["-cl-std=CL3.0"])
    n = 256
    data = (np.arange(n, dtype=np.int32) * 37) % 101
    mf = cl.mem_flags
    ib = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data)
    ob = cl.Buffer(ctx, mf.WRITE_ONLY, 3 * n * 4)
    program.sg(queue, (n,), (64,), ib, ob)
    out = np.empty(3 * n, dtype=np.int32)
    cl.enqueue_copy(queue, out, ob)
    out = out.reshape(n, 3)
    groups = data.reshape(-1, width)
    assert (out[:, 0] == width).all()
    np.testing.assert_array_equal(out[:, 1], np.repeat(groups.sum(axis=1), width))
    np.testing.assert_array_equal(out[:, 2], data[np.arange(n) ^ 1])


def test_thousands_of_small_launches(ctx, queue):
    # pyopencl workloads launch many tiny kernels; all must run, in order.
    program = cl.Program(ctx, "kernel void inc(global int* a, int s) { a[get_global_id(0)] += s; }").build()
    knl = cl.Kernel(program, "inc")
    a = np.zeros(32, dtype=np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
    for s in range(2000):
        knl.set_args(buf, np.int32(s % 7))
        cl.enqueue_nd_range_kernel(queue, knl, (32,), None)
    cl.enqueue_copy(queue, a, buf)
    assert (a == sum(s % 7 for s in range(2000))).all()
