//! Context entry points.

use cranecl_runtime::callback::{Callback, ContextNotifyFn, ObjectNotifyFn};
use cranecl_runtime::context::Context;
use cranecl_runtime::platform::Platform;

use super::device::type_matches;
use cranecl_runtime::platform::Device;

use super::prelude::*;

/// Validates a context property list; returns it with its terminator (empty for NULL).
fn context_properties(
    properties: *const cl_context_properties,
) -> CLResult<Vec<cl_context_properties>> {
    let list = util::property_list(properties)?;
    let mut seen = Vec::new();
    for pair in list.chunks_exact(2) {
        let (name, value) = (pair[0], pair[1]);
        if seen.contains(&name) {
            return Err(CL_INVALID_PROPERTY);
        }
        seen.push(name);
        match name {
            p if p == CL_CONTEXT_PLATFORM as cl_context_properties => {
                get::<Platform>(value as cl_platform_id).map_err(|_| CL_INVALID_PLATFORM)?;
            }
            // A cl_bool: CL_TRUE or CL_FALSE.
            p if p == CL_CONTEXT_INTEROP_USER_SYNC as cl_context_properties => {
                if value != CL_TRUE as cl_context_properties
                    && value != CL_FALSE as cl_context_properties
                {
                    return Err(CL_INVALID_PROPERTY);
                }
            }
            _ => return Err(CL_INVALID_PROPERTY),
        }
    }
    let mut out = list.to_vec();
    if !out.is_empty() {
        out.push(0);
    }
    Ok(out)
}

fn notify(
    pfn_notify: Option<unsafe extern "C" fn(*const c_char, *const c_void, size_t, *mut c_void)>,
    user_data: *mut c_void,
) -> CLResult<Option<Callback<ContextNotifyFn>>> {
    match pfn_notify {
        None if !user_data.is_null() => Err(CL_INVALID_VALUE),
        None => Ok(None),
        Some(func) => Ok(Some(Callback { func, user_data })),
    }
}

cl_entry! {
    fn clCreateContext(
        properties: *const cl_context_properties,
        num_devices: cl_uint,
        devices: *const cl_device_id,
        pfn_notify: Option<unsafe extern "C" fn(errinfo: *const c_char, private_info: *const c_void, cb: size_t, user_data: *mut c_void)>,
        user_data: *mut c_void;
        errcode_ret
    ) -> cl_context {
        if devices.is_null() || num_devices == 0 {
            return Err(CL_INVALID_VALUE);
        }
        let notify = notify(pfn_notify, user_data)?;
        let props = context_properties(properties)?;
        let mut list: Vec<Arc<Device>> = Vec::new();
        for d in handle::list::<Device>(devices, num_devices, CL_INVALID_VALUE)? {
            // A device listed twice is one device of the context.
            if !list.iter().any(|l| Arc::ptr_eq(l, &d)) {
                list.push(d);
            }
        }
        Ok(new_handle(Context::new(list, props, notify)))
    }
}

cl_entry! {
    fn clCreateContextFromType(
        properties: *const cl_context_properties,
        device_type: cl_device_type,
        pfn_notify: Option<unsafe extern "C" fn(errinfo: *const c_char, private_info: *const c_void, cb: size_t, user_data: *mut c_void)>,
        user_data: *mut c_void;
        errcode_ret
    ) -> cl_context {
        let notify = notify(pfn_notify, user_data)?;
        let props = context_properties(properties)?;
        if !type_matches(device_type)? {
            return Err(CL_DEVICE_NOT_FOUND);
        }
        Ok(new_handle(Context::new(vec![Platform::get().device().clone()], props, notify)))
    }
}

cl_entry! {
    fn clRetainContext(context: cl_context) -> cl_int {
        handle::retain::<Context>(context)
    }
}

cl_entry! {
    fn clReleaseContext(context: cl_context) -> cl_int {
        handle::release::<Context>(context)
    }
}

cl_entry! {
    fn clGetContextInfo(
        context: cl_context,
        param_name: cl_context_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let ctx = get::<Context>(context)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_CONTEXT_REFERENCE_COUNT => out.value::<cl_uint>(cranecl_runtime::object::ApiObject::header(&*ctx).api_refs()),
            CL_CONTEXT_NUM_DEVICES => out.value::<cl_uint>(ctx.devices.len() as cl_uint),
            CL_CONTEXT_DEVICES => {
                out.array(&ctx.devices.iter().map(handle_of).collect::<Vec<_>>())
            }
            CL_CONTEXT_PROPERTIES => out.array(&ctx.properties),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

cl_entry! {
    fn clSetContextDestructorCallback(
        context: cl_context,
        pfn_notify: Option<unsafe extern "C" fn(context: cl_context, user_data: *mut c_void)>,
        user_data: *mut c_void
    ) -> cl_int {
        let ctx = get::<Context>(context)?;
        let func = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        let func: ObjectNotifyFn = func;
        ctx.add_destructor(Callback { func, user_data });
        Ok(())
    }
}
