//! `clEnqueueNativeKernel` (`CL_EXEC_NATIVE_KERNEL`): a host function run as a command
//! of the queue, with a copy of its argument block whose memory-object slots hold the
//! buffers' device pointers; ordering with kernels and transfers, and every error the
//! spec names for its arguments.

use std::ffi::c_void;
use std::ptr;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// The argument block the tests hand over: a count and two buffer slots.
#[repr(C)]
#[derive(Clone, Copy)]
struct Args {
    n: usize,
    src: *mut c_void,
    dst: *mut c_void,
    scale: u32,
}

/// dst[i] = src[i] * scale + i, through the device pointers the driver put in.
extern "C" fn scale_copy(p: *mut c_void) {
    // SAFETY: the driver hands over its copy of an `Args` block whose pointer slots
    // hold the device pointers of buffers of `n` u32 each.
    unsafe {
        let a = &*p.cast::<Args>();
        let src = std::slice::from_raw_parts(a.src.cast::<u32>(), a.n);
        let dst = std::slice::from_raw_parts_mut(a.dst.cast::<u32>(), a.n);
        for i in 0..a.n {
            dst[i] = src[i] * a.scale + i as u32;
        }
    }
}

extern "C" fn nothing(_: *mut c_void) {}

fn native_supported(ctx: &DeviceContext) -> bool {
    let caps: cl_device_exec_capabilities =
        device_info(ctx.device, CL_DEVICE_EXECUTION_CAPABILITIES).expect("exec capabilities");
    caps & CL_EXEC_NATIVE_KERNEL != 0
}

#[allow(clippy::too_many_arguments)]
fn enqueue(
    ctx: &DeviceContext,
    f: Option<extern "C" fn(*mut c_void)>,
    args: *mut c_void,
    cb: usize,
    mems: &[cl_mem],
    locs: &[*const c_void],
    mem_list_null: bool,
) -> cl_int {
    // SAFETY: plain call; the pointers are valid or deliberately NULL.
    unsafe {
        clEnqueueNativeKernel(
            ctx.queue.raw(),
            f,
            args,
            cb,
            mems.len() as cl_uint,
            if mem_list_null || mems.is_empty() {
                ptr::null()
            } else {
                mems.as_ptr()
            },
            if locs.is_empty() {
                ptr::null()
            } else {
                locs.as_ptr()
            },
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    }
}

#[test]
fn native_kernel_reads_and_writes_buffers_in_queue_order() {
    let ctx = DeviceContext::new();
    if !require(native_supported(&ctx), "CL_EXEC_NATIVE_KERNEL") {
        return;
    }
    let n = 1000usize;
    let input: Vec<u32> = (0..n as u32).map(|i| i * 7 + 3).collect();
    let src = ctx.buffer_zeroed::<u32>(n);
    let dst = ctx.buffer_zeroed::<u32>(n);
    // A transfer before and a kernel after the native command: queue order holds.
    ctx.write_at(&src, 0, &input);
    let mut args = Args {
        n,
        src: ptr::null_mut(),
        dst: ptr::null_mut(),
        scale: 3,
    };
    let mems = [src.raw(), dst.raw()];
    let locs = [
        ptr::addr_of!(args.src).cast::<c_void>(),
        ptr::addr_of!(args.dst).cast::<c_void>(),
    ];
    let block = ptr::addr_of_mut!(args).cast::<c_void>();
    let rc = enqueue(
        &ctx,
        Some(scale_copy),
        block,
        size_of::<Args>(),
        &mems,
        &locs,
        false,
    );
    assert_eq!(rc, CL_SUCCESS, "clEnqueueNativeKernel: {}", error_name(rc));
    // The driver copied the block: changing it now must not matter.
    args.scale = 1000;
    let k = ctx.kernel(
        "kernel void inc(global uint *d) { d[get_global_id(0)] += 1; }",
        "",
        "inc",
    );
    k.arg_buffer(0, &dst);
    ctx.run(&k, &[n], None);
    let got: Vec<u32> = ctx.read(&dst, n);
    let want: Vec<u32> = (0..n).map(|i| input[i] * 3 + i as u32 + 1).collect();
    assert_eq!(got, want);
    // The application's block keeps its NULL handles' slots: only the copy changed.
    assert!(args.src.is_null() && args.dst.is_null());
}

#[test]
fn native_kernel_argument_errors() {
    let ctx = DeviceContext::new();
    if !require(native_supported(&ctx), "CL_EXEC_NATIVE_KERNEL") {
        return;
    }
    let buf = ctx.buffer_zeroed::<u32>(4);
    let mut args = Args {
        n: 0,
        src: ptr::null_mut(),
        dst: ptr::null_mut(),
        scale: 0,
    };
    let block = ptr::addr_of_mut!(args).cast::<c_void>();
    let cb = size_of::<Args>();
    let loc = [ptr::addr_of!(args.src).cast::<c_void>()];
    let mem = [buf.raw()];
    // No function.
    assert_eq!(
        enqueue(&ctx, None, block, cb, &[], &[], false),
        CL_INVALID_VALUE
    );
    // args NULL with cb_args > 0, args given with cb_args 0.
    assert_eq!(
        enqueue(&ctx, Some(nothing), ptr::null_mut(), cb, &[], &[], false),
        CL_INVALID_VALUE
    );
    assert_eq!(
        enqueue(&ctx, Some(nothing), block, 0, &[], &[], false),
        CL_INVALID_VALUE
    );
    // Memory objects without an argument block, or without their lists.
    assert_eq!(
        enqueue(&ctx, Some(nothing), ptr::null_mut(), 0, &mem, &loc, false),
        CL_INVALID_VALUE
    );
    assert_eq!(
        enqueue(&ctx, Some(nothing), block, cb, &mem, &loc, true),
        CL_INVALID_VALUE
    );
    assert_eq!(
        enqueue(&ctx, Some(nothing), block, cb, &mem, &[], false),
        CL_INVALID_VALUE
    );
    // A location outside the block.
    let outside = [block
        .cast::<u8>()
        .wrapping_add(cb - 4)
        .cast::<c_void>()
        .cast_const()];
    assert_eq!(
        enqueue(&ctx, Some(nothing), block, cb, &mem, &outside, false),
        CL_INVALID_VALUE
    );
    // A handle that is no memory object.
    let bogus = [ctx.queue.raw().cast::<c_void>() as cl_mem];
    assert_eq!(
        enqueue(&ctx, Some(nothing), block, cb, &bogus, &loc, false),
        CL_INVALID_MEM_OBJECT
    );
    // Valid: no block at all, and a block without memory objects.
    assert_eq!(
        enqueue(&ctx, Some(nothing), ptr::null_mut(), 0, &[], &[], false),
        CL_SUCCESS
    );
    assert_eq!(
        enqueue(&ctx, Some(nothing), block, cb, &[], &[], false),
        CL_SUCCESS
    );
    ctx.finish();
}
