//! Bad input gives the specified error code and a readable log, and the application
//! keeps running: NULL / invalid / released / wrong-type handles, NULL pointers, wrong
//! sizes, bad ND-ranges and kernel arguments, garbage SPIR-V, unknown kernel names,
//! OpenCL C syntax errors, and a missing clang (`CRANECL_CLANG=/nonexistent`, checked
//! in a child process because environment variables are process-global).
//!
//! Handles that are not NULL but invalid (freed, forged, of another type) can only be
//! passed safely to the driver itself: a loader dereferences them. Those cases call
//! the driver directly (`CRANECL_LIB`) and run on cranecl only.

use std::ffi::{c_char, c_void, CString};
use std::ptr;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const OK_SRC: &str = "kernel void k(global int* o, int v) { o[get_global_id(0)] = v; }";

#[test]
fn null_handles_through_the_loader() {
    let ctx = DeviceContext::new();
    let null = ptr::null_mut();
    let mut err = 0;
    let mut size = 0usize;
    // SAFETY: NULL handles; outputs valid.
    unsafe {
        assert_eq!(
            clGetDeviceInfo(null, CL_DEVICE_NAME, 0, null, &mut size),
            CL_INVALID_DEVICE
        );
        assert_eq!(
            clGetContextInfo(null, CL_CONTEXT_NUM_DEVICES, 0, null, &mut size),
            CL_INVALID_CONTEXT
        );
        assert_eq!(
            clGetCommandQueueInfo(null, CL_QUEUE_DEVICE, 0, null, &mut size),
            CL_INVALID_COMMAND_QUEUE
        );
        assert_eq!(
            clGetMemObjectInfo(null, CL_MEM_SIZE, 0, null, &mut size),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(
            clGetProgramInfo(null, CL_PROGRAM_SOURCE, 0, null, &mut size),
            CL_INVALID_PROGRAM
        );
        assert_eq!(
            clGetKernelInfo(null, CL_KERNEL_NUM_ARGS, 0, null, &mut size),
            CL_INVALID_KERNEL
        );
        assert_eq!(
            clGetEventInfo(null, CL_EVENT_COMMAND_TYPE, 0, null, &mut size),
            CL_INVALID_EVENT
        );
        assert_eq!(clReleaseMemObject(null), CL_INVALID_MEM_OBJECT);
        assert_eq!(clRetainContext(null), CL_INVALID_CONTEXT);
        assert_eq!(clFinish(null), CL_INVALID_COMMAND_QUEUE);
        assert!(clCreateCommandQueue(null, ctx.device, 0, &mut err).is_null());
        assert_eq!(err, CL_INVALID_CONTEXT);
        assert!(clCreateBuffer(null, CL_MEM_READ_WRITE, 64, null, &mut err).is_null());
        assert_eq!(err, CL_INVALID_CONTEXT);
        assert_eq!(
            clBuildProgram(null, 0, ptr::null(), ptr::null(), None, null),
            CL_INVALID_PROGRAM
        );
        let name = CString::new("k").unwrap();
        assert!(clCreateKernel(null, name.as_ptr(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_PROGRAM);
        let queue_null = clCreateCommandQueue(ctx.context.raw(), null, 0, &mut err);
        assert!(queue_null.is_null());
        assert_eq!(err, CL_INVALID_DEVICE);
    }
}

#[test]
fn null_pointers_and_wrong_sizes() {
    let ctx = DeviceContext::new();
    let null: *mut c_void = ptr::null_mut();
    let mut err = 0;
    // SAFETY: every call below passes NULL or valid pointers; the driver must reject the NULLs.
    unsafe {
        assert_eq!(
            clGetPlatformIDs(0, null.cast(), null.cast()),
            CL_INVALID_VALUE,
            "clGetPlatformIDs(0, NULL, NULL)"
        );
        assert!(clCreateContext(ptr::null(), 0, ptr::null(), None, null, &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE, "clCreateContext without devices");
        assert!(clCreateContext(ptr::null(), 1, ptr::null(), None, null, &mut err).is_null());
        assert_eq!(
            err, CL_INVALID_VALUE,
            "clCreateContext with NULL device list"
        );
        assert!(clCreateProgramWithSource(
            ctx.context.raw(),
            0,
            ptr::null(),
            ptr::null(),
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_INVALID_VALUE, "clCreateProgramWithSource count 0");
        if testing_cranecl() {
            // PoCL 3.1 crashes on these.
            assert!(clCreateProgramWithSource(
                ctx.context.raw(),
                1,
                ptr::null(),
                ptr::null(),
                &mut err
            )
            .is_null());
            assert_eq!(
                err, CL_INVALID_VALUE,
                "clCreateProgramWithSource NULL strings"
            );
            let strings = [ptr::null::<c_char>()];
            assert!(clCreateProgramWithSource(
                ctx.context.raw(),
                1,
                strings.as_ptr(),
                ptr::null(),
                &mut err
            )
            .is_null());
            assert_eq!(
                err, CL_INVALID_VALUE,
                "clCreateProgramWithSource with a NULL string"
            );
        }
        assert!(clCreateProgramWithIL(ctx.context.raw(), ptr::null(), 0, &mut err).is_null());
        assert!(
            err == CL_INVALID_VALUE || err == CL_INVALID_OPERATION,
            "clCreateProgramWithIL(NULL): {}",
            error_name(err)
        );

        let buf = ctx.buffer_zeroed::<u32>(16);
        let code = clEnqueueReadBuffer(
            ctx.queue.raw(),
            buf.raw(),
            CL_TRUE,
            0,
            64,
            null,
            0,
            ptr::null(),
            null.cast(),
        );
        assert_eq!(code, CL_INVALID_VALUE, "read into NULL");
        let code = clEnqueueWriteBuffer(
            ctx.queue.raw(),
            buf.raw(),
            CL_TRUE,
            0,
            64,
            ptr::null(),
            0,
            ptr::null(),
            null.cast(),
        );
        assert_eq!(code, CL_INVALID_VALUE, "write from NULL");
        let data = [0u32; 32];
        let code = clEnqueueWriteBuffer(
            ctx.queue.raw(),
            buf.raw(),
            CL_TRUE,
            0,
            128,
            data.as_ptr().cast(),
            0,
            ptr::null(),
            null.cast(),
        );
        assert_eq!(code, CL_INVALID_VALUE, "write beyond the buffer");
        let code = clEnqueueReadBuffer(
            ctx.queue.raw(),
            buf.raw(),
            CL_TRUE,
            0,
            64,
            data.as_ptr() as *mut c_void,
            1,
            ptr::null(),
            null.cast(),
        );
        assert_eq!(
            code, CL_INVALID_EVENT_WAIT_LIST,
            "wait list count without a list"
        );
        assert_eq!(
            clWaitForEvents(0, ptr::null()),
            CL_INVALID_VALUE,
            "clWaitForEvents(0, NULL)"
        );
        let events = [ptr::null_mut::<c_void>()];
        assert_eq!(
            clWaitForEvents(1, events.as_ptr()),
            CL_INVALID_EVENT,
            "clWaitForEvents with a NULL event"
        );

        let mut small = 0u8;
        let code = clGetDeviceInfo(
            ctx.device,
            CL_DEVICE_MAX_COMPUTE_UNITS,
            1,
            (&mut small as *mut u8).cast(),
            null.cast(),
        );
        assert_eq!(
            code, CL_INVALID_VALUE,
            "param_value_size smaller than the value"
        );
        let code = clGetDeviceInfo(ctx.device, CL_DEVICE_NAME, 0, null, null.cast());
        assert_eq!(
            code, CL_SUCCESS as cl_int,
            "both outputs NULL is a valid no-op query"
        );
    }
    // The application keeps working after all of this.
    let kernel = ctx.kernel(OK_SRC, "", "k");
    let out = ctx.buffer_zeroed::<i32>(8);
    kernel.arg_buffer(0, &out).arg(1, 9i32);
    ctx.run(&kernel, &[8], None);
    assert_eq!(ctx.read::<i32>(&out, 8), vec![9; 8]);
}

#[test]
fn kernel_creation_errors() {
    let ctx = DeviceContext::new();
    let program = ctx.build(OK_SRC, "");
    let err = program.try_kernel("no_such_kernel").unwrap_err();
    assert_eq!(err.code, CL_INVALID_KERNEL_NAME);
    let err = program.try_kernel("__clang_ocl_kern_imp_k").unwrap_err();
    assert_eq!(
        err.code, CL_INVALID_KERNEL_NAME,
        "clang's internal clone is not a kernel"
    );
    let mut code = 0;
    // SAFETY: NULL name.
    let k = unsafe { clCreateKernel(program.raw(), ptr::null(), &mut code) };
    assert!(k.is_null());
    assert_eq!(code, CL_INVALID_VALUE, "NULL kernel name");
    let unbuilt = ctx.try_program_from_source(OK_SRC).unwrap();
    assert_eq!(
        unbuilt.try_kernel("k").unwrap_err().code,
        CL_INVALID_PROGRAM_EXECUTABLE
    );
    // Building a program that has kernels attached is CL_INVALID_OPERATION.
    let kernel = program.kernel("k");
    let device = ctx.device;
    // SAFETY: valid program and device list of one.
    let code = unsafe {
        clBuildProgram(
            program.raw(),
            1,
            &device,
            ptr::null(),
            None,
            ptr::null_mut(),
        )
    };
    assert_eq!(code, CL_INVALID_OPERATION);
    drop(kernel);
}

#[test]
fn kernel_argument_errors() {
    let ctx = DeviceContext::new();
    let src = "kernel void k(global int* o, int v, local float* l, float4 f) { o[0] = v + (int)l[0] + (int)f.x; }";
    let kernel = ctx.kernel(src, "", "k");
    let v = 1i32;
    let bytes = as_bytes(std::slice::from_ref(&v));
    assert_eq!(
        kernel
            .try_set_arg_bytes(4, Some(bytes), 4)
            .unwrap_err()
            .code,
        CL_INVALID_ARG_INDEX
    );
    assert_eq!(
        kernel
            .try_set_arg_bytes(1, Some(bytes), 8)
            .unwrap_err()
            .code,
        CL_INVALID_ARG_SIZE,
        "int given 8 bytes"
    );
    assert_eq!(
        kernel.try_set_arg_bytes(1, None, 4).unwrap_err().code,
        CL_INVALID_ARG_VALUE,
        "scalar with NULL value"
    );
    // A zero-size local argument is valid from OpenCL 3.1 on (an error before):
    // kernels_local::zero_size_local_argument_follows_the_platform_version.
    assert_eq!(
        kernel
            .try_set_arg_bytes(2, Some(bytes), 4)
            .unwrap_err()
            .code,
        CL_INVALID_ARG_VALUE,
        "local with a value"
    );
    assert_eq!(
        kernel
            .try_set_arg_bytes(3, Some(&[0u8; 8]), 8)
            .unwrap_err()
            .code,
        CL_INVALID_ARG_SIZE,
        "float4 given 8 bytes"
    );
    assert_eq!(
        kernel
            .try_set_arg_bytes(0, Some(bytes), 4)
            .unwrap_err()
            .code,
        CL_INVALID_ARG_SIZE,
        "buffer given 4 bytes"
    );
    // A NULL buffer is allowed for global pointers.
    let null_mem = 0usize;
    let nb = as_bytes(std::slice::from_ref(&null_mem));
    kernel.try_set_arg_bytes(0, Some(nb), 8).unwrap();
    // Enqueue with arguments missing.
    let err = ctx
        .try_enqueue(&kernel, None, &[1], None)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(err.code, CL_INVALID_KERNEL_ARGS);
    if testing_cranecl() {
        // A handle of the wrong type (a context where a buffer belongs) is rejected,
        // not dereferenced as a buffer.
        let wrong = ctx.context.raw() as usize;
        let wb = as_bytes(std::slice::from_ref(&wrong));
        assert_eq!(
            kernel.try_set_arg_bytes(0, Some(wb), 8).unwrap_err().code,
            CL_INVALID_MEM_OBJECT
        );
    }
}

#[test]
fn nd_range_errors() {
    let ctx = DeviceContext::new();
    let kernel = ctx.kernel(OK_SRC, "", "k");
    let out = ctx.buffer_zeroed::<i32>(4096);
    kernel.arg_buffer(0, &out).arg(1, 1i32);
    let enqueue =
        |dims: u32, offset: *const usize, global: *const usize, local: *const usize| -> cl_int {
            // SAFETY: the arrays passed below have `dims` elements or are NULL.
            unsafe {
                clEnqueueNDRangeKernel(
                    ctx.queue.raw(),
                    kernel.raw(),
                    dims,
                    offset,
                    global,
                    local,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                )
            }
        };
    let g = [64usize, 1, 1, 1];
    assert_eq!(
        enqueue(0, ptr::null(), g.as_ptr(), ptr::null()),
        CL_INVALID_WORK_DIMENSION
    );
    assert_eq!(
        enqueue(4, ptr::null(), g.as_ptr(), ptr::null()),
        CL_INVALID_WORK_DIMENSION
    );
    // A NULL global size: CL_INVALID_GLOBAL_WORK_SIZE before version 2.1, an empty
    // range since (cranecl reports 3.0; api_validation.rs checks the no-op).
    let code = enqueue(1, ptr::null(), ptr::null(), ptr::null());
    if testing_cranecl() {
        assert_eq!(error_name(code), "CL_SUCCESS", "NULL global size");
    } else {
        assert!(
            code == CL_INVALID_GLOBAL_WORK_SIZE || code == CL_SUCCESS as cl_int,
            "NULL global size: {}",
            error_name(code)
        );
    }
    let max_wg: usize = device_info(ctx.device, CL_DEVICE_MAX_WORK_GROUP_SIZE).unwrap();
    let big = [max_wg * 2];
    let code = enqueue(1, ptr::null(), big.as_ptr(), big.as_ptr());
    assert!(
        code == CL_INVALID_WORK_GROUP_SIZE || code == CL_INVALID_WORK_ITEM_SIZE,
        "local above the maximum: {}",
        error_name(code)
    );
    // In an OpenCL C 1.2 program the global size must be a multiple of the local size.
    let l = [48usize];
    let code = enqueue(1, ptr::null(), g.as_ptr(), l.as_ptr());
    assert_eq!(
        code, CL_INVALID_WORK_GROUP_SIZE,
        "64 work-items in groups of 48 (OpenCL C 1.2)"
    );
    let zero = [0usize];
    if testing_cranecl() {
        // PoCL 3.1 accepts a zero local size (and then aborts running it).
        let code = enqueue(1, ptr::null(), g.as_ptr(), zero.as_ptr());
        assert!(
            code == CL_INVALID_WORK_GROUP_SIZE || code == CL_INVALID_WORK_ITEM_SIZE,
            "local size 0: {}",
            error_name(code)
        );
    }
    // reqd_work_group_size must be matched exactly.
    let src = "__attribute__((reqd_work_group_size(16, 1, 1))) kernel void r(global int* o) { o[get_global_id(0)] = 1; }";
    let fixed = ctx.kernel(src, "", "r");
    fixed.arg_buffer(0, &out);
    let l8 = [8usize];
    // SAFETY: one-dimensional arrays.
    let code = unsafe {
        clEnqueueNDRangeKernel(
            ctx.queue.raw(),
            fixed.raw(),
            1,
            ptr::null(),
            g.as_ptr(),
            l8.as_ptr(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(
        code, CL_INVALID_WORK_GROUP_SIZE,
        "local 8 for reqd_work_group_size(16)"
    );
    ctx.run(&fixed, &[64], Some(&[16]));
    if testing_cranecl() {
        // Offsets that overflow size_t (PoCL 3.1 accepts them).
        let off = [usize::MAX - 10];
        let code = enqueue(1, off.as_ptr(), g.as_ptr(), ptr::null());
        assert_eq!(
            code, CL_INVALID_GLOBAL_OFFSET,
            "offset + global size overflows"
        );
    }
    ctx.finish();
}

#[test]
fn syntax_error_gives_build_failure_with_log() {
    let ctx = DeviceContext::new();
    let src = "kernel void k(global int* o) {\n    o[0] = 1\n    o[1] = 2;\n}\n";
    let program = ctx.try_program_from_source(src).unwrap();
    let device = ctx.device;
    // SAFETY: valid program and device.
    let code = unsafe {
        clBuildProgram(
            program.raw(),
            1,
            &device,
            ptr::null(),
            None,
            ptr::null_mut(),
        )
    };
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    let log = ctx.build_log(&program);
    assert!(log.contains("error"), "the log reports an error: {log:?}");
    assert!(
        log.contains("expected ';'"),
        "the log carries clang's diagnostic: {log:?}"
    );
    let status: cl_int = query_value("CL_PROGRAM_BUILD_STATUS", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetProgramBuildInfo(program.raw(), device, CL_PROGRAM_BUILD_STATUS, n, p, r) }
    })
    .unwrap();
    assert_eq!(status, CL_BUILD_ERROR);
    assert_eq!(
        program.try_kernel("k").unwrap_err().code,
        CL_INVALID_PROGRAM_EXECUTABLE
    );
    // The same program object can be fixed? No: sources are immutable, but a new
    // program builds fine and the process is healthy.
    let good = ctx.build(OK_SRC, "");
    drop(good);
    let failure = ctx
        .try_build("kernel void k(global int* o) { undeclared_fn(o); }", "")
        .map(|_| ())
        .unwrap_err();
    assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(
        failure.log.contains("undeclared_fn"),
        "log names the undeclared function: {}",
        failure.log
    );
}

#[test]
fn invalid_build_options() {
    let ctx = DeviceContext::new();
    let failure = ctx
        .try_build(OK_SRC, "-cl-std=CL9.9")
        .map(|_| ())
        .unwrap_err();
    assert!(
        failure.code == CL_INVALID_BUILD_OPTIONS || failure.code == CL_BUILD_PROGRAM_FAILURE,
        "unknown -cl-std: {}",
        error_name(failure.code)
    );
    if testing_cranecl() {
        assert_eq!(failure.code, CL_INVALID_BUILD_OPTIONS);
        let failure = ctx
            .try_build(OK_SRC, "-cranecl-no-such-option")
            .map(|_| ())
            .unwrap_err();
        assert_eq!(failure.code, CL_INVALID_BUILD_OPTIONS);
    }
}

/// A SPIR-V module's words, for surgery.
fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Creating + building `il` must fail with CL_INVALID_VALUE at creation or
/// CL_BUILD_PROGRAM_FAILURE with a non-empty log; returns the log.
fn expect_il_rejected(ctx: &DeviceContext, il: &[u8], what: &str) -> String {
    match ctx.try_program_from_il(il) {
        Err(e) => {
            assert_eq!(e.code, CL_INVALID_VALUE, "{what}: clCreateProgramWithIL");
            String::new()
        }
        Ok(program) => {
            let failure = ctx.try_build_program(program, "").map(|_| ()).unwrap_err();
            assert_eq!(
                failure.code, CL_BUILD_PROGRAM_FAILURE,
                "{what}: clBuildProgram"
            );
            assert!(!failure.log.trim().is_empty(), "{what}: empty build log");
            failure.log
        }
    }
}

/// (The Intel CPU runtime exits the process on some of these inputs.)
#[test]
fn garbage_spirv_is_rejected() {
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") {
        return;
    }
    let mut rng = TestRng::new(42);
    let garbage: Vec<u8> = (0..256).map(|_| rng.next_u32() as u8).collect();
    expect_il_rejected(&ctx, &garbage, "random bytes");
    let mut header_then_garbage = vec![0x07230203u32, 0x00010000, 0, 100, 0];
    header_then_garbage.extend((0..60).map(|_| rng.next_u32()));
    expect_il_rejected(
        &ctx,
        &to_bytes(&header_then_garbage),
        "header then random words",
    );
    expect_il_rejected(&ctx, &[3, 2, 0x23, 7, 0, 0], "6 bytes");

    let il = spirv::compile(OK_SRC, &[]).unwrap_or_else(|e| panic!("{e}"));
    expect_il_rejected(&ctx, &il[..il.len() / 2 / 4 * 4], "truncated module");
    // An instruction whose word count runs past the end of the module.
    let mut w = words(&il);
    let last = w.len() - 1;
    w[last] = (1000 << 16) | (w[last] & 0xffff);
    expect_il_rejected(&ctx, &to_bytes(&w), "word count beyond the end");
    // The valid module still builds and runs: nothing was poisoned.
    let program = ctx.try_build_il(&il, "").unwrap_or_else(|f| panic!("{f}"));
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i32>(4);
    kernel.arg_buffer(0, &out).arg(1, 5i32);
    ctx.run(&kernel, &[4], None);
    assert_eq!(ctx.read::<i32>(&out, 4), vec![5; 4]);
}

#[test]
fn unsupported_capability_is_named_in_the_log() {
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") || !testing_cranecl() {
        return;
    }
    let il = spirv::compile(OK_SRC, &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut w = words(&il);
    // Insert `OpCapability NamedBarrier` (opcode 17, capability 59) after the header;
    // cranecl has no named barriers, so the module must be refused.
    w.splice(5..5, [(2u32 << 16) | 17, 59]);
    let log = expect_il_rejected(&ctx, &to_bytes(&w), "OpCapability NamedBarrier");
    if !log.is_empty() {
        assert!(
            log.contains("NamedBarrier"),
            "the log names the capability: {log:?}"
        );
    }
}

#[test]
fn image_kernels_are_refused_with_a_message() {
    // cranecl has no image support: a SPIR-V module using images must fail to build
    // with a log that says what is unsupported (instruction or capability).
    let ctx = DeviceContext::new();
    if !testing_cranecl() || !require(ctx.supports_spirv(), "SPIR-V programs") {
        return;
    }
    let src = r#"
        kernel void k(read_only image2d_t img, sampler_t s, global float4* o) {
            o[0] = read_imagef(img, s, (int2)(0, 0));
        }
    "#;
    let il = spirv::compile(src, &["-cl-ext=+__opencl_c_images"]).unwrap_or_else(|e| panic!("{e}"));
    let log = expect_il_rejected(&ctx, &il, "image kernel");
    let lower = log.to_lowercase();
    assert!(
        lower.contains("image") || lower.contains("sampler"),
        "the log names the image feature: {log:?}"
    );
}

/// The child half of `missing_clang_is_reported`: runs only when re-executed.
#[test]
fn missing_clang_child() {
    if !is_child_for("missing_clang_child") {
        return;
    }
    let ctx = DeviceContext::new();
    let program = ctx.try_program_from_source(OK_SRC).unwrap();
    let failure = ctx.try_build_program(program, "").map(|_| ()).unwrap_err();
    assert_eq!(
        failure.code, CL_COMPILER_NOT_AVAILABLE,
        "log: {}",
        failure.log
    );
    assert!(
        failure.log.contains("/nonexistent") && failure.log.to_lowercase().contains("clang"),
        "the log names the missing compiler: {:?}",
        failure.log
    );
    // SPIR-V programs do not need clang.
    let il = spirv::compile(OK_SRC, &[]).unwrap_or_else(|e| panic!("{e}"));
    let program = ctx.try_build_il(&il, "").unwrap_or_else(|f| panic!("{f}"));
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i32>(4);
    kernel.arg_buffer(0, &out).arg(1, 3i32);
    ctx.run(&kernel, &[4], None);
    assert_eq!(ctx.read::<i32>(&out, 4), vec![3; 4]);
    println!("CHILD-OK");
}

#[test]
fn missing_clang_is_reported() {
    if is_child() || !testing_cranecl() {
        return;
    }
    run_in_child("missing_clang_child", &[("CRANECL_CLANG", "/nonexistent")]);
}

type GetMemObjectInfoFn =
    unsafe extern "C" fn(cl_mem, cl_uint, usize, *mut c_void, *mut usize) -> cl_int;
type GetDeviceInfoFn =
    unsafe extern "C" fn(cl_device_id, cl_uint, usize, *mut c_void, *mut usize) -> cl_int;
type RetainFn = unsafe extern "C" fn(*mut c_void) -> cl_int;

#[test]
fn released_forged_and_wrong_type_handles_direct() {
    if !testing_cranecl() {
        return;
    }
    let lib = driver_direct().expect("libcranecl.so not found: set CRANECL_LIB");
    // SAFETY: the signatures are the OpenCL API's.
    let (mem_info, dev_info, retain_ctx, release_mem) = unsafe {
        (
            *lib.get::<GetMemObjectInfoFn>(b"clGetMemObjectInfo\0")
                .unwrap(),
            *lib.get::<GetDeviceInfoFn>(b"clGetDeviceInfo\0").unwrap(),
            *lib.get::<RetainFn>(b"clRetainContext\0").unwrap(),
            *lib.get::<RetainFn>(b"clReleaseMemObject\0").unwrap(),
        )
    };
    let ctx = DeviceContext::new();
    let mut size = 0usize;
    // A forged object: plausible layout, unknown dispatch table.
    let fake_table = [0usize; 256];
    let forged: [usize; 16] = {
        let mut f = [0usize; 16];
        f[0] = fake_table.as_ptr() as usize;
        f
    };
    let forged = forged.as_ptr() as *mut c_void;
    // SAFETY: the driver must validate handles before using them.
    unsafe {
        assert_eq!(
            dev_info(forged, CL_DEVICE_NAME, 0, ptr::null_mut(), &mut size),
            CL_INVALID_DEVICE
        );
        assert_eq!(retain_ctx(forged), CL_INVALID_CONTEXT);
        assert_eq!(
            mem_info(forged, CL_MEM_SIZE, 0, ptr::null_mut(), &mut size),
            CL_INVALID_MEM_OBJECT
        );
        // Wrong type: a context or a device where a buffer belongs.
        assert_eq!(
            mem_info(
                ctx.context.raw(),
                CL_MEM_SIZE,
                0,
                ptr::null_mut(),
                &mut size
            ),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(
            dev_info(
                ctx.context.raw(),
                CL_DEVICE_NAME,
                0,
                ptr::null_mut(),
                &mut size
            ),
            CL_INVALID_DEVICE
        );
        assert_eq!(retain_ctx(ctx.device), CL_INVALID_CONTEXT);
    }
    // A released buffer: its handle is now invalid.
    let buffer = ctx.buffer_zeroed::<u32>(16).into_raw();
    // SAFETY: we own the one reference; afterwards the handle is stale on purpose.
    unsafe {
        assert_eq!(release_mem(buffer), CL_SUCCESS as cl_int);
        assert_eq!(
            mem_info(buffer, CL_MEM_SIZE, 0, ptr::null_mut(), &mut size),
            CL_INVALID_MEM_OBJECT,
            "released buffer"
        );
        assert_eq!(release_mem(buffer), CL_INVALID_MEM_OBJECT, "double release");
    }
}
