//! Memory-object entry points: buffers, sub-buffers, info, destructor callbacks.
//! (Transfers and maps are in `enqueue`.)

use cranecl_runtime::callback::{Callback, ObjectNotifyFn};
use cranecl_runtime::memory::{self, Mem};
use cranecl_runtime::object::ApiObject;

use cranecl_runtime::context::Context;

use super::prelude::*;

fn create_buffer(
    context: cl_context,
    properties: Option<*const cl_mem_properties>,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let ctx = get::<Context>(context)?;
    let props = match properties {
        Some(p) if !p.is_null() => {
            let list = util::property_list(p)?;
            if !list.is_empty() {
                // No buffer properties are supported.
                return Err(CL_INVALID_PROPERTY);
            }
            vec![0]
        }
        _ => Vec::new(),
    };
    memory::validate_flags(flags)?;
    let max = ctx
        .devices
        .iter()
        .map(|d| d.max_mem_alloc_size)
        .min()
        .unwrap_or(0);
    if size == 0 || size as u64 > max {
        return Err(CL_INVALID_BUFFER_SIZE);
    }
    // SAFETY: OpenCL requires `host_ptr` to be valid for `size` bytes when USE/COPY_HOST_PTR
    // is given (and for the buffer's life with USE_HOST_PTR).
    let mem = unsafe { Mem::new_buffer(ctx, flags, size, host_ptr, props)? };
    Ok(new_handle(mem))
}

cl_entry! {
    fn clCreateBuffer(context: cl_context, flags: cl_mem_flags, size: size_t, host_ptr: *mut c_void; errcode_ret) -> cl_mem {
        create_buffer(context, None, flags, size, host_ptr)
    }
}

cl_entry! {
    fn clCreateBufferWithProperties(
        context: cl_context,
        properties: *const cl_mem_properties,
        flags: cl_mem_flags,
        size: size_t,
        host_ptr: *mut c_void;
        errcode_ret
    ) -> cl_mem {
        create_buffer(context, Some(properties), flags, size, host_ptr)
    }
}

cl_entry! {
    fn clCreateSubBuffer(
        buffer: cl_mem,
        flags: cl_mem_flags,
        buffer_create_type: cl_buffer_create_type,
        buffer_create_info: *const c_void;
        errcode_ret
    ) -> cl_mem {
        let parent = get::<Mem>(buffer)?;
        if parent.is_pipe() {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        if buffer_create_type != CL_BUFFER_CREATE_TYPE_REGION {
            return Err(CL_INVALID_VALUE);
        }
        let region = util::slice(buffer_create_info.cast::<cl_buffer_region>(), 1)?;
        let region = region.first().ok_or(CL_INVALID_VALUE)?;
        Ok(new_handle(Mem::new_sub_buffer(&parent, flags, region.origin, region.size)?))
    }
}

cl_entry! {
    fn clRetainMemObject(memobj: cl_mem) -> cl_int {
        handle::retain::<Mem>(memobj)
    }
}

cl_entry! {
    fn clReleaseMemObject(memobj: cl_mem) -> cl_int {
        handle::release::<Mem>(memobj)
    }
}

cl_entry! {
    fn clGetMemObjectInfo(
        memobj: cl_mem,
        param_name: cl_mem_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let mem = get::<Mem>(memobj)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_MEM_TYPE => out.value::<cl_mem_object_type>(if mem.is_pipe() {
                CL_MEM_OBJECT_PIPE
            } else {
                CL_MEM_OBJECT_BUFFER
            }),
            CL_MEM_FLAGS => out.value(mem.flags),
            CL_MEM_SIZE => out.value::<usize>(mem.size),
            CL_MEM_HOST_PTR => out.value(mem.host_ptr),
            CL_MEM_MAP_COUNT => out.value::<cl_uint>(mem.map_count()),
            CL_MEM_REFERENCE_COUNT => out.value::<cl_uint>(mem.header().api_refs()),
            CL_MEM_CONTEXT => out.value(handle_of(&mem.context)),
            CL_MEM_ASSOCIATED_MEMOBJECT => {
                out.value(mem.parent().map_or(std::ptr::null_mut(), |(p, _)| handle_of(p)))
            }
            CL_MEM_OFFSET => out.value::<usize>(mem.parent().map_or(0, |(_, o)| o)),
            CL_MEM_USES_SVM_POINTER => {
                out.bool(!mem.host_ptr.is_null() && mem.context.svm.find(mem.host_ptr.cast()).is_some())
            }
            CL_MEM_PROPERTIES => out.array(&mem.properties),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

cl_entry! {
    fn clSetMemObjectDestructorCallback(
        memobj: cl_mem,
        pfn_notify: Option<unsafe extern "C" fn(memobj: cl_mem, user_data: *mut c_void)>,
        user_data: *mut c_void
    ) -> cl_int {
        let mem = get::<Mem>(memobj)?;
        let func = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        let func: ObjectNotifyFn = func;
        mem.add_destructor(Callback { func, user_data });
        Ok(())
    }
}

cl_entry! {
    fn clGetSupportedImageFormats(
        context: cl_context,
        flags: cl_mem_flags,
        image_type: cl_mem_object_type,
        num_entries: cl_uint,
        image_formats: *mut cl_image_format,
        num_image_formats: *mut cl_uint
    ) -> cl_int {
        get::<Context>(context)?;
        cranecl_runtime::memory::validate_flags(flags)?;
        let known = [
            CL_MEM_OBJECT_IMAGE1D,
            CL_MEM_OBJECT_IMAGE1D_ARRAY,
            CL_MEM_OBJECT_IMAGE1D_BUFFER,
            CL_MEM_OBJECT_IMAGE2D,
            CL_MEM_OBJECT_IMAGE2D_ARRAY,
            CL_MEM_OBJECT_IMAGE3D,
        ];
        if !known.contains(&image_type) || (num_entries == 0 && !image_formats.is_null()) {
            return Err(CL_INVALID_VALUE);
        }
        // The device has no image support: no formats.
        write_out(num_image_formats, 0);
        Ok(())
    }
}
