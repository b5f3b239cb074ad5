//! Platform and device queries: values, exact return types and sizes, the size
//! protocol of `clGet*Info`, and device enumeration.

use std::ptr;

use cranecl_conformance::consts::*;
use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// The OpenCL 3.0 `cl_name_version` struct size: a cl_version and a 64-byte name.
const NAME_VERSION_SIZE: usize = 4 + 64;

/// Decodes an array of `cl_name_version`.
fn name_versions(bytes: &[u8]) -> Vec<(String, u32)> {
    assert_eq!(
        bytes.len() % NAME_VERSION_SIZE,
        0,
        "not an array of cl_name_version: {} bytes",
        bytes.len()
    );
    bytes
        .chunks(NAME_VERSION_SIZE)
        .map(|c| {
            let version = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
            let name = &c[4..];
            let end = name
                .iter()
                .position(|&b| b == 0)
                .expect("cl_name_version name not NUL-terminated");
            (String::from_utf8_lossy(&name[..end]).into_owned(), version)
        })
        .collect()
}

#[test]
fn platform_strings() {
    let p = find_platform();
    assert_eq!(
        platform_info_string(p, CL_PLATFORM_PROFILE).unwrap(),
        "FULL_PROFILE"
    );
    let version = platform_info_string(p, CL_PLATFORM_VERSION).unwrap();
    assert!(
        version.starts_with("OpenCL "),
        "CL_PLATFORM_VERSION {version:?}"
    );
    let name = platform_info_string(p, CL_PLATFORM_NAME).unwrap();
    assert!(name
        .to_lowercase()
        .contains(&wanted_platform_name().to_lowercase()));
    assert!(!platform_info_string(p, CL_PLATFORM_VENDOR)
        .unwrap()
        .is_empty());
    if testing_cranecl() {
        assert!(
            version.starts_with("OpenCL 3.1 "),
            "CL_PLATFORM_VERSION {version:?}"
        );
    }
}

#[test]
fn platform_numeric_version_and_extensions_with_version() {
    let p = find_platform();
    let bytes = platform_info_bytes(p, CL_PLATFORM_NUMERIC_VERSION).unwrap();
    assert_eq!(
        bytes.len(),
        4,
        "CL_PLATFORM_NUMERIC_VERSION is a cl_version (4 bytes)"
    );
    let version = from_bytes::<u32>(&bytes)[0];
    assert!(
        version >= make_version(3, 0, 0),
        "numeric version {version:#x}"
    );
    let ext: Vec<String> = platform_info_string(p, CL_PLATFORM_EXTENSIONS)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let with_version =
        name_versions(&platform_info_bytes(p, CL_PLATFORM_EXTENSIONS_WITH_VERSION).unwrap());
    let names: Vec<String> = with_version.iter().map(|(n, _)| n.clone()).collect();
    for e in &ext {
        assert!(
            names.contains(e),
            "{e} in CL_PLATFORM_EXTENSIONS but not in ..._WITH_VERSION {names:?}"
        );
    }
    let timer = platform_info_bytes(p, CL_PLATFORM_HOST_TIMER_RESOLUTION).unwrap();
    assert_eq!(
        timer.len(),
        8,
        "CL_PLATFORM_HOST_TIMER_RESOLUTION is a cl_ulong"
    );
}

#[test]
fn platform_info_size_protocol() {
    let p = find_platform();
    let name = platform_info_string(p, CL_PLATFORM_NAME).unwrap();
    let mut small = [0u8; 2];
    // SAFETY: buffer of 2 bytes, size given as 2.
    let code = unsafe {
        clGetPlatformInfo(
            p,
            CL_PLATFORM_NAME,
            2,
            small.as_mut_ptr().cast(),
            ptr::null_mut(),
        )
    };
    if name.len() + 1 > 2 {
        assert_eq!(
            code, CL_INVALID_VALUE,
            "too small a buffer must be CL_INVALID_VALUE"
        );
    }
    // SAFETY: an unknown parameter with no output.
    let code = unsafe { clGetPlatformInfo(p, 0x09ff, 0, ptr::null_mut(), ptr::null_mut()) };
    assert_eq!(code, CL_INVALID_VALUE, "unknown param_name");
    let mut size = 0usize;
    // SAFETY: size-only query.
    let code = unsafe { clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, ptr::null_mut(), &mut size) };
    assert_eq!(code, CL_SUCCESS as cl_int);
    assert_eq!(size, name.len() + 1);
}

#[test]
fn device_enumeration() {
    let p = find_platform();
    let mut count: cl_uint = 0;
    // SAFETY: count query.
    let code = unsafe { clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, ptr::null_mut(), &mut count) };
    assert_eq!(code, CL_SUCCESS as cl_int);
    assert!(count >= 1);
    if testing_cranecl() {
        assert_eq!(count, 1, "cranecl exposes exactly one CPU device");
        // SAFETY: count query.
        let code = unsafe { clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 0, ptr::null_mut(), &mut count) };
        assert_eq!(code, CL_SUCCESS as cl_int);
        assert_eq!(count, 1);
        // SAFETY: count query.
        let code = unsafe { clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 0, ptr::null_mut(), &mut count) };
        assert_eq!(code, CL_DEVICE_NOT_FOUND, "no GPU on cranecl");
        // SAFETY: count query.
        let code =
            unsafe { clGetDeviceIDs(p, CL_DEVICE_TYPE_DEFAULT, 0, ptr::null_mut(), &mut count) };
        assert_eq!(code, CL_SUCCESS as cl_int);
        assert_eq!(count, 1);
    }
    let mut dev: cl_device_id = ptr::null_mut();
    // SAFETY: num_entries 0 with a non-NULL list is CL_INVALID_VALUE.
    let code = unsafe { clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, &mut dev, ptr::null_mut()) };
    assert_eq!(code, CL_INVALID_VALUE);
    // SAFETY: both outputs NULL is CL_INVALID_VALUE.
    let code =
        unsafe { clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, ptr::null_mut(), ptr::null_mut()) };
    assert_eq!(code, CL_INVALID_VALUE);
    if testing_cranecl() {
        // No such device type bit (PoCL 3.1 answers CL_DEVICE_NOT_FOUND).
        // SAFETY: output pointers valid.
        let code = unsafe { clGetDeviceIDs(p, 1 << 20, 1, &mut dev, ptr::null_mut()) };
        assert_eq!(code, CL_INVALID_DEVICE_TYPE);
    }
}

#[test]
fn device_scalar_queries_have_spec_types() {
    let d = first_device(find_platform());
    let ty: cl_device_type = device_info(d, CL_DEVICE_TYPE).unwrap();
    if testing_cranecl() {
        assert_eq!(
            ty & CL_DEVICE_TYPE_CPU,
            CL_DEVICE_TYPE_CPU,
            "device type {ty:#x}"
        );
    }
    let _vendor_id: cl_uint = device_info(d, CL_DEVICE_VENDOR_ID).unwrap();
    let units: cl_uint = device_info(d, CL_DEVICE_MAX_COMPUTE_UNITS).unwrap();
    assert!(units >= 1);
    let dims: cl_uint = device_info(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS).unwrap();
    assert!(dims >= 3);
    let sizes = from_bytes::<usize>(&device_info_bytes(d, CL_DEVICE_MAX_WORK_ITEM_SIZES).unwrap());
    assert_eq!(
        sizes.len(),
        dims as usize,
        "CL_DEVICE_MAX_WORK_ITEM_SIZES has one size_t per dimension"
    );
    let wg: usize = device_info(d, CL_DEVICE_MAX_WORK_GROUP_SIZE).unwrap();
    assert!(wg >= 1 && sizes.iter().all(|&s| s >= 1));
    assert!(sizes[0] <= wg.max(sizes[0]));
    let bits: cl_uint = device_info(d, CL_DEVICE_ADDRESS_BITS).unwrap();
    assert_eq!(bits, 64);
    let global: cl_ulong = device_info(d, CL_DEVICE_GLOBAL_MEM_SIZE).unwrap();
    let max_alloc: cl_ulong = device_info(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE).unwrap();
    assert!(
        max_alloc >= (global / 4).clamp(32 << 20, 1 << 30), // OpenCL 3.0 minimum
        "max alloc {max_alloc} of {global}"
    );
    let local: cl_ulong = device_info(d, CL_DEVICE_LOCAL_MEM_SIZE).unwrap();
    assert!(
        local >= 32 * 1024,
        "local memory {local} < 32 KiB (FULL_PROFILE minimum)"
    );
    let const_size: cl_ulong = device_info(d, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE).unwrap();
    assert!(const_size >= 64 * 1024);
    let param_size: usize = device_info(d, CL_DEVICE_MAX_PARAMETER_SIZE).unwrap();
    assert!(param_size >= 1024);
    let align: cl_uint = device_info(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN).unwrap();
    assert!(
        align >= 8 * 16,
        "CL_DEVICE_MEM_BASE_ADDR_ALIGN {align} bits is less than a long16"
    );
    let little: cl_bool = device_info(d, CL_DEVICE_ENDIAN_LITTLE).unwrap();
    assert_eq!(little, CL_TRUE);
    let available: cl_bool = device_info(d, CL_DEVICE_AVAILABLE).unwrap();
    assert_eq!(available, CL_TRUE);
    let compiler: cl_bool = device_info(d, CL_DEVICE_COMPILER_AVAILABLE).unwrap();
    assert_eq!(compiler, CL_TRUE);
    let _resolution: usize = device_info(d, CL_DEVICE_PROFILING_TIMER_RESOLUTION).unwrap();
    let _local_type: cl_uint = device_info(d, CL_DEVICE_LOCAL_MEM_TYPE).unwrap();
    let _image: cl_bool = device_info(d, CL_DEVICE_IMAGE_SUPPORT).unwrap();
    let exec: cl_ulong = device_info(d, CL_DEVICE_EXECUTION_CAPABILITIES).unwrap();
    assert_ne!(exec & CL_EXEC_KERNEL, 0);
    let queue_props: cl_ulong = device_info(d, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES).unwrap();
    let _ = queue_props;
    let fp32: cl_ulong = device_info(d, CL_DEVICE_SINGLE_FP_CONFIG).unwrap();
    assert_eq!(
        fp32 & (CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN),
        CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN
    );
    let fp64: cl_ulong = device_info(d, CL_DEVICE_DOUBLE_FP_CONFIG).unwrap();
    if testing_cranecl() {
        assert_ne!(fp64 & CL_FP_FMA, 0, "cranecl claims cl_khr_fp64 with FMA");
    }
    let platform: cl_platform_id =
        device_info::<usize>(d, CL_DEVICE_PLATFORM).unwrap() as cl_platform_id;
    assert_eq!(platform, find_platform());
    let numeric: cl_uint = device_info(d, CL_DEVICE_NUMERIC_VERSION).unwrap();
    assert!(numeric >= make_version(1, 2, 0));
    if testing_cranecl() {
        assert_eq!(numeric, make_version(3, 1, 0));
    }
    let _sub_groups: cl_uint = device_info(d, CL_DEVICE_MAX_NUM_SUB_GROUPS).unwrap();
    let _nonuniform: cl_bool = device_info(d, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT).unwrap();
    let _generic: cl_bool = device_info(d, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT).unwrap();
    let _pipes: cl_bool = device_info(d, CL_DEVICE_PIPE_SUPPORT).unwrap();
    let _wg_collectives: cl_bool =
        device_info(d, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT).unwrap();
    let _atomics: cl_ulong = device_info(d, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES).unwrap();
}

#[test]
fn device_strings() {
    let d = first_device(find_platform());
    assert_eq!(
        device_info_string(d, CL_DEVICE_PROFILE).unwrap(),
        "FULL_PROFILE"
    );
    let version = device_info_string(d, CL_DEVICE_VERSION).unwrap();
    assert!(
        version.starts_with("OpenCL "),
        "CL_DEVICE_VERSION {version:?}"
    );
    let c_version = device_info_string(d, CL_DEVICE_OPENCL_C_VERSION).unwrap();
    assert!(
        c_version.starts_with("OpenCL C "),
        "CL_DEVICE_OPENCL_C_VERSION {c_version:?}"
    );
    assert!(!device_info_string(d, CL_DEVICE_NAME).unwrap().is_empty());
    assert!(!device_info_string(d, CL_DEVICE_VENDOR).unwrap().is_empty());
    assert!(!device_info_string(d, CL_DRIVER_VERSION).unwrap().is_empty());
    let _builtins = device_info_string(d, CL_DEVICE_BUILT_IN_KERNELS).unwrap();
    let _il = device_info_string(d, CL_DEVICE_IL_VERSION).unwrap();
    if testing_cranecl() {
        assert!(
            version.starts_with("OpenCL 3.1 "),
            "CL_DEVICE_VERSION {version:?}"
        );
        let il = device_info_string(d, CL_DEVICE_IL_VERSION).unwrap();
        assert!(il.contains("SPIR-V_1."), "CL_DEVICE_IL_VERSION {il:?}");
    }
}

#[test]
fn device_versioned_lists() {
    let d = first_device(find_platform());
    let ext: Vec<String> = device_info_string(d, CL_DEVICE_EXTENSIONS)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let with_version =
        name_versions(&device_info_bytes(d, CL_DEVICE_EXTENSIONS_WITH_VERSION).unwrap());
    let names: Vec<&str> = with_version.iter().map(|(n, _)| n.as_str()).collect();
    for e in &ext {
        assert!(
            names.contains(&e.as_str()),
            "{e} missing from CL_DEVICE_EXTENSIONS_WITH_VERSION"
        );
    }
    let c_versions = name_versions(&device_info_bytes(d, CL_DEVICE_OPENCL_C_ALL_VERSIONS).unwrap());
    assert!(
        !c_versions.is_empty(),
        "CL_DEVICE_OPENCL_C_ALL_VERSIONS is empty"
    );
    let _features = name_versions(&device_info_bytes(d, CL_DEVICE_OPENCL_C_FEATURES).unwrap());
    let ils = name_versions(&device_info_bytes(d, CL_DEVICE_ILS_WITH_VERSION).unwrap());
    if testing_cranecl() {
        for wanted in [
            "cl_khr_icd",
            "cl_khr_fp64",
            "cl_khr_il_program",
            "cl_khr_subgroups",
            "cl_intel_subgroups",
        ] {
            assert!(
                ext.iter().any(|e| e == wanted),
                "cranecl must claim {wanted}; has {ext:?}"
            );
        }
        // An OpenCL 3.1 device supports OpenCL C 3.1, 3.0, 1.2, 1.1 and 1.0.
        for (major, minor) in [(3, 1), (3, 0), (1, 1), (1, 0)] {
            assert!(
                c_versions
                    .iter()
                    .any(|(n, v)| n == "OpenCL C" && *v == make_version(major, minor, 0)),
                "no OpenCL C {major}.{minor}: {c_versions:?}"
            );
        }
        assert!(
            c_versions.iter().any(|(_, v)| *v == make_version(1, 2, 0)),
            "no OpenCL C 1.2: {c_versions:?}"
        );
        assert!(
            ils.iter().any(|(n, _)| n == "SPIR-V"),
            "no SPIR-V in CL_DEVICE_ILS_WITH_VERSION: {ils:?}"
        );
        let features = name_versions(&device_info_bytes(d, CL_DEVICE_OPENCL_C_FEATURES).unwrap());
        assert!(
            features.iter().any(|(n, _)| n == "__opencl_c_subgroups"),
            "{features:?}"
        );
    }
}

#[test]
fn intel_sub_group_sizes() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_intel_subgroups"),
        "cl_intel_subgroups",
    ) {
        return;
    }
    let sizes = ctx.sub_group_sizes();
    for w in [4usize, 8, 16, 32] {
        assert!(
            sizes.contains(&w),
            "CL_DEVICE_SUB_GROUP_SIZES_INTEL {sizes:?} lacks {w}"
        );
    }
    let max_sub_groups: cl_uint = device_info(ctx.device, CL_DEVICE_MAX_NUM_SUB_GROUPS).unwrap();
    assert!(max_sub_groups >= 1);
}

/// Every core OpenCL 3.0 device query must succeed (clinfo asks all of them).
#[test]
fn every_core_device_query_succeeds() {
    let d = first_device(find_platform());
    let params = (0x1000u32..=0x1032)
        .chain(0x1034..=0x105E)
        .chain(0x1060..=0x1069)
        .chain(0x106F..=0x1072);
    let mut failed = Vec::new();
    for param in params {
        if let Err(e) = device_info_bytes(d, param) {
            failed.push(e.to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "device queries failed:\n{}",
        failed.join("\n")
    );
    // SAFETY: unknown parameter, no output.
    let code = unsafe { clGetDeviceInfo(d, 0x10ff_fff0, 0, ptr::null_mut(), ptr::null_mut()) };
    assert_eq!(code, CL_INVALID_VALUE);
}

#[test]
fn context_and_queue_info() {
    let ctx = DeviceContext::new();
    let devices = query_bytes("clGetContextInfo(CL_CONTEXT_DEVICES)", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetContextInfo(ctx.context.raw(), CL_CONTEXT_DEVICES, n, p, r) }
    })
    .unwrap();
    assert_eq!(from_bytes::<usize>(&devices), vec![ctx.device as usize]);
    let num: cl_uint = query_value("clGetContextInfo(CL_CONTEXT_NUM_DEVICES)", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetContextInfo(ctx.context.raw(), CL_CONTEXT_NUM_DEVICES, n, p, r) }
    })
    .unwrap();
    assert_eq!(num, 1);
    let refs: cl_uint = query_value("clGetContextInfo(CL_CONTEXT_REFERENCE_COUNT)", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetContextInfo(ctx.context.raw(), CL_CONTEXT_REFERENCE_COUNT, n, p, r) }
    })
    .unwrap();
    assert!(refs >= 1);
    let qdev: usize = query_value("clGetCommandQueueInfo(CL_QUEUE_DEVICE)", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetCommandQueueInfo(ctx.queue.raw(), CL_QUEUE_DEVICE, n, p, r) }
    })
    .unwrap();
    assert_eq!(qdev, ctx.device as usize);
    let qctx: usize = query_value("clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetCommandQueueInfo(ctx.queue.raw(), CL_QUEUE_CONTEXT, n, p, r) }
    })
    .unwrap();
    assert_eq!(qctx, ctx.context.raw() as usize);
    let props: cl_ulong = query_value("clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetCommandQueueInfo(ctx.queue.raw(), CL_QUEUE_PROPERTIES, n, p, r) }
    })
    .unwrap();
    assert_eq!(props, 0);
}

#[test]
fn context_from_type_and_queue_with_properties() {
    let p = find_platform();
    let props: [cl_context_properties; 3] = [
        CL_CONTEXT_PLATFORM as cl_context_properties,
        p as cl_context_properties,
        0,
    ];
    let mut err = 0;
    // SAFETY: valid property list, no callback.
    let raw = unsafe {
        clCreateContextFromType(
            props.as_ptr(),
            CL_DEVICE_TYPE_ALL,
            None,
            ptr::null_mut(),
            &mut err,
        )
    };
    check(err, "clCreateContextFromType").unwrap();
    // SAFETY: creation succeeded.
    let context = unsafe { Context::from_raw(raw) };
    let d = first_device(p);
    let qprops: [cl_queue_properties; 3] = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_PROFILING_ENABLE,
        0,
    ];
    // SAFETY: valid context/device, zero-terminated properties.
    let raw =
        unsafe { clCreateCommandQueueWithProperties(context.raw(), d, qprops.as_ptr(), &mut err) };
    check(err, "clCreateCommandQueueWithProperties").unwrap();
    // SAFETY: creation succeeded.
    let _queue = unsafe { Queue::from_raw(raw) };
}

#[test]
fn reference_counts_and_object_churn() {
    let ctx = DeviceContext::new();
    let count = |c: &Context| -> cl_uint {
        query_value("CL_CONTEXT_REFERENCE_COUNT", |n, p, r| {
            // SAFETY: pointers from query_bytes.
            unsafe { clGetContextInfo(c.raw(), CL_CONTEXT_REFERENCE_COUNT, n, p, r) }
        })
        .unwrap()
    };
    let before = count(&ctx.context);
    let extra = ctx.context.clone();
    let extra2 = ctx.context.clone();
    assert_eq!(
        count(&ctx.context),
        before + 2,
        "clRetainContext increments"
    );
    drop(extra);
    drop(extra2);
    assert_eq!(count(&ctx.context), before, "clReleaseContext decrements");
    // Many short-lived objects: nothing leaks into later results, nothing crashes.
    for round in 0..40 {
        let local = DeviceContext::new();
        let kernel = local.kernel(
            "kernel void k(global int* o, int v) { o[get_global_id(0)] = v; }",
            "",
            "k",
        );
        let buf = local.buffer_zeroed::<i32>(32);
        kernel.arg_buffer(0, &buf).arg(1, round);
        local.run(&kernel, &[32], None);
        assert_eq!(local.read::<i32>(&buf, 32), vec![round; 32]);
    }
}

/// What OpenCL 3.1 requires of a device (API spec 4.2 and appendix "Changes from
/// OpenCL 3.0 to 3.1"), checked on any device that reports 3.1 or newer: sub-groups,
/// the nine extensions 3.1 promotes, SPIR-V 1.0 to 1.4, OpenCL C 3.1 (with 3.0, 1.2,
/// 1.1, 1.0), and the promoted queries under their core names (same values as the
/// KHR ones), the packed 4x8-bit dot product among them.
#[test]
fn opencl_3_1_device_requirements() {
    let ctx = DeviceContext::new();
    let d = ctx.device;
    let numeric: cl_uint = device_info(d, CL_DEVICE_NUMERIC_VERSION).unwrap();
    if testing_cranecl() {
        assert_eq!(numeric, make_version(3, 1, 0));
    }
    if numeric < make_version(3, 1, 0) {
        return;
    }
    let sub_groups: cl_uint = device_info(d, CL_DEVICE_MAX_NUM_SUB_GROUPS).unwrap();
    assert!(sub_groups > 0, "OpenCL 3.1 requires sub-groups");
    for ext in [
        "cl_khr_spirv_queries",
        "cl_khr_extended_bit_ops",
        "cl_khr_suggested_local_work_size",
        "cl_khr_device_uuid",
        "cl_khr_integer_dot_product",
        "cl_khr_subgroup_extended_types",
        "cl_khr_subgroup_rotate",
        "cl_khr_subgroup_shuffle",
        "cl_khr_subgroup_shuffle_relative",
    ] {
        assert!(ctx.has_extension(ext), "OpenCL 3.1 requires {ext}");
    }
    let il = device_info_string(d, CL_DEVICE_IL_VERSION).unwrap();
    let ils = name_versions(&device_info_bytes(d, CL_DEVICE_ILS_WITH_VERSION).unwrap());
    for minor in 0..=4 {
        assert!(
            il.split_whitespace()
                .any(|v| v == format!("SPIR-V_1.{minor}")),
            "CL_DEVICE_IL_VERSION {il:?} lacks SPIR-V 1.{minor}"
        );
        assert!(
            ils.iter()
                .any(|(n, v)| n == "SPIR-V" && *v == make_version(1, minor, 0)),
            "CL_DEVICE_ILS_WITH_VERSION lacks SPIR-V 1.{minor}: {ils:?}"
        );
    }
    for (major, minor) in [(3, 1), (3, 0), (1, 2), (1, 1), (1, 0)] {
        assert!(
            ctx.supports_opencl_c(major, minor),
            "OpenCL 3.1 requires OpenCL C {major}.{minor}"
        );
    }
    // Core names of the promoted queries (cl.h CL_VERSION_3_1): UUIDs, LUID, node
    // mask, dot product capabilities and acceleration properties, SPIR-V queries.
    for param in [
        0x106A, 0x106B, 0x106C, 0x106D, 0x106E, 0x1073, 0x1074, 0x1075, 0x12B9, 0x12BA, 0x12BB,
    ] {
        device_info_bytes(d, param).unwrap_or_else(|e| panic!("{e}"));
    }
    let dot: cl_ulong = device_info(d, 0x1073).unwrap();
    assert_ne!(
        dot & 1,
        0,
        "OpenCL C 3.1 requires CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED"
    );
    let uuid = device_info_bytes(d, 0x106A).unwrap();
    assert_eq!(uuid.len(), 16, "CL_UUID_SIZE");
}
