//! Argument validation of API calls against the exact error codes of the OpenCL 3.0
//! specification: context properties, zero-sized enqueues, kernel argument info and
//! attributes, pipe queries.

use std::ffi::c_void;
use std::ptr;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// `clCreateContext` with `props` (zero-terminated): the error code.
fn context_error(props: &[cl_context_properties], device: cl_device_id) -> cl_int {
    let mut err = 0;
    // SAFETY: props is zero-terminated by the callers, one valid device.
    let c = unsafe { clCreateContext(props.as_ptr(), 1, &device, None, ptr::null_mut(), &mut err) };
    if !c.is_null() {
        // SAFETY: created above.
        unsafe { clReleaseContext(c) };
    }
    err
}

/// `clCreateContextFromType` with `props`: the error code. (The ICD loader picks the
/// driver by the list's CL_CONTEXT_PLATFORM, so callers put ours first.)
fn context_from_type_error(props: &[cl_context_properties]) -> cl_int {
    let mut err = 0;
    // SAFETY: props is zero-terminated by the callers.
    let c = unsafe {
        clCreateContextFromType(
            props.as_ptr(),
            CL_DEVICE_TYPE_DEFAULT,
            None,
            ptr::null_mut(),
            &mut err,
        )
    };
    if !c.is_null() {
        // SAFETY: created above.
        unsafe { clReleaseContext(c) };
    }
    err
}

#[test]
fn context_properties_are_validated() {
    let platform = find_platform();
    let device = first_device(platform);
    let p = platform as cl_context_properties;
    let plat = CL_CONTEXT_PLATFORM as cl_context_properties;
    let sync = CL_CONTEXT_INTEROP_USER_SYNC as cl_context_properties;
    let t = CL_TRUE as cl_context_properties;
    let f = CL_FALSE as cl_context_properties;
    for props in [
        vec![0],
        vec![plat, p, 0],
        vec![sync, t, 0],
        vec![plat, p, sync, f, 0],
    ] {
        assert_eq!(
            error_name(context_error(&props, device)),
            "CL_SUCCESS",
            "{props:?}"
        );
    }
    for props in [vec![plat, p, 0], vec![plat, p, sync, t, 0]] {
        assert_eq!(
            error_name(context_from_type_error(&props)),
            "CL_SUCCESS",
            "{props:?}"
        );
    }
    let bad: [(Vec<cl_context_properties>, cl_int); 6] = [
        (vec![plat, 0, 0], CL_INVALID_PLATFORM),
        // A valid object that is not a platform.
        (
            vec![plat, device as cl_context_properties, 0],
            CL_INVALID_PLATFORM,
        ),
        (vec![0x7777, 0, 0], CL_INVALID_PROPERTY),
        (vec![sync, -1, 0], CL_INVALID_PROPERTY),
        (vec![sync, 2, 0], CL_INVALID_PROPERTY),
        (vec![sync, f, sync, f, 0], CL_INVALID_PROPERTY),
    ];
    for (props, code) in &bad {
        let got = context_error(props, device);
        assert_eq!(
            error_name(got),
            error_name(*code),
            "clCreateContext {props:?}"
        );
    }
    for (rest, code) in [
        (vec![0x7777, 0], CL_INVALID_PROPERTY),
        (vec![sync, -1], CL_INVALID_PROPERTY),
        (vec![plat, p], CL_INVALID_PROPERTY),
    ] {
        let mut props = vec![plat, p];
        props.extend(rest);
        props.push(0);
        let got = context_from_type_error(&props);
        assert_eq!(
            error_name(got),
            error_name(code),
            "clCreateContextFromType {props:?}"
        );
    }
    // CL_CONTEXT_PROPERTIES gives back exactly what was passed.
    let props = [plat, p, sync, 1, 0];
    let mut err = 0;
    // SAFETY: zero-terminated list, one valid device.
    let c = unsafe { clCreateContext(props.as_ptr(), 1, &device, None, ptr::null_mut(), &mut err) };
    check(err, "clCreateContext").unwrap();
    let mut size = 0usize;
    let mut back = [0 as cl_context_properties; 8];
    // SAFETY: back has room for 8 properties.
    let code = unsafe {
        clGetContextInfo(
            c,
            CL_CONTEXT_PROPERTIES,
            std::mem::size_of_val(&back),
            back.as_mut_ptr().cast::<c_void>(),
            &mut size,
        )
    };
    check(code, "clGetContextInfo").unwrap();
    assert_eq!(
        &back[..size / std::mem::size_of::<cl_context_properties>()],
        &props
    );
    // SAFETY: created above.
    unsafe { clReleaseContext(c) };
}

const FILL_SRC: &str = "kernel void k(global int *dst) { dst[get_global_id(0)] = 1; }";

/// OpenCL 3.0: a NULL or zero global size is a no-op that waits for its wait list
/// and completes its event; reads, writes, copies and fills of 0 bytes too. Maps and
/// rect transfers of nothing are errors.
#[test]
fn zero_sized_enqueues() {
    let ctx = DeviceContext::new();
    let buf = ctx.buffer_zeroed::<i32>(64);
    let kernel = ctx.kernel(FILL_SRC, "", "k");
    kernel.arg_buffer(0, &buf);
    let sizes: [&[usize]; 6] = [&[0], &[0, 0], &[1, 0], &[0, 1], &[1, 1, 0], &[0, 5, 5]];
    for g in sizes {
        // SAFETY: g has g.len() elements.
        let code = unsafe {
            clEnqueueNDRangeKernel(
                ctx.queue.raw(),
                kernel.raw(),
                g.len() as u32,
                ptr::null(),
                g.as_ptr(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        assert_eq!(error_name(code), "CL_SUCCESS", "global {g:?}");
    }
    for dims in 1..=3u32 {
        // SAFETY: NULL global size, no local size.
        let code = unsafe {
            clEnqueueNDRangeKernel(
                ctx.queue.raw(),
                kernel.raw(),
                dims,
                ptr::null(),
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        assert_eq!(
            error_name(code),
            "CL_SUCCESS",
            "NULL global size, {dims} dimensions"
        );
    }
    ctx.finish();
    assert!(
        ctx.read::<i32>(&buf, 64).iter().all(|v| *v == 0),
        "an empty range ran work-items"
    );
    // The empty range waits for its wait list and then completes its event.
    let mut err = 0;
    // SAFETY: valid context.
    let user = unsafe { clCreateUserEvent(ctx.context.raw(), &mut err) };
    check(err, "clCreateUserEvent").unwrap();
    let zero = [0usize];
    let mut ev: cl_event = ptr::null_mut();
    // SAFETY: one user event in the wait list, an event out.
    let code = unsafe {
        clEnqueueNDRangeKernel(
            ctx.queue.raw(),
            kernel.raw(),
            1,
            ptr::null(),
            zero.as_ptr(),
            ptr::null(),
            1,
            &user,
            &mut ev,
        )
    };
    assert_eq!(error_name(code), "CL_SUCCESS");
    let status = |e: cl_event| -> cl_int {
        let mut s: cl_int = 0;
        // SAFETY: valid event, one cl_int out.
        check(
            unsafe {
                clGetEventInfo(
                    e,
                    CL_EVENT_COMMAND_EXECUTION_STATUS,
                    4,
                    (&mut s as *mut cl_int).cast(),
                    ptr::null_mut(),
                )
            },
            "clGetEventInfo",
        )
        .unwrap();
        s
    };
    let mut ty: cl_command_type = 0;
    // SAFETY: valid event, one cl_command_type out.
    check(
        unsafe {
            clGetEventInfo(
                ev,
                CL_EVENT_COMMAND_TYPE,
                4,
                (&mut ty as *mut cl_command_type).cast(),
                ptr::null_mut(),
            )
        },
        "clGetEventInfo",
    )
    .unwrap();
    assert_eq!(ty, CL_COMMAND_NDRANGE_KERNEL);
    assert!(
        matches!(status(ev), CL_QUEUED | CL_SUBMITTED),
        "ran before its wait list"
    );
    // SAFETY: valid user event.
    check(
        unsafe { clSetUserEventStatus(user, CL_COMPLETE) },
        "clSetUserEventStatus",
    )
    .unwrap();
    ctx.finish();
    assert_eq!(status(ev), CL_COMPLETE);
    // SAFETY: both events are ours.
    unsafe {
        clReleaseEvent(ev);
        clReleaseEvent(user);
    }
    // Transfers of 0 bytes: no error, nothing moves; the offset must still be in range.
    let host = [7i32; 4];
    let q = ctx.queue.raw();
    let b = buf.raw();
    let hp = host.as_ptr() as *mut c_void;
    // SAFETY (all calls below): valid queue and buffer, host memory of 16 bytes, blocking.
    unsafe {
        assert_eq!(
            error_name(clEnqueueReadBuffer(
                q,
                b,
                CL_TRUE,
                0,
                0,
                hp,
                0,
                ptr::null(),
                ptr::null_mut()
            )),
            "CL_SUCCESS"
        );
        assert_eq!(
            error_name(clEnqueueWriteBuffer(
                q,
                b,
                CL_TRUE,
                256,
                0,
                hp,
                0,
                ptr::null(),
                ptr::null_mut()
            )),
            "CL_SUCCESS"
        );
        assert_eq!(
            error_name(clEnqueueWriteBuffer(
                q,
                b,
                CL_TRUE,
                257,
                0,
                hp,
                0,
                ptr::null(),
                ptr::null_mut()
            )),
            "CL_INVALID_VALUE"
        );
        assert_eq!(
            error_name(clEnqueueReadBuffer(
                q,
                b,
                CL_TRUE,
                0,
                0,
                ptr::null_mut(),
                0,
                ptr::null(),
                ptr::null_mut()
            )),
            "CL_INVALID_VALUE"
        );
        assert_eq!(
            error_name(clEnqueueCopyBuffer(
                q,
                b,
                b,
                0,
                0,
                0,
                0,
                ptr::null(),
                ptr::null_mut()
            )),
            "CL_SUCCESS"
        );
        let pat = 5i32;
        assert_eq!(
            error_name(clEnqueueFillBuffer(
                q,
                b,
                (&pat as *const i32).cast(),
                4,
                0,
                0,
                0,
                ptr::null(),
                ptr::null_mut()
            )),
            "CL_SUCCESS"
        );
        let mut e = 0;
        let p = clEnqueueMapBuffer(
            q,
            b,
            CL_TRUE,
            CL_MAP_READ,
            0,
            0,
            0,
            ptr::null(),
            ptr::null_mut(),
            &mut e,
        );
        assert!(p.is_null());
        assert_eq!(error_name(e), "CL_INVALID_VALUE", "map of 0 bytes");
        let (o, r) = ([0usize; 3], [4usize, 0, 1]);
        assert_eq!(
            error_name(clEnqueueReadBufferRect(
                q,
                b,
                CL_TRUE,
                o.as_ptr(),
                o.as_ptr(),
                r.as_ptr(),
                0,
                0,
                0,
                0,
                hp,
                0,
                ptr::null(),
                ptr::null_mut()
            )),
            "CL_INVALID_VALUE",
            "rect region with a 0"
        );
    }
    ctx.finish();
    assert!(
        ctx.read::<i32>(&buf, 64).iter().all(|v| *v == 0),
        "an empty transfer wrote"
    );
}

/// Rect transfers whose extent passes `usize::MAX` (an origin near it, or a row or
/// slice origin times the pitch) must fail with CL_INVALID_VALUE, not wrap into the
/// buffer; likewise host ranges that wrap the address space.
#[test]
fn rect_and_range_overflows_are_refused() {
    let ctx = DeviceContext::new();
    let src = ctx.buffer_zeroed::<u8>(4096);
    let dst = ctx.buffer_zeroed::<u8>(4096);
    let q = ctx.queue.raw();
    let host = vec![0u8; 4096];
    let hp = host.as_ptr() as *mut c_void;
    let m = usize::MAX;
    // (origin, region, row pitch, slice pitch)
    let cases: [([usize; 3], [usize; 3], usize, usize); 8] = [
        ([m - 2, 0, 0], [4, 1, 1], 0, 0),
        ([m, 0, 0], [1, 1, 1], 0, 0),
        ([0, m / 16 + 1, 0], [4, 1, 1], 16, 0),
        ([0, 1 << 60, 0], [4, 1, 1], 64, 0),
        ([0, 0, m / 256 + 1], [4, 1, 1], 16, 256),
        ([0, 0, 1 << 56], [4, 1, 1], 16, 512),
        ([0, 0, 0], [4, m, 1], 16, 0),
        ([0, 0, 0], [4, 2, m / 8], 16, 32),
    ];
    let ok = [0usize; 3];
    for (origin, region, row, slice) in cases {
        // SAFETY (all calls): valid queue and buffers; every call must be refused before
        // touching memory, and the host buffer has 4096 bytes anyway.
        unsafe {
            let r = clEnqueueReadBufferRect(
                q,
                src.raw(),
                CL_TRUE,
                origin.as_ptr(),
                ok.as_ptr(),
                region.as_ptr(),
                row,
                slice,
                0,
                0,
                hp,
                0,
                ptr::null(),
                ptr::null_mut(),
            );
            assert_eq!(
                error_name(r),
                "CL_INVALID_VALUE",
                "read rect buffer origin {origin:?} region {region:?} pitches {row}/{slice}"
            );
            let r = clEnqueueWriteBufferRect(
                q,
                dst.raw(),
                CL_TRUE,
                origin.as_ptr(),
                ok.as_ptr(),
                region.as_ptr(),
                row,
                slice,
                0,
                0,
                hp,
                0,
                ptr::null(),
                ptr::null_mut(),
            );
            assert_eq!(
                error_name(r),
                "CL_INVALID_VALUE",
                "write rect buffer origin {origin:?}"
            );
            let r = clEnqueueReadBufferRect(
                q,
                src.raw(),
                CL_TRUE,
                ok.as_ptr(),
                origin.as_ptr(),
                region.as_ptr(),
                0,
                0,
                row,
                slice,
                hp,
                0,
                ptr::null(),
                ptr::null_mut(),
            );
            assert_eq!(
                error_name(r),
                "CL_INVALID_VALUE",
                "read rect host origin {origin:?}"
            );
            let r = clEnqueueCopyBufferRect(
                q,
                src.raw(),
                dst.raw(),
                origin.as_ptr(),
                ok.as_ptr(),
                region.as_ptr(),
                row,
                slice,
                0,
                0,
                0,
                ptr::null(),
                ptr::null_mut(),
            );
            assert_eq!(
                error_name(r),
                "CL_INVALID_VALUE",
                "copy rect src origin {origin:?}"
            );
            let r = clEnqueueCopyBufferRect(
                q,
                src.raw(),
                dst.raw(),
                ok.as_ptr(),
                origin.as_ptr(),
                region.as_ptr(),
                0,
                0,
                row,
                slice,
                0,
                ptr::null(),
                ptr::null_mut(),
            );
            assert_eq!(
                error_name(r),
                "CL_INVALID_VALUE",
                "copy rect dst origin {origin:?}"
            );
        }
    }
    // A rect that fits exactly is accepted.
    let (o, r) = ([4usize, 3, 1], [12usize, 5, 2]);
    // SAFETY: the extent (1+1)*1024 - ... fits 4096 bytes on both sides.
    let code = unsafe {
        clEnqueueCopyBufferRect(
            q,
            src.raw(),
            dst.raw(),
            o.as_ptr(),
            o.as_ptr(),
            r.as_ptr(),
            64,
            1024,
            64,
            1024,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(error_name(code), "CL_SUCCESS");
    // Offsets and sizes whose sum wraps.
    // SAFETY (all calls): refused before touching memory.
    unsafe {
        let r = clEnqueueReadBuffer(
            q,
            src.raw(),
            CL_TRUE,
            m - 3,
            8,
            hp,
            0,
            ptr::null(),
            ptr::null_mut(),
        );
        assert_eq!(
            error_name(r),
            "CL_INVALID_VALUE",
            "read offset + size wraps"
        );
        let r = clEnqueueCopyBuffer(
            q,
            src.raw(),
            dst.raw(),
            8,
            m - 3,
            8,
            0,
            ptr::null(),
            ptr::null_mut(),
        );
        assert_eq!(
            error_name(r),
            "CL_INVALID_VALUE",
            "copy dst offset + size wraps"
        );
        let pat = 0u32;
        let r = clEnqueueFillBuffer(
            q,
            src.raw(),
            (&pat as *const u32).cast(),
            4,
            m - 3,
            8,
            0,
            ptr::null(),
            ptr::null_mut(),
        );
        assert_eq!(
            error_name(r),
            "CL_INVALID_VALUE",
            "fill offset + size wraps"
        );
        let mut e = 0;
        let p = clEnqueueMapBuffer(
            q,
            src.raw(),
            CL_TRUE,
            CL_MAP_READ,
            16,
            m - 8,
            0,
            ptr::null(),
            ptr::null_mut(),
            &mut e,
        );
        assert!(p.is_null());
        assert_eq!(error_name(e), "CL_INVALID_VALUE", "map offset + size wraps");
        // A host range that wraps the address space.
        let top = (m - 8) as *mut c_void;
        let r = clEnqueueReadBuffer(
            q,
            src.raw(),
            CL_TRUE,
            0,
            64,
            top,
            0,
            ptr::null(),
            ptr::null_mut(),
        );
        assert_eq!(error_name(r), "CL_INVALID_VALUE", "host range wraps");
        let mut region = cl_buffer_region {
            origin: m - 64,
            size: 128,
        };
        let sub = clCreateSubBuffer(
            src.raw(),
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&mut region as *mut cl_buffer_region).cast(),
            &mut e,
        );
        assert!(sub.is_null());
        assert_eq!(
            error_name(e),
            "CL_INVALID_VALUE",
            "sub-buffer origin + size wraps"
        );
    }
    ctx.finish();
}

/// `clGetKernelArgInfo` of kernel `k` argument `i`: a string parameter, or the code.
fn arg_string(k: &Kernel, i: u32, param: cl_uint) -> Result<String, cl_int> {
    query_bytes("clGetKernelArgInfo", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetKernelArgInfo(k.raw(), i, param, n, p, r) }
    })
    .map(|b| bytes_to_string("clGetKernelArgInfo", &b))
    .map_err(|e| e.code)
}

/// `clGetKernelArgInfo` of kernel `k` argument `i`: a bitfield/enum parameter.
fn arg_value<T: Pod>(k: &Kernel, i: u32, param: cl_uint) -> Result<T, cl_int> {
    query_value("clGetKernelArgInfo", |n, p, r| {
        // SAFETY: pointers from query_value.
        unsafe { clGetKernelArgInfo(k.raw(), i, param, n, p, r) }
    })
    .map_err(|e| e.code)
}

const ARG_SRC: &str = r#"
typedef struct { int a; float b; } pair_t;
typedef float4 vec_t;
kernel void k(global const short *restrict a, local volatile uint4 *b, constant float *c,
              const unsigned int n, pair_t p, vec_t v, global int *const d,
              global unsigned char *e, long unsigned f) {}
"#;

/// Argument info as the source declares it, only with `-cl-kernel-arg-info`; otherwise
/// (and for programs from SPIR-V) only the address and access qualifiers.
#[test]
fn kernel_arg_info_from_source() {
    let ctx = DeviceContext::new();
    let k = ctx.kernel(ARG_SRC, "-cl-kernel-arg-info", "k");
    let want: [(&str, &str, cl_uint, cl_bitfield); 9] = [
        (
            "a",
            "short*",
            CL_KERNEL_ARG_ADDRESS_GLOBAL,
            CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT,
        ),
        (
            "b",
            "uint4*",
            CL_KERNEL_ARG_ADDRESS_LOCAL,
            CL_KERNEL_ARG_TYPE_VOLATILE,
        ),
        (
            "c",
            "float*",
            CL_KERNEL_ARG_ADDRESS_CONSTANT,
            CL_KERNEL_ARG_TYPE_CONST,
        ),
        (
            "n",
            "uint",
            CL_KERNEL_ARG_ADDRESS_PRIVATE,
            CL_KERNEL_ARG_TYPE_NONE,
        ),
        (
            "p",
            "pair_t",
            CL_KERNEL_ARG_ADDRESS_PRIVATE,
            CL_KERNEL_ARG_TYPE_NONE,
        ),
        (
            "v",
            "vec_t",
            CL_KERNEL_ARG_ADDRESS_PRIVATE,
            CL_KERNEL_ARG_TYPE_NONE,
        ),
        // `int *const`: the pointer is const, not the pointee.
        (
            "d",
            "int*",
            CL_KERNEL_ARG_ADDRESS_GLOBAL,
            CL_KERNEL_ARG_TYPE_NONE,
        ),
        (
            "e",
            "uchar*",
            CL_KERNEL_ARG_ADDRESS_GLOBAL,
            CL_KERNEL_ARG_TYPE_NONE,
        ),
        (
            "f",
            "ulong",
            CL_KERNEL_ARG_ADDRESS_PRIVATE,
            CL_KERNEL_ARG_TYPE_NONE,
        ),
    ];
    for (i, (name, ty, aq, tq)) in want.iter().enumerate() {
        let i = i as u32;
        assert_eq!(arg_string(&k, i, CL_KERNEL_ARG_NAME).as_deref(), Ok(*name));
        assert_eq!(
            arg_string(&k, i, CL_KERNEL_ARG_TYPE_NAME).as_deref(),
            Ok(*ty),
            "arg {name}"
        );
        assert_eq!(
            arg_value::<cl_uint>(&k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER),
            Ok(*aq),
            "arg {name}"
        );
        assert_eq!(
            arg_value::<cl_bitfield>(&k, i, CL_KERNEL_ARG_TYPE_QUALIFIER),
            Ok(*tq),
            "arg {name}"
        );
        assert_eq!(
            arg_value::<cl_uint>(&k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER),
            Ok(CL_KERNEL_ARG_ACCESS_NONE),
            "arg {name}"
        );
    }
    assert_eq!(
        arg_string(&k, 9, CL_KERNEL_ARG_NAME),
        Err(CL_INVALID_ARG_INDEX)
    );
    assert_eq!(arg_string(&k, 0, 0x7777), Err(CL_INVALID_VALUE));
    // A too small buffer.
    let mut one = [0u8; 1];
    // SAFETY: one byte of room, the name needs more.
    let code = unsafe {
        clGetKernelArgInfo(
            k.raw(),
            0,
            CL_KERNEL_ARG_TYPE_NAME,
            1,
            one.as_mut_ptr().cast(),
            ptr::null_mut(),
        )
    };
    assert_eq!(error_name(code), "CL_INVALID_VALUE");
    // Without -cl-kernel-arg-info, and from SPIR-V: only where the argument lives.
    let plain = ctx.kernel(ARG_SRC, "", "k");
    let il = cranecl_conformance::spirv::compile(ARG_SRC, &[]).expect("clang");
    let il_program = ctx.try_program_from_il(&il).expect("clCreateProgramWithIL");
    let il_kernel = ctx
        .try_build_program(il_program, "")
        .expect("build IL")
        .kernel("k");
    for k in [&plain, &il_kernel] {
        assert_eq!(
            arg_value::<cl_uint>(k, 2, CL_KERNEL_ARG_ADDRESS_QUALIFIER),
            Ok(CL_KERNEL_ARG_ADDRESS_CONSTANT)
        );
        assert_eq!(
            arg_value::<cl_uint>(k, 1, CL_KERNEL_ARG_ADDRESS_QUALIFIER),
            Ok(CL_KERNEL_ARG_ADDRESS_LOCAL)
        );
        assert_eq!(
            arg_value::<cl_uint>(k, 0, CL_KERNEL_ARG_ACCESS_QUALIFIER),
            Ok(CL_KERNEL_ARG_ACCESS_NONE)
        );
        for param in [CL_KERNEL_ARG_TYPE_NAME, CL_KERNEL_ARG_NAME] {
            assert_eq!(
                arg_string(k, 0, param).map_err(error_name),
                Err("CL_KERNEL_ARG_INFO_NOT_AVAILABLE")
            );
        }
        assert_eq!(
            arg_value::<cl_bitfield>(k, 0, CL_KERNEL_ARG_TYPE_QUALIFIER).map_err(error_name),
            Err("CL_KERNEL_ARG_INFO_NOT_AVAILABLE")
        );
    }
    // clCompileProgram + clLinkProgram keep the objects' information.
    let mut err = 0;
    let src = std::ffi::CString::new(ARG_SRC).unwrap();
    let strings = [src.as_ptr()];
    // SAFETY: one NUL-terminated string.
    let p = unsafe {
        clCreateProgramWithSource(
            ctx.context.raw(),
            1,
            strings.as_ptr(),
            ptr::null(),
            &mut err,
        )
    };
    check(err, "clCreateProgramWithSource").unwrap();
    let opts = std::ffi::CString::new("-cl-kernel-arg-info").unwrap();
    // SAFETY: valid program, one device, no headers.
    check(
        unsafe {
            clCompileProgram(
                p,
                1,
                &ctx.device,
                opts.as_ptr(),
                0,
                ptr::null(),
                ptr::null_mut(),
                None,
                ptr::null_mut(),
            )
        },
        "clCompileProgram",
    )
    .unwrap();
    // SAFETY: one compiled input.
    let linked = unsafe {
        clLinkProgram(
            ctx.context.raw(),
            1,
            &ctx.device,
            ptr::null(),
            1,
            &p,
            None,
            ptr::null_mut(),
            &mut err,
        )
    };
    check(err, "clLinkProgram").unwrap();
    // SAFETY: both programs are ours.
    let linked = unsafe {
        clReleaseProgram(p);
        Program::from_raw(linked)
    };
    let lk = linked.kernel("k");
    assert_eq!(
        arg_string(&lk, 3, CL_KERNEL_ARG_TYPE_NAME).as_deref(),
        Ok("uint")
    );
}

/// `CL_KERNEL_ATTRIBUTES`: the attributes as OpenCL C writes them (vec_type_hint with
/// its signedness, which SPIR-V does not keep); empty for programs from SPIR-V.
#[test]
fn kernel_attributes_text() {
    let ctx = DeviceContext::new();
    let attrs = |k: &Kernel| -> String {
        let b = query_bytes("clGetKernelInfo", |n, p, r| {
            // SAFETY: pointers from query_bytes.
            unsafe { clGetKernelInfo(k.raw(), CL_KERNEL_ATTRIBUTES, n, p, r) }
        })
        .unwrap();
        bytes_to_string("clGetKernelInfo", &b).replace(' ', "")
    };
    for (attr, ty) in [
        ("vec_type_hint(uint4)", "uint4"),
        ("vec_type_hint(int4)", "int4"),
        ("vec_type_hint(uchar16)", "uchar16"),
        ("vec_type_hint(float3)", "float3"),
        ("vec_type_hint(long2)", "long2"),
    ] {
        let src = format!(
            "__attribute__((vec_type_hint({ty})))\n__attribute__((work_group_size_hint(4,2,1)))\n__attribute__((reqd_work_group_size(8,1,1)))\nkernel void t() {{}}"
        );
        let a = attrs(&ctx.kernel(&src, "", "t"));
        for want in [
            attr,
            "work_group_size_hint(4,2,1)",
            "reqd_work_group_size(8,1,1)",
        ] {
            assert!(a.contains(want), "{want} missing from {a:?}");
        }
    }
    let a = attrs(&ctx.kernel("kernel void t() {}", "", "t"));
    assert_eq!(a, "");
    if testing_cranecl() {
        let src = "__attribute__((intel_reqd_sub_group_size(16))) kernel void t() {}";
        assert_eq!(
            attrs(&ctx.kernel(src, "", "t")),
            "intel_reqd_sub_group_size(16)"
        );
        let il = cranecl_conformance::spirv::compile(
            "__attribute__((reqd_work_group_size(8,1,1))) kernel void t() {}",
            &[],
        )
        .expect("clang");
        let p = ctx.try_program_from_il(&il).expect("clCreateProgramWithIL");
        let k = ctx.try_build_program(p, "").expect("build").kernel("t");
        assert_eq!(
            attrs(&k),
            "",
            "programs from SPIR-V have no OpenCL C attributes"
        );
    }
}

/// No pipe support: the pipe queries agree, clCreatePipe refuses, and no memory object
/// is a pipe.
#[test]
fn pipe_queries_are_consistent() {
    let ctx = DeviceContext::new();
    let support: cl_uint = device_info(
        ctx.device,
        cranecl_conformance::consts::CL_DEVICE_PIPE_SUPPORT,
    )
    .unwrap();
    if support != 0 {
        return;
    }
    for q in [
        CL_DEVICE_MAX_PIPE_ARGS,
        CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS,
        CL_DEVICE_PIPE_MAX_PACKET_SIZE,
    ] {
        assert_eq!(
            device_info::<cl_uint>(ctx.device, q).unwrap(),
            0,
            "query {q:#x}"
        );
    }
    let mut err = 0;
    // SAFETY: valid context, no properties.
    let p = unsafe {
        clCreatePipe(
            ctx.context.raw(),
            CL_MEM_HOST_NO_ACCESS,
            4,
            4,
            ptr::null(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(error_name(err), "CL_INVALID_OPERATION");
    // SAFETY: a NULL context.
    unsafe { clCreatePipe(ptr::null_mut(), 0, 4, 4, ptr::null(), &mut err) };
    assert_eq!(error_name(err), "CL_INVALID_CONTEXT");
    let buf = ctx.buffer_zeroed::<u32>(4);
    let mut v: cl_uint = 0;
    for m in [buf.raw(), ptr::null_mut()] {
        // SAFETY: one cl_uint out.
        let code = unsafe {
            clGetPipeInfo(
                m,
                CL_PIPE_PACKET_SIZE,
                4,
                (&mut v as *mut cl_uint).cast(),
                ptr::null_mut(),
            )
        };
        assert_eq!(error_name(code), "CL_INVALID_MEM_OBJECT");
    }
}

/// A buffer set as a kernel argument and then released by the application is deleted
/// (its destructor callback runs) although the kernel still names it; enqueueing
/// the kernel then reports the missing argument instead of using freed memory.
#[test]
fn released_buffer_argument_does_not_keep_the_buffer() {
    use std::sync::atomic::{AtomicU32, Ordering};
    static CALLED: AtomicU32 = AtomicU32::new(0);
    extern "C" fn on_delete(_: cl_mem, _: *mut c_void) {
        CALLED.fetch_add(1, Ordering::SeqCst);
    }
    let ctx = DeviceContext::new();
    let k = ctx.kernel(FILL_SRC, "", "k");
    let mut err = 0;
    // SAFETY: no host pointer.
    let m = unsafe {
        clCreateBuffer(
            ctx.context.raw(),
            CL_MEM_READ_WRITE,
            256,
            ptr::null_mut(),
            &mut err,
        )
    };
    check(err, "clCreateBuffer").unwrap();
    // SAFETY: valid buffer, a callback with the right signature.
    check(
        unsafe { clSetMemObjectDestructorCallback(m, Some(on_delete), ptr::null_mut()) },
        "callback",
    )
    .unwrap();
    // SAFETY: passes the cl_mem by pointer, as the API specifies.
    check(
        unsafe {
            clSetKernelArg(
                k.raw(),
                0,
                std::mem::size_of::<cl_mem>(),
                (&m as *const cl_mem).cast(),
            )
        },
        "clSetKernelArg",
    )
    .unwrap();
    // SAFETY: our only reference.
    check(unsafe { clReleaseMemObject(m) }, "clReleaseMemObject").unwrap();
    let start = std::time::Instant::now();
    while CALLED.load(Ordering::SeqCst) == 0 && start.elapsed().as_secs() < 10 {
        std::thread::yield_now();
    }
    assert_eq!(
        CALLED.load(Ordering::SeqCst),
        1,
        "destructor callback of the released buffer"
    );
    if testing_cranecl() {
        let code = ctx
            .try_enqueue(&k, None, &[4], None)
            .map(|_| ())
            .map_err(|e| e.code);
        assert_eq!(code.map_err(error_name), Err("CL_INVALID_KERNEL_ARGS"));
    }
}
