//! The ICD contract: the loader finds the platform, extension functions resolve, every
//! object starts with the same dispatch table, and the library also works when loaded
//! directly (`CRANECL_LIB` = path of libcranecl.so) the way a loader loads it.

use std::ffi::{c_char, c_void, CString};
use std::ptr;

use cranecl_conformance::consts::*;
use cranecl_conformance::sys::*;
use cranecl_conformance::*;

type GetPlatformIdsFn = unsafe extern "C" fn(cl_uint, *mut cl_platform_id, *mut cl_uint) -> cl_int;
type GetPlatformInfoFn =
    unsafe extern "C" fn(cl_platform_id, cl_uint, usize, *mut c_void, *mut usize) -> cl_int;
type GetExtFnAddrFn = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type GetExtFnAddrForPlatformFn = unsafe extern "C" fn(cl_platform_id, *const c_char) -> *mut c_void;
type GetKernelSubGroupInfoFn = unsafe extern "C" fn(
    cl_kernel,
    cl_device_id,
    cl_uint,
    usize,
    *const c_void,
    usize,
    *mut c_void,
    *mut usize,
) -> cl_int;

/// The first pointer-sized word of an OpenCL object: its dispatch table.
fn dispatch_of(handle: *mut c_void) -> usize {
    assert!(!handle.is_null());
    // SAFETY: every ICD object starts with its dispatch pointer (the contract under test).
    unsafe { *(handle as *const usize) }
}

fn cstring(s: &str) -> CString {
    CString::new(s).expect("test names have no NUL")
}

#[test]
fn loader_lists_the_platform_with_icd_suffix() {
    let platform = find_platform();
    let ext = platform_info_string(platform, CL_PLATFORM_EXTENSIONS).unwrap();
    assert!(
        ext.split_whitespace().any(|e| e == "cl_khr_icd"),
        "extensions lack cl_khr_icd: {ext}"
    );
    let suffix = platform_info_string(platform, CL_PLATFORM_ICD_SUFFIX_KHR).unwrap();
    assert!(!suffix.is_empty(), "empty CL_PLATFORM_ICD_SUFFIX_KHR");
    if testing_cranecl() {
        assert_eq!(suffix, "cranecl");
        let name = platform_info_string(platform, CL_PLATFORM_NAME).unwrap();
        assert_eq!(name, "cranecl");
    }
}

#[test]
fn every_object_starts_with_the_same_dispatch_table() {
    let ctx = DeviceContext::new();
    let table = dispatch_of(ctx.platform);
    assert_ne!(table, 0, "platform dispatch pointer is NULL");
    let program = ctx.build(
        "kernel void k(global int* p) { p[get_global_id(0)] = 1; }",
        "",
    );
    let kernel = program.kernel("k");
    let buffer = ctx.buffer_zeroed::<i32>(16);
    kernel.arg_buffer(0, &buffer);
    let event = ctx.try_enqueue(&kernel, None, &[16], None).unwrap();
    event.wait().unwrap();
    let objects: [(&str, *mut c_void); 7] = [
        ("device", ctx.device),
        ("context", ctx.context.raw()),
        ("queue", ctx.queue.raw()),
        ("buffer", buffer.raw()),
        ("program", program.raw()),
        ("kernel", kernel.raw()),
        ("event", event.raw()),
    ];
    for (what, handle) in objects {
        assert_eq!(
            dispatch_of(handle),
            table,
            "{what} has a different dispatch table than the platform"
        );
    }
}

#[test]
fn extension_function_addresses_through_the_loader() {
    let ctx = DeviceContext::new();
    let unknown = cstring("clNoSuchFunctionCraneclTestXYZ");
    // SAFETY: valid platform and NUL-terminated name.
    let none = unsafe { clGetExtensionFunctionAddressForPlatform(ctx.platform, unknown.as_ptr()) };
    assert!(none.is_null(), "an unknown name resolved to {none:?}");

    let supports = ctx.has_extension("cl_khr_subgroups");
    if !require(supports, "cl_khr_subgroups") {
        return;
    }
    let name = cstring("clGetKernelSubGroupInfoKHR");
    // SAFETY: valid platform and NUL-terminated name.
    let addr = unsafe { clGetExtensionFunctionAddressForPlatform(ctx.platform, name.as_ptr()) };
    assert!(
        !addr.is_null(),
        "clGetKernelSubGroupInfoKHR not found for the platform"
    );
    // SAFETY: the extension specifies this signature.
    let f: GetKernelSubGroupInfoFn = unsafe { std::mem::transmute(addr) };
    let kernel = ctx.kernel(
        "kernel void k(global int* p) { p[get_global_id(0)] = 2; }",
        "",
        "k",
    );
    let local = [64usize];
    let mut via_ext = 0usize;
    // SAFETY: valid kernel/device, input of one size_t, output one size_t.
    let code = unsafe {
        f(
            kernel.raw(),
            ctx.device,
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE_KHR,
            std::mem::size_of_val(&local),
            local.as_ptr().cast(),
            std::mem::size_of::<usize>(),
            (&mut via_ext as *mut usize).cast(),
            ptr::null_mut(),
        )
    };
    check(code, "clGetKernelSubGroupInfoKHR").unwrap();
    let via_core: usize = kernel
        .sub_group_info(ctx.device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &local)
        .unwrap();
    assert_eq!(via_ext, via_core);
    assert!(
        (1..=64).contains(&via_core),
        "max sub-group size {via_core} for a work-group of 64"
    );
}

#[test]
fn direct_load_icd_entry_points() {
    let Some(lib) = driver_direct() else {
        assert!(
            !testing_cranecl(),
            "libcranecl.so not found: set CRANECL_LIB"
        );
        eprintln!(
            "skipped: CRANECL_LIB not set for platform {:?}",
            wanted_platform_name()
        );
        return;
    };
    // SAFETY: symbol types follow the cl_khr_icd and core specifications.
    let (get_ext, get_ext_for) = unsafe {
        (
            *lib.get::<GetExtFnAddrFn>(b"clGetExtensionFunctionAddress\0")
                .expect("clGetExtensionFunctionAddress exported"),
            *lib.get::<GetExtFnAddrForPlatformFn>(b"clGetExtensionFunctionAddressForPlatform\0")
                .expect("clGetExtensionFunctionAddressForPlatform exported"),
        )
    };
    // A loader (ocl-icd, Khronos) finds clIcdGetPlatformIDsKHR through
    // clGetExtensionFunctionAddress; cranecl also exports it (and every cl* name).
    let icd_name = cstring("clIcdGetPlatformIDsKHR");
    // SAFETY: NUL-terminated name.
    let via_ext = unsafe { get_ext(icd_name.as_ptr()) };
    assert!(
        !via_ext.is_null(),
        "clGetExtensionFunctionAddress(clIcdGetPlatformIDsKHR) is NULL"
    );
    // SAFETY: the name resolves to clIcdGetPlatformIDsKHR's signature.
    let icd_get_ids: GetPlatformIdsFn = unsafe { std::mem::transmute(via_ext) };
    if testing_cranecl() {
        // SAFETY: symbol types follow the cl_khr_icd and core specifications.
        unsafe {
            lib.get::<GetPlatformIdsFn>(b"clIcdGetPlatformIDsKHR\0")
                .expect("clIcdGetPlatformIDsKHR exported");
            lib.get::<GetPlatformInfoFn>(b"clGetPlatformInfo\0")
                .expect("clGetPlatformInfo exported");
        }
    }

    let mut count: cl_uint = 0;
    // SAFETY: size query with a valid count pointer.
    check(
        unsafe { icd_get_ids(0, ptr::null_mut(), &mut count) },
        "clIcdGetPlatformIDsKHR",
    )
    .unwrap();
    assert!(count >= 1, "clIcdGetPlatformIDsKHR reports no platform");
    if testing_cranecl() {
        // Both NULL is CL_INVALID_VALUE per cl_khr_icd (PoCL 3.1 returns CL_SUCCESS).
        // SAFETY: no output pointers are written.
        assert_eq!(
            unsafe { icd_get_ids(0, ptr::null_mut(), ptr::null_mut()) },
            CL_INVALID_VALUE
        );
    }
    let mut platform: cl_platform_id = ptr::null_mut();
    // SAFETY: room for one platform.
    check(
        unsafe { icd_get_ids(1, &mut platform, ptr::null_mut()) },
        "clIcdGetPlatformIDsKHR",
    )
    .unwrap();
    assert!(!platform.is_null());

    // The dispatch table is what the loader calls through: slot 1 is clGetPlatformInfo.
    let table = dispatch_of(platform) as *const usize;
    assert!(!table.is_null());
    // SAFETY: slot 1 of the Khronos dispatch table is clGetPlatformInfo.
    let get_info: GetPlatformInfoFn = unsafe { std::mem::transmute(*table.add(1)) };
    let info_string = |param: cl_uint| -> String {
        let bytes = query_bytes("clGetPlatformInfo (dispatch slot 1)", |n, p, r| {
            // SAFETY: pointers from query_bytes.
            unsafe { get_info(platform, param, n, p, r) }
        })
        .unwrap();
        bytes_to_string("clGetPlatformInfo (direct)", &bytes)
    };
    let ext = info_string(CL_PLATFORM_EXTENSIONS);
    assert!(
        ext.split_whitespace().any(|e| e == "cl_khr_icd"),
        "extensions lack cl_khr_icd: {ext}"
    );
    let suffix = info_string(CL_PLATFORM_ICD_SUFFIX_KHR);
    if testing_cranecl() {
        assert_eq!(suffix, "cranecl");
    }

    let mut again: cl_platform_id = ptr::null_mut();
    // SAFETY: room for one platform.
    check(
        unsafe { icd_get_ids(1, &mut again, ptr::null_mut()) },
        "clIcdGetPlatformIDsKHR again",
    )
    .unwrap();
    assert_eq!(again, platform, "a second call returns another platform");

    // SAFETY: valid platform and NUL-terminated name.
    let via_platform = unsafe { get_ext_for(platform, icd_name.as_ptr()) };
    assert!(
        !via_platform.is_null(),
        "clGetExtensionFunctionAddressForPlatform(clIcdGetPlatformIDsKHR) is NULL"
    );
    if testing_cranecl() {
        let sg = cstring("clGetKernelSubGroupInfoKHR");
        // SAFETY: valid platform and NUL-terminated name.
        let addr = unsafe { get_ext_for(platform, sg.as_ptr()) };
        assert!(!addr.is_null(), "clGetKernelSubGroupInfoKHR not resolvable");
    }
    let unknown = cstring("clNoSuchFunctionCraneclTestXYZ");
    // SAFETY: NUL-terminated name.
    assert!(unsafe { get_ext(unknown.as_ptr()) }.is_null());
    if testing_cranecl() {
        // SAFETY: a NULL name must not crash cranecl (it returns NULL).
        assert!(unsafe { get_ext(ptr::null()) }.is_null());
    }
}
