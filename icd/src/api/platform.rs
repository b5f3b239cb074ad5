//! Platform entry points and the ICD loader contract: clIcdGetPlatformIDsKHR,
//! extension function lookup, cl_khr_icd 2.0 dispatch data, host timers.

use cranecl_runtime::features;
use cranecl_runtime::object;
use cranecl_runtime::platform::{self as rt, now_ns, Platform};

use cranecl_runtime::platform::Device;

use super::prelude::*;
use crate::dispatch;

/// `CL_MAKE_VERSION`.
pub fn make_version(major: u32, minor: u32, patch: u32) -> cl_version {
    (major << 22) | (minor << 12) | patch
}

/// A `cl_name_version` entry.
pub fn name_version(name: &str, version: cl_version) -> cl_name_version {
    let mut out = cl_name_version {
        version,
        name: [0; CL_NAME_VERSION_MAX_NAME_SIZE],
    };
    for (dst, src) in out
        .name
        .iter_mut()
        .zip(name.bytes().take(CL_NAME_VERSION_MAX_NAME_SIZE - 1))
    {
        *dst = src as _;
    }
    out
}

/// `CL_PLATFORM_EXTENSIONS`: the platform-level extensions (cl_khr_icd).
fn platform_extensions() -> Vec<(&'static str, (u32, u32, u32))> {
    features::EXTENSIONS
        .iter()
        .filter(|(n, _)| *n == "cl_khr_icd")
        .copied()
        .collect()
}

/// The platform handle (the one platform).
pub fn platform_handle() -> cl_platform_id {
    handle_of(Platform::get())
}

/// Resolves an optional platform argument (NULL means ours).
pub fn check_platform(platform: cl_platform_id) -> CLResult<()> {
    if !platform.is_null() {
        get::<Platform>(platform)?;
    }
    Ok(())
}

fn platform_ids(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> CLResult<()> {
    if (num_entries == 0 && !platforms.is_null())
        || (platforms.is_null() && num_platforms.is_null())
    {
        return Err(CL_INVALID_VALUE);
    }
    write_out(platforms, platform_handle());
    write_out(num_platforms, 1);
    Ok(())
}

cl_entry! {
    fn clIcdGetPlatformIDsKHR(num_entries: cl_uint, platforms: *mut cl_platform_id, num_platforms: *mut cl_uint) -> cl_int {
        platform_ids(num_entries, platforms, num_platforms)
    }
}

cl_entry! {
    fn clGetPlatformIDs(num_entries: cl_uint, platforms: *mut cl_platform_id, num_platforms: *mut cl_uint) -> cl_int {
        platform_ids(num_entries, platforms, num_platforms)
    }
}

cl_entry! {
    fn clGetPlatformInfo(
        platform: cl_platform_id,
        param_name: cl_platform_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        check_platform(platform)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_PLATFORM_PROFILE => out.string(rt::PROFILE),
            CL_PLATFORM_VERSION => out.string(rt::PLATFORM_VERSION),
            CL_PLATFORM_NUMERIC_VERSION => {
                let (major, minor, patch) = rt::API_VERSION;
                out.value(make_version(major, minor, patch))
            }
            CL_PLATFORM_NAME => out.string(rt::NAME),
            CL_PLATFORM_VENDOR => out.string(rt::VENDOR),
            CL_PLATFORM_EXTENSIONS => {
                out.string(&platform_extensions().iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" "))
            }
            CL_PLATFORM_EXTENSIONS_WITH_VERSION => out.array(
                &platform_extensions()
                    .iter()
                    .map(|(n, (a, b, c))| name_version(n, make_version(*a, *b, *c)))
                    .collect::<Vec<_>>(),
            ),
            CL_PLATFORM_HOST_TIMER_RESOLUTION => out.value::<cl_ulong>(1),
            CL_PLATFORM_ICD_SUFFIX_KHR => out.string(rt::ICD_SUFFIX),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

fn extension_address(name: *const c_char) -> *mut c_void {
    match util::c_str(name) {
        Ok(name) => dispatch::lookup(name),
        Err(_) => std::ptr::null_mut(),
    }
}

cl_entry! {
    fn clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void {
        extension_address(func_name)
    }
}

cl_entry! {
    fn clGetExtensionFunctionAddressForPlatform(platform: cl_platform_id, func_name: *const c_char) -> *mut c_void {
        if check_platform(platform).is_err() {
            return std::ptr::null_mut();
        }
        extension_address(func_name)
    }
}

cl_entry! {
    fn clIcdGetFunctionAddressForPlatformKHR(platform: cl_platform_id, func_name: *const c_char) -> *mut c_void {
        if check_platform(platform).is_err() {
            return std::ptr::null_mut();
        }
        extension_address(func_name)
    }
}

cl_entry! {
    fn clIcdSetPlatformDispatchDataKHR(platform: cl_platform_id, disp_data: *mut c_void) -> cl_int {
        get::<Platform>(platform)?;
        object::set_dispatch_data(disp_data);
        Platform::get().refresh_dispatch();
        Ok(())
    }
}

cl_entry! {
    fn clUnloadCompiler() -> cl_int {
        cranecl_runtime::build::unload_compiler();
        Ok(())
    }
}

cl_entry! {
    fn clUnloadPlatformCompiler(platform: cl_platform_id) -> cl_int {
        get::<Platform>(platform)?;
        cranecl_runtime::build::unload_compiler();
        Ok(())
    }
}

cl_entry! {
    fn clGetHostTimer(device: cl_device_id, host_timestamp: *mut cl_ulong) -> cl_int {
        get::<Device>(device)?;
        if host_timestamp.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        write_out(host_timestamp, now_ns());
        Ok(())
    }
}

cl_entry! {
    fn clGetDeviceAndHostTimer(device: cl_device_id, device_timestamp: *mut cl_ulong, host_timestamp: *mut cl_ulong) -> cl_int {
        get::<Device>(device)?;
        if host_timestamp.is_null() || device_timestamp.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let now = now_ns();
        write_out(device_timestamp, now);
        write_out(host_timestamp, now);
        Ok(())
    }
}
