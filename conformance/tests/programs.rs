//! Programs and kernels as objects: building from source and from SPIR-V, build options
//! reaching the compiler (-D, -I, -w, -Werror, -cl-std, math flags), build logs,
//! program / kernel / work-group / sub-group queries.

use std::ffi::CString;
use std::ptr;

use cranecl_conformance::consts::*;
use cranecl_conformance::sys::*;
use cranecl_conformance::*;

fn program_string(program: &Program, param: cl_uint) -> String {
    bytes_to_string("clGetProgramInfo", &program.info_bytes(param).unwrap())
}

fn build_info<T: Pod>(ctx: &DeviceContext, program: &Program, param: cl_uint) -> T {
    query_value(&format!("clGetProgramBuildInfo({param:#x})"), |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetProgramBuildInfo(program.raw(), ctx.device, param, n, p, r) }
    })
    .unwrap()
}

fn kernel_string(kernel: &Kernel, param: cl_uint) -> String {
    let bytes = query_bytes("clGetKernelInfo", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetKernelInfo(kernel.raw(), param, n, p, r) }
    })
    .unwrap();
    bytes_to_string("clGetKernelInfo", &bytes)
}

fn kernel_info<T: Pod>(kernel: &Kernel, param: cl_uint) -> T {
    query_value(&format!("clGetKernelInfo({param:#x})"), |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetKernelInfo(kernel.raw(), param, n, p, r) }
    })
    .unwrap()
}

/// Runs a one-work-item kernel `k(global int* out)` and returns out[0..n].
fn run_single(ctx: &DeviceContext, program: &Program, n: usize) -> Vec<i32> {
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i32>(n);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[1], None);
    ctx.read(&out, n)
}

const TWO_KERNELS: &str = r#"
kernel void first(global float* a, float s) { a[get_global_id(0)] *= s; }
kernel void second(global int* b) { b[get_global_id(0)] = (int)get_global_id(0); }
"#;

#[test]
fn program_info_after_source_build() {
    let ctx = DeviceContext::new();
    let program = ctx.build(TWO_KERNELS, "-DUNUSED=1");
    assert_eq!(program_string(&program, CL_PROGRAM_SOURCE), TWO_KERNELS);
    let num: usize = query_value("CL_PROGRAM_NUM_KERNELS", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetProgramInfo(program.raw(), CL_PROGRAM_NUM_KERNELS, n, p, r) }
    })
    .unwrap();
    assert_eq!(num, 2);
    let mut names: Vec<String> = program_string(&program, CL_PROGRAM_KERNEL_NAMES)
        .split(';')
        .map(str::to_string)
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec!["first", "second"],
        "CL_PROGRAM_KERNEL_NAMES has no __clang_ocl_kern_imp_ clones"
    );
    let devices = from_bytes::<usize>(&program.info_bytes(CL_PROGRAM_DEVICES).unwrap());
    assert_eq!(devices, vec![ctx.device as usize]);
    let status: cl_int = build_info(&ctx, &program, CL_PROGRAM_BUILD_STATUS);
    assert_eq!(status, CL_BUILD_SUCCESS);
    let options = bytes_to_string(
        "CL_PROGRAM_BUILD_OPTIONS",
        &query_bytes("CL_PROGRAM_BUILD_OPTIONS", |n, p, r| {
            // SAFETY: pointers from query_bytes.
            unsafe {
                clGetProgramBuildInfo(program.raw(), ctx.device, CL_PROGRAM_BUILD_OPTIONS, n, p, r)
            }
        })
        .unwrap(),
    );
    assert!(
        options.contains("-DUNUSED=1"),
        "CL_PROGRAM_BUILD_OPTIONS {options:?}"
    );
    let binary_type: cl_uint = build_info(&ctx, &program, CL_PROGRAM_BINARY_TYPE);
    assert_eq!(binary_type, CL_PROGRAM_BINARY_TYPE_EXECUTABLE as cl_uint);
    let mut count: cl_uint = 0;
    // SAFETY: count query.
    let code = unsafe { clCreateKernelsInProgram(program.raw(), 0, ptr::null_mut(), &mut count) };
    check(code, "clCreateKernelsInProgram").unwrap();
    assert_eq!(count, 2);
    let mut kernels = vec![ptr::null_mut(); 2];
    // SAFETY: room for two kernels.
    let code = unsafe {
        clCreateKernelsInProgram(program.raw(), 2, kernels.as_mut_ptr(), ptr::null_mut())
    };
    check(code, "clCreateKernelsInProgram").unwrap();
    // SAFETY: each created kernel is owned here.
    let kernels: Vec<Kernel> = kernels
        .into_iter()
        .map(|k| unsafe { Kernel::from_raw(k) })
        .collect();
    let mut names: Vec<String> = kernels
        .iter()
        .map(|k| kernel_string(k, CL_KERNEL_FUNCTION_NAME))
        .collect();
    names.sort();
    assert_eq!(names, vec!["first", "second"]);
}

#[test]
fn build_log_is_available_after_success() {
    let ctx = DeviceContext::new();
    let program = ctx.build("kernel void k(global int* o) { o[0] = 1; }", "");
    let log = ctx.build_log(&program);
    assert!(!log.starts_with('<'), "build log query failed: {log}");
}

#[test]
fn define_option_changes_the_result() {
    let ctx = DeviceContext::new();
    let src = "kernel void k(global int* o) { o[0] = VALUE * 2; }";
    assert_eq!(run_single(&ctx, &ctx.build(src, "-DVALUE=5"), 1), vec![10]);
    assert_eq!(
        run_single(&ctx, &ctx.build(src, "-D VALUE=21"), 1),
        vec![42]
    );
    let failure = ctx.try_build(src, "").map(|_| ()).unwrap_err();
    assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(
        failure.log.contains("VALUE"),
        "log names the undeclared identifier: {}",
        failure.log
    );
}

#[test]
fn include_option_finds_headers() {
    let ctx = DeviceContext::new();
    let dir = spirv::temp_path("include", "d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cranecl_test_inc.h"), "#define FROM_HEADER 77\n").unwrap();
    let src =
        "#include \"cranecl_test_inc.h\"\nkernel void k(global int* o) { o[0] = FROM_HEADER; }";
    let result = ctx.try_build(src, &format!("-I {}", dir.display()));
    let result2 = ctx.try_build(src, &format!("-I{}", dir.display()));
    std::fs::remove_dir_all(&dir).ok();
    let program = result.unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(run_single(&ctx, &program, 1), vec![77]);
    let program = result2.unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(run_single(&ctx, &program, 1), vec![77]);
    let failure = ctx.try_build(src, "").map(|_| ()).unwrap_err();
    assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(
        failure.log.contains("cranecl_test_inc.h"),
        "log names the missing header: {}",
        failure.log
    );
}

const WARNS: &str = "#warning cranecl_test_warning\nkernel void k(global int* o) { o[0] = 3; }";

#[test]
fn warnings_reach_the_log_and_werror_fails() {
    let ctx = DeviceContext::new();
    let program = ctx.build(WARNS, "");
    let log = ctx.build_log(&program);
    assert!(
        log.contains("cranecl_test_warning"),
        "warning missing from the build log: {log:?}"
    );
    assert_eq!(run_single(&ctx, &program, 1), vec![3]);

    let failure = ctx.try_build(WARNS, "-Werror").map(|_| ()).unwrap_err();
    assert_eq!(
        failure.code, CL_BUILD_PROGRAM_FAILURE,
        "-Werror turns the warning into a failure"
    );
    assert!(
        failure.log.contains("cranecl_test_warning"),
        "log: {}",
        failure.log
    );

    let program = ctx.build(WARNS, "-w");
    let log = ctx.build_log(&program);
    assert!(
        !log.contains("cranecl_test_warning"),
        "-w must silence warnings: {log:?}"
    );
}

#[test]
fn cl_std_selects_the_language_version() {
    let ctx = DeviceContext::new();
    let src = "kernel void k(global int* o) { o[0] = __OPENCL_C_VERSION__; }";
    assert_eq!(
        run_single(&ctx, &ctx.build(src, "-cl-std=CL1.2"), 1),
        vec![120]
    );
    if testing_cranecl() {
        // Without -cl-std the highest OpenCL C 1.x version is used (OpenCL 3.0 §5.8.6.5).
        assert_eq!(run_single(&ctx, &ctx.build(src, ""), 1), vec![120]);
        assert_eq!(
            run_single(&ctx, &ctx.build(src, "-cl-std=CL3.0"), 1),
            vec![300]
        );
        // OpenCL C 3.1 (clang-22 knows no CL3.1: the driver compiles it as 3.0 with
        // the 3.1 version macro).
        assert_eq!(
            run_single(&ctx, &ctx.build(src, "-cl-std=CL3.1"), 1),
            vec![310]
        );
        // A version the device does not list is a build failure, not a silent 3.0.
        assert!(ctx.try_build(src, "-cl-std=CL3.2").is_err());
        // A 3.0-only feature macro is visible only in 3.0 mode.
        let probe = "kernel void k(global int* o) {\n#ifdef __opencl_c_subgroups\n o[0] = 1;\n#else\n o[0] = 2;\n#endif\n}";
        assert_eq!(
            run_single(&ctx, &ctx.build(probe, "-cl-std=CL3.0"), 1),
            vec![1]
        );
    }
}

#[test]
fn math_options_are_accepted() {
    let ctx = DeviceContext::new();
    let src = r#"kernel void k(global int* o) {
#ifdef __FAST_RELAXED_MATH__
        o[0] = 1;
#else
        o[0] = 2;
#endif
    }"#;
    assert_eq!(
        run_single(&ctx, &ctx.build(src, "-cl-fast-relaxed-math"), 1),
        vec![1]
    );
    assert_eq!(
        run_single(&ctx, &ctx.build(src, "-cl-mad-enable"), 1),
        vec![2]
    );
    assert_eq!(
        run_single(
            &ctx,
            &ctx.build(
                src,
                "-cl-mad-enable -cl-no-signed-zeros -cl-denorms-are-zero"
            ),
            1
        ),
        vec![2]
    );
    assert_eq!(
        run_single(&ctx, &ctx.build(src, "-cl-opt-disable"), 1),
        vec![2]
    );
    // Math under the relaxed flags still computes (within loose bounds).
    let fsrc = "kernel void f(global float* x) { size_t i = get_global_id(0); x[i] = sqrt(x[i]) * x[i] + 1.0f; }";
    for opts in ["-cl-fast-relaxed-math", "-cl-mad-enable", ""] {
        let kernel = ctx.kernel(fsrc, opts, "f");
        let input: Vec<f32> = (0..64).map(|i| i as f32 * 0.5).collect();
        let buf = ctx.buffer_from(&input);
        kernel.arg_buffer(0, &buf);
        ctx.run(&kernel, &[64], None);
        for (x, y) in input.iter().zip(ctx.read::<f32>(&buf, 64)) {
            let want = x.sqrt() * x + 1.0;
            assert!(
                (y - want).abs() <= 1e-3 * want.abs().max(1.0),
                "{opts}: {x} -> {y}, want {want}"
            );
        }
    }
}

#[test]
fn spirv_program_from_clang() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.supports_spirv(),
        "SPIR-V programs (CL_DEVICE_IL_VERSION)",
    ) {
        return;
    }
    let src = r#"
        kernel void saxpy(global float* y, global const float* x, float a) {
            size_t i = get_global_id(0);
            y[i] = a * x[i] + y[i];
        }
        kernel void iota(global uint* o) { o[get_global_id(0)] = (uint)get_global_id(0) * 3u; }
    "#;
    let il = spirv::compile(src, &[]).unwrap_or_else(|e| panic!("{e}"));
    let program = ctx.try_build_il(&il, "").unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(
        program.info_bytes(CL_PROGRAM_IL).unwrap(),
        il,
        "CL_PROGRAM_IL returns the module"
    );
    let mut names: Vec<String> = program_string(&program, CL_PROGRAM_KERNEL_NAMES)
        .split(';')
        .map(str::to_string)
        .collect();
    names.sort();
    assert_eq!(names, vec!["iota", "saxpy"]);
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let y: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let xb = ctx.buffer_from(&x);
    let yb = ctx.buffer_from(&y);
    let saxpy = program.kernel("saxpy");
    saxpy.arg_buffer(0, &yb).arg_buffer(1, &xb).arg(2, 2.5f32);
    ctx.run(&saxpy, &[n], None);
    let got: Vec<f32> = ctx.read(&yb, n);
    for i in 0..n {
        let want = 2.5 * x[i] + y[i];
        assert!(
            (got[i] - want).abs() <= 1e-5 * want.abs().max(1.0),
            "saxpy[{i}] = {}, want {want}",
            got[i]
        );
    }
    let iota = program.kernel("iota");
    let ob = ctx.buffer_zeroed::<u32>(77);
    iota.arg_buffer(0, &ob);
    ctx.run(&iota, &[77], None);
    assert_eq!(
        ctx.read::<u32>(&ob, 77),
        (0..77u32).map(|i| i * 3).collect::<Vec<_>>()
    );
}

#[test]
fn kernel_info_and_arg_info() {
    let ctx = DeviceContext::new();
    let src = r#"
        __attribute__((reqd_work_group_size(8, 4, 2)))
        kernel void fixed(global float* restrict out, constant int* table, local float* scratch, const uint n) {
            out[0] = (float)(table[0] + (int)n);
        }
    "#;
    let program = ctx.build(src, "-cl-kernel-arg-info");
    let kernel = program.kernel("fixed");
    assert_eq!(kernel_string(&kernel, CL_KERNEL_FUNCTION_NAME), "fixed");
    assert_eq!(kernel_info::<cl_uint>(&kernel, CL_KERNEL_NUM_ARGS), 4);
    assert_eq!(
        kernel_info::<usize>(&kernel, CL_KERNEL_CONTEXT),
        ctx.context.raw() as usize
    );
    assert_eq!(
        kernel_info::<usize>(&kernel, CL_KERNEL_PROGRAM),
        program.raw() as usize
    );
    let attrs = kernel_string(&kernel, CL_KERNEL_ATTRIBUTES);
    if testing_cranecl() {
        assert!(
            attrs.contains("reqd_work_group_size(8,4,2)"),
            "CL_KERNEL_ATTRIBUTES {attrs:?}"
        );
    }
    let compile: [usize; 3] = kernel
        .work_group_info(ctx.device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE)
        .unwrap();
    assert_eq!(compile, [8, 4, 2]);
    let wg: usize = kernel
        .work_group_info(ctx.device, CL_KERNEL_WORK_GROUP_SIZE)
        .unwrap();
    let dev_max: usize = device_info(ctx.device, CL_DEVICE_MAX_WORK_GROUP_SIZE).unwrap();
    assert!(wg >= 1 && wg <= dev_max);
    let multiple: usize = kernel
        .work_group_info(ctx.device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)
        .unwrap();
    assert!(multiple >= 1);
    let _private: cl_ulong = kernel
        .work_group_info(ctx.device, CL_KERNEL_PRIVATE_MEM_SIZE)
        .unwrap();
    kernel.arg_local(2, 1024);
    let local: cl_ulong = kernel
        .work_group_info(ctx.device, CL_KERNEL_LOCAL_MEM_SIZE)
        .unwrap();
    assert!(
        local >= 1024,
        "CL_KERNEL_LOCAL_MEM_SIZE {local} includes the 1024-byte local argument"
    );

    let arg_string = |index: u32, param: cl_uint| -> String {
        let bytes = query_bytes("clGetKernelArgInfo", |n, p, r| {
            // SAFETY: pointers from query_bytes.
            unsafe { clGetKernelArgInfo(kernel.raw(), index, param, n, p, r) }
        })
        .unwrap();
        bytes_to_string("clGetKernelArgInfo", &bytes)
    };
    let arg_u32 = |index: u32, param: cl_uint| -> cl_uint {
        query_value("clGetKernelArgInfo", |n, p, r| {
            // SAFETY: pointers from query_bytes.
            unsafe { clGetKernelArgInfo(kernel.raw(), index, param, n, p, r) }
        })
        .unwrap()
    };
    assert_eq!(arg_string(0, CL_KERNEL_ARG_NAME), "out");
    assert_eq!(arg_string(3, CL_KERNEL_ARG_NAME), "n");
    assert_eq!(arg_string(0, CL_KERNEL_ARG_TYPE_NAME), "float*");
    assert_eq!(arg_string(3, CL_KERNEL_ARG_TYPE_NAME), "uint");
    assert_eq!(
        arg_u32(0, CL_KERNEL_ARG_ADDRESS_QUALIFIER),
        CL_KERNEL_ARG_ADDRESS_GLOBAL
    );
    assert_eq!(
        arg_u32(1, CL_KERNEL_ARG_ADDRESS_QUALIFIER),
        CL_KERNEL_ARG_ADDRESS_CONSTANT
    );
    assert_eq!(
        arg_u32(2, CL_KERNEL_ARG_ADDRESS_QUALIFIER),
        CL_KERNEL_ARG_ADDRESS_LOCAL
    );
    assert_eq!(
        arg_u32(3, CL_KERNEL_ARG_ADDRESS_QUALIFIER),
        CL_KERNEL_ARG_ADDRESS_PRIVATE
    );
    let q0: cl_ulong = query_value("clGetKernelArgInfo(TYPE_QUALIFIER)", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetKernelArgInfo(kernel.raw(), 0, CL_KERNEL_ARG_TYPE_QUALIFIER, n, p, r) }
    })
    .unwrap();
    assert_ne!(q0 & CL_KERNEL_ARG_TYPE_RESTRICT, 0, "out is restrict");
    // SAFETY: index 4 does not exist.
    let code = unsafe {
        clGetKernelArgInfo(
            kernel.raw(),
            4,
            CL_KERNEL_ARG_NAME,
            0,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if testing_cranecl() {
        assert_eq!(code, CL_INVALID_ARG_INDEX);
    } else {
        // The Intel CPU runtime answers CL_INVALID_VALUE here.
        assert_ne!(code, CL_SUCCESS as cl_int);
    }
}

#[test]
fn sub_group_queries() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_intel_required_subgroup_size"),
        "cl_intel_required_subgroup_size",
    ) {
        return;
    }
    for w in [4usize, 8, 16] {
        let src = format!(
            "__attribute__((intel_reqd_sub_group_size({w})))\n\
             kernel void k(global uint* o) {{ o[get_global_id(0)] = get_sub_group_size(); }}"
        );
        let kernel = ctx.kernel(&src, "-cl-std=CL3.0", "k");
        let max: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[64])
            .unwrap();
        assert_eq!(max, w, "max sub-group size for local 64");
        let count: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, &[64])
            .unwrap();
        assert_eq!(count, 64 / w);
        let count: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, &[w + 1])
            .unwrap();
        assert_eq!(count, 2, "a partial sub-group counts");
        let count2d: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, &[w, 3])
            .unwrap();
        assert_eq!(count2d, 3, "sub-groups do not span rows of dimension 0");
        // The output is a local size with as many dimensions as param_value_size asks
        // for, so there is no size query first.
        for dims in [1usize, 2] {
            let mut local = [usize::MAX; 2];
            let count = [2usize];
            // SAFETY: input one size_t, output `dims` size_t values.
            let code = unsafe {
                clGetKernelSubGroupInfo(
                    kernel.raw(),
                    ctx.device,
                    CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                    std::mem::size_of_val(&count),
                    count.as_ptr().cast(),
                    dims * std::mem::size_of::<usize>(),
                    local.as_mut_ptr().cast(),
                    ptr::null_mut(),
                )
            };
            check(code, "CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT").unwrap();
            assert_eq!(
                local[..dims].iter().product::<usize>(),
                2 * w,
                "{dims}D local size {local:?}"
            );
            assert_eq!(local[0], 2 * w, "{dims}D local size {local:?}");
        }
        let compiled: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, &[])
            .unwrap();
        assert_eq!(compiled, w);
        let max_num: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_MAX_NUM_SUB_GROUPS, &[])
            .unwrap();
        let wg: usize = kernel
            .work_group_info(ctx.device, CL_KERNEL_WORK_GROUP_SIZE)
            .unwrap();
        assert_eq!(max_num, wg.div_ceil(w));
        let compile_num: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_COMPILE_NUM_SUB_GROUPS, &[])
            .unwrap();
        assert_eq!(compile_num, 0);
    }
}

/// cl_intel_required_subgroup_size: every reported size builds and is what
/// `CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL` answers (0 without the attribute); a size
/// the device does not report is a build failure whose log says so.
#[test]
fn required_sub_group_size_only_of_reported_sizes() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_intel_required_subgroup_size"),
        "cl_intel_required_subgroup_size",
    ) {
        return;
    }
    let src = |w: usize| {
        format!(
            "__attribute__((intel_reqd_sub_group_size({w})))\n\
             kernel void k(global uint* o) {{ o[get_global_id(0)] = get_sub_group_size(); }}"
        )
    };
    let sizes = ctx.sub_group_sizes();
    for &w in &sizes {
        let kernel = ctx.kernel(&src(w), "-cl-std=CL3.0", "k");
        let compiled: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, &[])
            .unwrap();
        assert_eq!(compiled, w, "CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL");
        let out = ctx.buffer_zeroed::<u32>(2 * w);
        kernel.arg_buffer(0, &out);
        ctx.run(&kernel, &[2 * w], Some(&[2 * w]));
        assert_eq!(ctx.read::<u32>(&out, 2 * w), vec![w as u32; 2 * w]);
    }
    for w in [1usize, 2, 3, 5, 12, 64, 128] {
        if sizes.contains(&w) {
            continue;
        }
        let failure = ctx
            .try_build(&src(w), "-cl-std=CL3.0")
            .err()
            .unwrap_or_else(|| panic!("intel_reqd_sub_group_size({w}) built"));
        assert_eq!(
            failure.code, CL_BUILD_PROGRAM_FAILURE,
            "size {w}: {failure}"
        );
        if testing_cranecl() {
            assert!(
                failure.log.contains("sub-group size") || failure.log.contains("sub_group_size"),
                "size {w}: the log names the cause: {}",
                failure.log
            );
        }
    }
    let plain = ctx.kernel(
        "kernel void k(global uint* o) { o[0] = 1; }",
        "-cl-std=CL3.0",
        "k",
    );
    let compiled: usize = plain
        .sub_group_info(ctx.device, CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, &[])
        .unwrap();
    assert_eq!(
        compiled, 0,
        "no attribute: CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL"
    );
}

#[test]
fn kernel_outlives_program_handle_and_rebuild_works() {
    let ctx = DeviceContext::new();
    let src = "kernel void k(global int* o) { o[get_global_id(0)] = 5; }";
    let program = ctx.try_program_from_source(src).unwrap();
    let program = ctx
        .try_build_program(program, "")
        .unwrap_or_else(|f| panic!("{f}"));
    let kernel = program.kernel("k");
    drop(program);
    let out = ctx.buffer_zeroed::<i32>(4);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[4], None);
    assert_eq!(ctx.read::<i32>(&out, 4), vec![5; 4]);
    // Building a program twice (no kernels attached) is allowed.
    let program = ctx.build(src, "");
    let again = ctx
        .try_build_program(program, "-DX=1")
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(run_single(&ctx, &again, 1), vec![5]);
}

#[test]
fn source_given_in_several_strings() {
    let ctx = DeviceContext::new();
    let parts = [
        CString::new("int twice(int x) { return 2 * x; }\n").unwrap(),
        CString::new("kernel void k(global int* o) { o[0] = twice(21); }").unwrap(),
    ];
    let ptrs: Vec<_> = parts.iter().map(|s| s.as_ptr()).collect();
    let mut err = 0;
    // SAFETY: two NUL-terminated strings, lengths NULL.
    let raw = unsafe {
        clCreateProgramWithSource(ctx.context.raw(), 2, ptrs.as_ptr(), ptr::null(), &mut err)
    };
    check(err, "clCreateProgramWithSource").unwrap();
    // SAFETY: creation succeeded.
    let program = unsafe { Program::from_raw(raw) };
    let program = ctx
        .try_build_program(program, "")
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(run_single(&ctx, &program, 1), vec![42]);
}
