//! Contexts of several devices (the root device and its sub-devices): programs built
//! per device (status, options, log, binaries), kernels run on each sub-device's
//! queue with results checked on the host, and the errors for a device a program
//! was not built for. Runs in a child with `CRANECL_NUM_THREADS=4` on cranecl; on
//! another platform it uses what that platform can partition.

use std::ffi::CString;
use std::ptr;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const EQ: isize = CL_DEVICE_PARTITION_EQUALLY as isize;

const SOURCE: &str = "
kernel void scale(global int *a, int k) { a[get_global_id(0)] = a[get_global_id(0)] * k + X; }
";

/// Runs `body` in a child with four cranecl compute units (directly elsewhere).
fn with_four_units(name: &str, body: impl FnOnce()) {
    if testing_cranecl() && !is_child() {
        run_in_child(name, &[("CRANECL_NUM_THREADS", "4")]);
        return;
    }
    body();
    println!("CHILD-OK");
}

/// The root device and its sub-devices of `EQUALLY 1`, or `None` if the platform
/// cannot partition (a failure on cranecl).
fn root_and_subs() -> Option<(cl_device_id, Vec<SubDevice>)> {
    let root = first_device(find_platform());
    let props = [EQ, 1, 0];
    let mut n = 0u32;
    // SAFETY: a terminated property list; no devices written.
    let code = unsafe { clCreateSubDevices(root, props.as_ptr(), 0, ptr::null_mut(), &mut n) };
    if !require(code == CL_SUCCESS && n >= 2, "partitioning EQUALLY 1") {
        return None;
    }
    let mut out = vec![ptr::null_mut(); n as usize];
    // SAFETY: room for n handles.
    let code =
        unsafe { clCreateSubDevices(root, props.as_ptr(), n, out.as_mut_ptr(), ptr::null_mut()) };
    check(code, "clCreateSubDevices").expect("sub-devices");
    // SAFETY: created for us.
    Some((
        root,
        out.into_iter()
            .map(|d| unsafe { SubDevice::from_raw(d) })
            .collect(),
    ))
}

fn context(devices: &[cl_device_id]) -> Context {
    let mut err = 0;
    // SAFETY: valid devices, no callback.
    let ctx = unsafe {
        clCreateContext(
            ptr::null(),
            devices.len() as cl_uint,
            devices.as_ptr(),
            None,
            ptr::null_mut(),
            &mut err,
        )
    };
    check(err, "clCreateContext").expect("context");
    // SAFETY: created for us.
    unsafe { Context::from_raw(ctx) }
}

fn queue(ctx: &Context, device: cl_device_id) -> Queue {
    let mut err = 0;
    // SAFETY: valid context and device.
    let q = unsafe { clCreateCommandQueue(ctx.raw(), device, 0, &mut err) };
    check(err, "clCreateCommandQueue").expect("queue");
    // SAFETY: created for us.
    unsafe { Queue::from_raw(q) }
}

fn program(ctx: &Context) -> Program {
    let text = SOURCE.as_ptr().cast();
    let len = SOURCE.len();
    let mut err = 0;
    // SAFETY: one string with its length.
    let p = unsafe { clCreateProgramWithSource(ctx.raw(), 1, &text, &len, &mut err) };
    check(err, "clCreateProgramWithSource").expect("program");
    // SAFETY: created for us.
    unsafe { Program::from_raw(p) }
}

fn build(p: &Program, devices: &[cl_device_id], options: &str) -> cl_int {
    let opts = CString::new(options).expect("options");
    let list = if devices.is_empty() {
        ptr::null()
    } else {
        devices.as_ptr()
    };
    // SAFETY: valid program and device list.
    unsafe {
        clBuildProgram(
            p.raw(),
            devices.len() as cl_uint,
            list,
            opts.as_ptr(),
            None,
            ptr::null_mut(),
        )
    }
}

fn build_info(p: &Program, device: cl_device_id, param: cl_uint) -> Vec<u8> {
    query_bytes("clGetProgramBuildInfo", |n, v, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetProgramBuildInfo(p.raw(), device, param, n, v, r) }
    })
    .expect("clGetProgramBuildInfo")
}

fn status(p: &Program, device: cl_device_id) -> i32 {
    from_bytes::<i32>(&build_info(p, device, CL_PROGRAM_BUILD_STATUS))[0]
}

fn options(p: &Program, device: cl_device_id) -> String {
    bytes_to_string(
        "CL_PROGRAM_BUILD_OPTIONS",
        &build_info(p, device, CL_PROGRAM_BUILD_OPTIONS),
    )
}

/// Runs `scale(a, k)` on `q` over `data` and returns the buffer afterwards.
fn run(
    ctx: &Context,
    q: &Queue,
    kernel: &Kernel,
    data: &[i32],
    k: i32,
) -> Result<Vec<i32>, cl_int> {
    let mut err = 0;
    let bytes = std::mem::size_of_val(data);
    // SAFETY: COPY_HOST_PTR reads `bytes` bytes of `data`.
    let buf = unsafe {
        clCreateBuffer(
            ctx.raw(),
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            bytes,
            data.as_ptr() as *mut _,
            &mut err,
        )
    };
    check(err, "clCreateBuffer").expect("buffer");
    // SAFETY: created for us.
    let buf = unsafe { Buffer::from_raw(buf) };
    kernel.arg_buffer(0, &buf).arg(1, k);
    let global = data.len();
    // SAFETY: one dimension, NULL local size.
    let code = unsafe {
        clEnqueueNDRangeKernel(
            q.raw(),
            kernel.raw(),
            1,
            ptr::null(),
            &global,
            ptr::null(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    if code != CL_SUCCESS {
        return Err(code);
    }
    let mut out = vec![0i32; data.len()];
    // SAFETY: blocking read into `out`.
    let code = unsafe {
        clEnqueueReadBuffer(
            q.raw(),
            buf.raw(),
            CL_TRUE,
            0,
            bytes,
            out.as_mut_ptr().cast(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    check(code, "clEnqueueReadBuffer").expect("read");
    Ok(out)
}

fn program_devices(p: &Program) -> Vec<cl_device_id> {
    from_bytes::<usize>(&p.info_bytes(CL_PROGRAM_DEVICES).expect("devices"))
        .into_iter()
        .map(|d| d as cl_device_id)
        .collect()
}

#[test]
fn a_build_for_the_root_device_runs_on_every_sub_device() {
    with_four_units(
        "a_build_for_the_root_device_runs_on_every_sub_device",
        || {
            let Some((root, subs)) = root_and_subs() else {
                return;
            };
            let mut devices: Vec<cl_device_id> = subs.iter().map(|s| s.raw()).collect();
            devices.push(root);
            let ctx = context(&devices);
            let got: Vec<usize> = from_bytes(
                &query_bytes("clGetContextInfo(CL_CONTEXT_DEVICES)", |n, v, r| {
                    // SAFETY: pointers from query_bytes.
                    unsafe { clGetContextInfo(ctx.raw(), CL_CONTEXT_DEVICES, n, v, r) }
                })
                .expect("context devices"),
            );
            assert_eq!(got, devices.iter().map(|d| *d as usize).collect::<Vec<_>>());
            let p = program(&ctx);
            assert_eq!(program_devices(&p), devices);
            assert_eq!(build(&p, &[root], "-DX=1"), CL_SUCCESS);
            // Sub-devices run their parent's build.
            for d in &devices {
                assert_eq!(status(&p, *d), CL_BUILD_SUCCESS, "device {d:?}");
                assert_eq!(options(&p, *d), "-DX=1");
            }
            let sizes: Vec<usize> =
                from_bytes(&p.info_bytes(CL_PROGRAM_BINARY_SIZES).expect("sizes"));
            assert_eq!(sizes.len(), devices.len());
            assert!(sizes.iter().all(|s| *s > 0), "{sizes:?}");
            let kernel = p.kernel("scale");
            let data: Vec<i32> = (0..4099).map(|i| i * 7 - 3000).collect();
            for (i, d) in devices.iter().enumerate() {
                let q = queue(&ctx, *d);
                let k = i as i32 + 2;
                let out = run(&ctx, &q, &kernel, &data, k).expect("enqueue");
                let want: Vec<i32> = data.iter().map(|v| v * k + 1).collect();
                assert_eq!(out, want, "results on device {i}");
            }
            // Several devices: the kernel queries need one named.
            assert_eq!(
                kernel
                    .work_group_info::<usize>(ptr::null_mut(), CL_KERNEL_WORK_GROUP_SIZE)
                    .map_err(|e| e.code),
                Err(CL_INVALID_DEVICE)
            );
            assert!(kernel
                .work_group_info::<usize>(subs[0].raw(), CL_KERNEL_WORK_GROUP_SIZE)
                .is_ok());
        },
    );
}

#[test]
fn a_build_for_one_sub_device_is_that_device_s_alone() {
    with_four_units("a_build_for_one_sub_device_is_that_device_s_alone", || {
        let Some((root, subs)) = root_and_subs() else {
            return;
        };
        let (a, b) = (subs[0].raw(), subs[1].raw());
        let ctx = context(&[a, b, root]);
        let p = program(&ctx);
        assert_eq!(build(&p, &[b], "-DX=5"), CL_SUCCESS);
        assert_eq!(status(&p, b), CL_BUILD_SUCCESS);
        assert_eq!(status(&p, a), CL_BUILD_NONE);
        assert_eq!(
            status(&p, root),
            CL_BUILD_NONE,
            "a sub-device's build is not its parent's"
        );
        assert_eq!(options(&p, b), "-DX=5");
        let sizes: Vec<usize> = from_bytes(&p.info_bytes(CL_PROGRAM_BINARY_SIZES).expect("sizes"));
        assert_eq!(sizes[0], 0);
        assert!(sizes[1] > 0);
        assert_eq!(sizes[2], 0);
        let kernel = p.kernel("scale");
        let data: Vec<i32> = (0..100).collect();
        let out = run(&ctx, &queue(&ctx, b), &kernel, &data, 3).expect("built device");
        assert_eq!(out, data.iter().map(|v| v * 3 + 5).collect::<Vec<_>>());
        assert_eq!(
            run(&ctx, &queue(&ctx, a), &kernel, &data, 3),
            Err(CL_INVALID_PROGRAM_EXECUTABLE),
            "no executable for the other sub-device"
        );
        if testing_cranecl() {
            // The kernel's devices are those its program was built for (Intel answers
            // CL_INVALID_KERNEL for the first and counts the context's devices).
            assert_eq!(
                kernel
                    .work_group_info::<usize>(a, CL_KERNEL_WORK_GROUP_SIZE)
                    .map_err(|e| e.code),
                Err(CL_INVALID_DEVICE)
            );
            assert!(kernel
                .work_group_info::<usize>(ptr::null_mut(), CL_KERNEL_WORK_GROUP_SIZE)
                .is_ok());
        }
        // Rebuilding while a kernel exists is refused; afterwards the other device
        // gets its own build with its own options.
        assert_eq!(build(&p, &[a], "-DX=9"), CL_INVALID_OPERATION);
        drop(kernel);
        assert_eq!(build(&p, &[a], "-DX=9"), CL_SUCCESS);
        assert_eq!(options(&p, a), "-DX=9");
        assert_eq!(options(&p, b), "-DX=5");
        let kernel = p.kernel("scale");
        let on_a = run(&ctx, &queue(&ctx, a), &kernel, &data, 2).expect("device a");
        assert_eq!(on_a, data.iter().map(|v| v * 2 + 9).collect::<Vec<_>>());
        let on_b = run(&ctx, &queue(&ctx, b), &kernel, &data, 2).expect("device b");
        assert_eq!(on_b, data.iter().map(|v| v * 2 + 5).collect::<Vec<_>>());
        drop(kernel);
        // A device outside the program (another partition's sub-device).
        let (_, others) = root_and_subs().expect("partitioned before");
        assert_eq!(build(&p, &[others[0].raw()], ""), CL_INVALID_DEVICE);
        // A failed build for one device leaves the others' builds alone.
        assert_eq!(build(&p, &[a], "-DX=(("), CL_BUILD_PROGRAM_FAILURE);
        assert_eq!(status(&p, a), CL_BUILD_ERROR);
        assert_eq!(status(&p, b), CL_BUILD_SUCCESS);
        let log = bytes_to_string("log", &build_info(&p, a, CL_PROGRAM_BUILD_LOG));
        assert!(!log.is_empty(), "a failed build has a log");
    });
}

#[test]
fn binaries_per_device_round_trip() {
    with_four_units("binaries_per_device_round_trip", || {
        let Some((root, subs)) = root_and_subs() else {
            return;
        };
        let (a, b) = (subs[0].raw(), subs[1].raw());
        let ctx = context(&[a, b, root]);
        // Two builds with different options give two different binaries.
        let p = program(&ctx);
        assert_eq!(build(&p, &[a], "-DX=10"), CL_SUCCESS);
        assert_eq!(build(&p, &[b], "-DX=20"), CL_SUCCESS);
        let sizes: Vec<usize> = from_bytes(&p.info_bytes(CL_PROGRAM_BINARY_SIZES).expect("sizes"));
        let mut bins: Vec<Vec<u8>> = sizes.iter().map(|s| vec![0u8; *s]).collect();
        let mut ptrs: Vec<*mut u8> = bins.iter_mut().map(|b| b.as_mut_ptr()).collect();
        // SAFETY: one pointer per device, each to a buffer of its size.
        let code = unsafe {
            clGetProgramInfo(
                p.raw(),
                CL_PROGRAM_BINARIES,
                std::mem::size_of_val(ptrs.as_slice()),
                ptrs.as_mut_ptr().cast(),
                ptr::null_mut(),
            )
        };
        check(code, "clGetProgramInfo(CL_PROGRAM_BINARIES)").expect("binaries");
        assert!(bins[2].is_empty(), "the root device was not built");
        // Load them back the other way round: each device gets the other's binary.
        let lens = [bins[1].len(), bins[0].len()];
        let bin_ptrs = [bins[1].as_ptr(), bins[0].as_ptr()];
        let mut statuses = [1i32; 2];
        let mut err = 0;
        let devices = [a, b];
        // SAFETY: two devices, two binaries with their lengths, room for two statuses.
        let loaded = unsafe {
            clCreateProgramWithBinary(
                ctx.raw(),
                2,
                devices.as_ptr(),
                lens.as_ptr(),
                bin_ptrs.as_ptr() as *mut *const u8,
                statuses.as_mut_ptr(),
                &mut err,
            )
        };
        check(err, "clCreateProgramWithBinary").expect("loaded");
        assert_eq!(statuses, [CL_SUCCESS; 2]);
        // SAFETY: created for us.
        let loaded = unsafe { Program::from_raw(loaded) };
        assert_eq!(
            program_devices(&loaded),
            vec![a, b],
            "the devices given, not the context's"
        );
        assert_eq!(build(&loaded, &[], ""), CL_SUCCESS);
        assert_eq!(
            build(&loaded, &[root], ""),
            CL_INVALID_DEVICE,
            "not one of the program's devices"
        );
        let kernel = loaded.kernel("scale");
        let data: Vec<i32> = (0..64).collect();
        let on_a = run(&ctx, &queue(&ctx, a), &kernel, &data, 1).expect("device a");
        assert_eq!(
            on_a,
            data.iter().map(|v| v + 20).collect::<Vec<_>>(),
            "a runs b's binary"
        );
        let on_b = run(&ctx, &queue(&ctx, b), &kernel, &data, 1).expect("device b");
        assert_eq!(
            on_b,
            data.iter().map(|v| v + 10).collect::<Vec<_>>(),
            "b runs a's binary"
        );
        assert_eq!(
            run(&ctx, &queue(&ctx, root), &kernel, &data, 1),
            Err(CL_INVALID_PROGRAM_EXECUTABLE),
            "the root device is not the program's"
        );
    });
}

/// `clCompileProgram` for `devices` (all for an empty list).
fn compile(p: &Program, devices: &[cl_device_id], options: &str) -> cl_int {
    let opts = CString::new(options).expect("options");
    let list = if devices.is_empty() {
        ptr::null()
    } else {
        devices.as_ptr()
    };
    // SAFETY: valid program and device list, no headers.
    unsafe {
        clCompileProgram(
            p.raw(),
            devices.len() as cl_uint,
            list,
            opts.as_ptr(),
            0,
            ptr::null(),
            ptr::null_mut(),
            None,
            ptr::null_mut(),
        )
    }
}

/// `clLinkProgram` of `inputs` for `devices` (all for an empty list).
fn link(ctx: &Context, devices: &[cl_device_id], inputs: &[&Program]) -> Result<Program, cl_int> {
    let raw: Vec<cl_program> = inputs.iter().map(|p| p.raw()).collect();
    let list = if devices.is_empty() {
        ptr::null()
    } else {
        devices.as_ptr()
    };
    let mut err = 0;
    // SAFETY: valid context, device list and input programs; no callback.
    let p = unsafe {
        clLinkProgram(
            ctx.raw(),
            devices.len() as cl_uint,
            list,
            ptr::null(),
            raw.len() as cl_uint,
            raw.as_ptr(),
            None,
            ptr::null_mut(),
            &mut err,
        )
    };
    if p.is_null() {
        return Err(err);
    }
    // SAFETY: created for us.
    let p = unsafe { Program::from_raw(p) };
    if err == CL_SUCCESS {
        Ok(p)
    } else {
        Err(err)
    }
}

#[test]
fn compile_and_link_per_device() {
    with_four_units("compile_and_link_per_device", || {
        let Some((root, subs)) = root_and_subs() else {
            return;
        };
        let (a, b) = (subs[0].raw(), subs[1].raw());
        let ctx = context(&[a, b, root]);
        let p = program(&ctx);
        assert_eq!(compile(&p, &[a], "-DX=4"), CL_SUCCESS);
        assert_eq!(status(&p, a), CL_BUILD_SUCCESS);
        assert_eq!(status(&p, b), CL_BUILD_NONE);
        let unlinkable = link(&ctx, &[b], &[&p]).err();
        if testing_cranecl() {
            // The specification's code (Intel answers CL_LINK_PROGRAM_FAILURE).
            assert_eq!(
                unlinkable,
                Some(CL_INVALID_OPERATION),
                "nothing compiled for b"
            );
        } else {
            assert!(unlinkable.is_some(), "nothing compiled for b");
        }
        let linked = link(&ctx, &[a], &[&p]).expect("link for a");
        assert_eq!(program_devices(&linked), vec![a]);
        assert_eq!(status(&linked, a), CL_BUILD_SUCCESS);
        let kernel = linked.kernel("scale");
        let data: Vec<i32> = (0..50).collect();
        let out = run(&ctx, &queue(&ctx, a), &kernel, &data, 3).expect("linked kernel on a");
        assert_eq!(out, data.iter().map(|v| v * 3 + 4).collect::<Vec<_>>());
        assert_eq!(
            run(&ctx, &queue(&ctx, b), &kernel, &data, 3),
            Err(CL_INVALID_PROGRAM_EXECUTABLE)
        );
        if !testing_cranecl() {
            // Intel's link does not use a root device's compiled object for its
            // sub-devices.
            return;
        }
        // Linked for every device: a device for which no input has an object gets no
        // executable (Intel fails the whole link).
        let partial = link(&ctx, &[], &[&p]).expect("link where objects exist");
        assert_eq!(program_devices(&partial), vec![a, b, root]);
        assert_eq!(status(&partial, a), CL_BUILD_SUCCESS);
        assert_eq!(status(&partial, b), CL_BUILD_NONE);
        let kernel = partial.kernel("scale");
        let out = run(&ctx, &queue(&ctx, a), &kernel, &data, 5).expect("partial link on a");
        assert_eq!(out, data.iter().map(|v| v * 5 + 4).collect::<Vec<_>>());
        assert_eq!(
            run(&ctx, &queue(&ctx, b), &kernel, &data, 5),
            Err(CL_INVALID_PROGRAM_EXECUTABLE)
        );
        drop(kernel);
        // Inputs of which only some have an object for a device.
        let other = program(&ctx);
        assert_eq!(compile(&other, &[b], "-DX=1"), CL_SUCCESS);
        assert_eq!(
            link(&ctx, &[], &[&p, &other]).err(),
            Some(CL_INVALID_OPERATION)
        );
        // Compiled for the root device: as with builds, its sub-devices share it.
        let q = program(&ctx);
        assert_eq!(compile(&q, &[root], "-DX=6"), CL_SUCCESS);
        let for_all = link(&ctx, &[], &[&q]).expect("link for every device");
        assert_eq!(program_devices(&for_all), vec![a, b, root]);
        let kernel = for_all.kernel("scale");
        for d in [a, b, root] {
            let out = run(&ctx, &queue(&ctx, d), &kernel, &data, 1).expect("linked kernel");
            assert_eq!(out, data.iter().map(|v| v + 6).collect::<Vec<_>>());
        }
    });
}

/// `clGetProgramBuildInfo` on `device`: the error code when the query fails.
fn build_info_code(p: &Program, device: cl_device_id, param: cl_uint) -> cl_int {
    let mut size = 0usize;
    // SAFETY: only the size is asked for.
    unsafe { clGetProgramBuildInfo(p.raw(), device, param, 0, ptr::null_mut(), &mut size) }
}

/// `CL_PROGRAM_BINARY_TYPE` of `device` (a `cl_uint`), widened as the constants are.
fn binary_type(p: &Program, device: cl_device_id) -> u64 {
    u64::from(from_bytes::<cl_uint>(&build_info(p, device, CL_PROGRAM_BINARY_TYPE))[0])
}

/// `CL_PROGRAM_BINARIES` of `p`, one per device.
fn binaries(p: &Program) -> Vec<Vec<u8>> {
    let sizes: Vec<usize> = from_bytes(&p.info_bytes(CL_PROGRAM_BINARY_SIZES).expect("sizes"));
    let mut bins: Vec<Vec<u8>> = sizes.iter().map(|s| vec![0u8; *s]).collect();
    let mut ptrs: Vec<*mut u8> = bins.iter_mut().map(|b| b.as_mut_ptr()).collect();
    // SAFETY: one pointer per device, each to a buffer of its size.
    let code = unsafe {
        clGetProgramInfo(
            p.raw(),
            CL_PROGRAM_BINARIES,
            std::mem::size_of_val(ptrs.as_slice()),
            ptrs.as_mut_ptr().cast(),
            ptr::null_mut(),
        )
    };
    check(code, "clGetProgramInfo(CL_PROGRAM_BINARIES)").expect("binaries");
    bins
}

/// `clCreateProgramWithBinary` for `devices` with `bins`: the program or the error
/// code, and the binary status of each device.
fn from_binaries(
    ctx: &Context,
    devices: &[cl_device_id],
    bins: &[&[u8]],
) -> (Result<Program, cl_int>, Vec<cl_int>) {
    let lens: Vec<usize> = bins.iter().map(|b| b.len()).collect();
    let ptrs: Vec<*const u8> = bins.iter().map(|b| b.as_ptr()).collect();
    let mut statuses = vec![1; devices.len()];
    let mut err = 0;
    // SAFETY: one binary with its length and one status slot per device.
    let p = unsafe {
        clCreateProgramWithBinary(
            ctx.raw(),
            devices.len() as cl_uint,
            devices.as_ptr(),
            lens.as_ptr(),
            ptrs.as_ptr() as *mut *const u8,
            statuses.as_mut_ptr(),
            &mut err,
        )
    };
    if p.is_null() {
        return (Err(err), statuses);
    }
    assert_eq!(err, CL_SUCCESS);
    // SAFETY: created for us.
    (Ok(unsafe { Program::from_raw(p) }), statuses)
}

#[test]
fn program_queries_per_device() {
    with_four_units("program_queries_per_device", || {
        let Some((root, subs)) = root_and_subs() else {
            return;
        };
        let (a, b) = (subs[0].raw(), subs[1].raw());
        let ctx = context(&[a, b, root]);
        let p = program(&ctx);
        let num: Vec<cl_uint> = from_bytes(&p.info_bytes(CL_PROGRAM_NUM_DEVICES).expect("num"));
        assert_eq!(num, [3]);
        assert_eq!(
            p.info_bytes(CL_PROGRAM_NUM_KERNELS).map_err(|e| e.code),
            Err(CL_INVALID_PROGRAM_EXECUTABLE),
            "built for no device yet"
        );
        // A compiled object for a alone; b keeps no binary.
        assert_eq!(compile(&p, &[a], "-DX=3"), CL_SUCCESS);
        assert_eq!(binary_type(&p, a), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        assert_eq!(binary_type(&p, b), CL_PROGRAM_BINARY_TYPE_NONE);
        assert_eq!(
            p.info_bytes(CL_PROGRAM_NUM_KERNELS).map_err(|e| e.code),
            Err(CL_INVALID_PROGRAM_EXECUTABLE),
            "a compiled object is no executable"
        );
        let object = binaries(&p);
        assert!(!object[0].is_empty() && object[1].is_empty() && object[2].is_empty());
        // Now an executable for b: the number of kernels is known.
        assert_eq!(build(&p, &[b], "-DX=7"), CL_SUCCESS);
        assert_eq!(binary_type(&p, b), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
        assert_eq!(binary_type(&p, a), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        let kernels: Vec<usize> =
            from_bytes(&p.info_bytes(CL_PROGRAM_NUM_KERNELS).expect("kernels"));
        assert_eq!(kernels, [1]);
        let executable = binaries(&p).swap_remove(1);

        // One good and one damaged binary: CL_INVALID_BINARY, with each device's status.
        let damaged = vec![0x5au8; executable.len()];
        let (made, statuses) = from_binaries(&ctx, &[a, b], &[&executable, &damaged]);
        assert_eq!(made.err(), Some(CL_INVALID_BINARY));
        assert_eq!(statuses, [CL_SUCCESS, CL_INVALID_BINARY]);
        // A device outside the context.
        let (_, others) = root_and_subs().expect("partitioned before");
        let (made, _) = from_binaries(&ctx, &[others[0].raw()], &[&executable]);
        assert_eq!(made.err(), Some(CL_INVALID_DEVICE));

        // The executable for b alone: a program of one device, whose type is known
        // before it is built; other devices are not the program's.
        let (made, statuses) = from_binaries(&ctx, &[b], &[&executable]);
        let loaded = made.expect("loaded");
        assert_eq!(statuses, [CL_SUCCESS]);
        assert_eq!(program_devices(&loaded), vec![b]);
        assert_eq!(binary_type(&loaded, b), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
        if testing_cranecl() {
            // As the specification says: nothing was built for b yet (Intel answers
            // CL_BUILD_SUCCESS for a loaded executable).
            assert_eq!(status(&loaded, b), CL_BUILD_NONE);
        }
        assert_eq!(
            build_info_code(&loaded, a, CL_PROGRAM_BUILD_STATUS),
            CL_INVALID_DEVICE
        );
        assert_eq!(build(&loaded, &[], ""), CL_SUCCESS);
        assert_eq!(
            options(&loaded, b),
            "",
            "the options argument of the last build"
        );
        let kernel = loaded.kernel("scale");
        let data: Vec<i32> = (0..33).collect();
        let out = run(&ctx, &queue(&ctx, b), &kernel, &data, 2).expect("device b");
        assert_eq!(out, data.iter().map(|v| v * 2 + 7).collect::<Vec<_>>());

        // The compiled object for a links into an executable for a.
        let (made, _) = from_binaries(&ctx, &[a], &[&object[0]]);
        let object = made.expect("object loaded");
        assert_eq!(
            binary_type(&object, a),
            CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
        );
        let linked = link(&ctx, &[a], &[&object]).expect("link");
        let kernel = linked.kernel("scale");
        let out = run(&ctx, &queue(&ctx, a), &kernel, &data, 2).expect("device a");
        assert_eq!(out, data.iter().map(|v| v * 2 + 3).collect::<Vec<_>>());
    });
}
