//! Kernel entry points: creation, arguments, kernel / argument / work-group /
//! sub-group queries.

use cranecl_jit::{AddressQualifier, ArgKind};
use cranecl_runtime::kernel::{ArgValue, Kernel};
use cranecl_runtime::object::ApiObject;

use cranecl_runtime::memory::Mem;
use cranecl_runtime::platform::Device;
use cranecl_runtime::program::Program;
use cranecl_runtime::queue::Queue;

use super::prelude::*;

cl_entry! {
    fn clCreateKernel(program: cl_program, kernel_name: *const c_char; errcode_ret) -> cl_kernel {
        let p = get::<Program>(program)?;
        let name = util::c_str(kernel_name)?;
        Ok(new_handle(Kernel::new(&p, name)?))
    }
}

cl_entry! {
    fn clCreateKernelsInProgram(
        program: cl_program,
        num_kernels: cl_uint,
        kernels: *mut cl_kernel,
        num_kernels_ret: *mut cl_uint
    ) -> cl_int {
        let p = get::<Program>(program)?;
        let names = p.kernel_names().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
        if !kernels.is_null() && (num_kernels as usize) < names.len() {
            return Err(CL_INVALID_VALUE);
        }
        if !kernels.is_null() {
            for (i, k) in Kernel::all(&p)?.into_iter().enumerate() {
                // SAFETY: `kernels` has room for `num_kernels` >= names.len() handles.
                unsafe { kernels.add(i).write(new_handle(k)) };
            }
        }
        write_out(num_kernels_ret, names.len() as cl_uint);
        Ok(())
    }
}

cl_entry! {
    fn clCloneKernel(source_kernel: cl_kernel; errcode_ret) -> cl_kernel {
        Ok(new_handle(get::<Kernel>(source_kernel)?.clone_kernel()))
    }
}

cl_entry! {
    fn clRetainKernel(kernel: cl_kernel) -> cl_int {
        handle::retain::<Kernel>(kernel)
    }
}

cl_entry! {
    fn clReleaseKernel(kernel: cl_kernel) -> cl_int {
        handle::release::<Kernel>(kernel)
    }
}

cl_entry! {
    fn clSetKernelArg(kernel: cl_kernel, arg_index: cl_uint, arg_size: size_t, arg_value: *const c_void) -> cl_int {
        let k = get::<Kernel>(kernel)?;
        let arg = k.arg(arg_index)?;
        let value = match arg.kind {
            ArgKind::GlobalPtr | ArgKind::ConstantPtr => {
                if arg_size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                let mem = if arg_value.is_null() {
                    std::ptr::null_mut()
                } else {
                    util::slice(arg_value.cast::<cl_mem>(), 1).map_err(|_| CL_INVALID_ARG_VALUE)?[0]
                };
                let mem = get_opt::<Mem>(mem).map_err(|_| CL_INVALID_MEM_OBJECT)?;
                if mem.as_ref().is_some_and(|m| !Arc::ptr_eq(&m.context, &k.program.context)) {
                    return Err(CL_INVALID_MEM_OBJECT);
                }
                // A pipe is not a buffer.
                if mem.as_ref().is_some_and(|m| m.is_pipe()) {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                ArgValue::Mem(mem.as_ref().map(Arc::downgrade))
            }
            ArgKind::Pipe => {
                if arg_size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if arg_value.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                let h = util::slice(arg_value.cast::<cl_mem>(), 1).map_err(|_| CL_INVALID_ARG_VALUE)?[0];
                // A pipe argument cannot be NULL (CL_INVALID_ARG_VALUE, as Intel's).
                if h.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                let mem = get::<Mem>(h).map_err(|_| CL_INVALID_MEM_OBJECT)?;
                if !Arc::ptr_eq(&mem.context, &k.program.context) {
                    return Err(CL_INVALID_MEM_OBJECT);
                }
                // A buffer is not a pipe.
                if !mem.is_pipe() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                ArgValue::Mem(Some(Arc::downgrade(&mem)))
            }
            ArgKind::LocalPtr => {
                if !arg_value.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                // A size of zero is valid on an OpenCL 3.1 platform (no __local
                // memory for the argument; runtime::kernel::Kernel::set_arg).
                ArgValue::Local(arg_size)
            }
            ArgKind::Value => {
                if arg_size != arg.size {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if arg_value.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                ArgValue::Bytes(util::slice(arg_value.cast::<u8>(), arg_size)?.to_vec())
            }
            ArgKind::Queue => {
                if arg_size != std::mem::size_of::<cl_command_queue>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if arg_value.is_null() {
                    return Err(CL_INVALID_DEVICE_QUEUE);
                }
                let q = util::slice(arg_value.cast::<cl_command_queue>(), 1)
                    .map_err(|_| CL_INVALID_DEVICE_QUEUE)?[0];
                let q = get::<Queue>(q).map_err(|_| CL_INVALID_DEVICE_QUEUE)?;
                if !q.on_device() {
                    return Err(CL_INVALID_DEVICE_QUEUE);
                }
                if !Arc::ptr_eq(&q.context, &k.program.context) {
                    return Err(CL_INVALID_DEVICE_QUEUE);
                }
                let value = cranecl_runtime::device_enqueue::queue_value(&q);
                ArgValue::Bytes(value.to_ne_bytes().to_vec())
            }
            ArgKind::Sampler => return Err(CL_INVALID_SAMPLER),
            ArgKind::Image => return Err(CL_INVALID_MEM_OBJECT),
        };
        k.set_arg(arg_index, arg_size, value)
    }
}

cl_entry! {
    fn clGetKernelInfo(
        kernel: cl_kernel,
        param_name: cl_kernel_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let k = get::<Kernel>(kernel)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_KERNEL_FUNCTION_NAME => out.string(k.name()),
            CL_KERNEL_NUM_ARGS => out.value::<cl_uint>(k.compiled.info.args.len() as cl_uint),
            CL_KERNEL_REFERENCE_COUNT => out.value::<cl_uint>(k.header().api_refs()),
            CL_KERNEL_CONTEXT => out.value(handle_of(&k.program.context)),
            CL_KERNEL_PROGRAM => out.value(handle_of(&k.program)),
            CL_KERNEL_ATTRIBUTES => out.string(&k.attributes),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

cl_entry! {
    fn clGetKernelArgInfo(
        kernel: cl_kernel,
        arg_index: cl_uint,
        param_name: cl_kernel_arg_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let k = get::<Kernel>(kernel)?;
        let arg = k.arg(arg_index)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        if !matches!(
            param_name,
            CL_KERNEL_ARG_ADDRESS_QUALIFIER
                | CL_KERNEL_ARG_ACCESS_QUALIFIER
                | CL_KERNEL_ARG_TYPE_NAME
                | CL_KERNEL_ARG_TYPE_QUALIFIER
                | CL_KERNEL_ARG_NAME
        ) {
            return Err(CL_INVALID_VALUE);
        }
        // What the source declared (OpenCL C built with -cl-kernel-arg-info).
        if let Some(info) = k.arg_info.as_ref().and_then(|a| a.get(arg_index as usize)) {
            return match param_name {
                CL_KERNEL_ARG_ADDRESS_QUALIFIER => out.value(info.address_qualifier),
                CL_KERNEL_ARG_ACCESS_QUALIFIER => out.value(info.access_qualifier),
                CL_KERNEL_ARG_TYPE_NAME => out.string(&info.type_name),
                CL_KERNEL_ARG_TYPE_QUALIFIER => out.value(info.type_qualifier),
                _ => out.string(&info.name),
            };
        }
        // Otherwise only what SPIR-V says exactly: where the argument lives. Type
        // names, qualifiers and names are not available (the specification keeps
        // them to -cl-kernel-arg-info builds; SPIR-V has no signedness or typedefs).
        match param_name {
            CL_KERNEL_ARG_ADDRESS_QUALIFIER => out.value::<cl_kernel_arg_address_qualifier>(match arg.address_qualifier {
                AddressQualifier::Global => CL_KERNEL_ARG_ADDRESS_GLOBAL,
                AddressQualifier::Local => CL_KERNEL_ARG_ADDRESS_LOCAL,
                AddressQualifier::Constant => CL_KERNEL_ARG_ADDRESS_CONSTANT,
                AddressQualifier::Private => CL_KERNEL_ARG_ADDRESS_PRIVATE,
            }),
            CL_KERNEL_ARG_ACCESS_QUALIFIER => out.value::<cl_kernel_arg_access_qualifier>(CL_KERNEL_ARG_ACCESS_NONE),
            _ => Err(CL_KERNEL_ARG_INFO_NOT_AVAILABLE),
        }
    }
}

/// The device argument of kernel queries: one the kernel's program was built for, or
/// NULL when there is exactly one such device (`CL_INVALID_DEVICE` otherwise).
fn check_device(k: &Kernel, device: cl_device_id) -> CLResult<()> {
    match get_opt::<Device>(device)? {
        Some(d) if k.devices().any(|kd| Arc::ptr_eq(kd, &d)) => Ok(()),
        None if k.devices().count() == 1 => Ok(()),
        _ => Err(CL_INVALID_DEVICE),
    }
}

cl_entry! {
    fn clGetKernelWorkGroupInfo(
        kernel: cl_kernel,
        device: cl_device_id,
        param_name: cl_kernel_work_group_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let k = get::<Kernel>(kernel)?;
        check_device(&k, device)?;
        let info = &k.compiled.info;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_KERNEL_WORK_GROUP_SIZE => out.value::<usize>(k.max_work_group_size()),
            CL_KERNEL_COMPILE_WORK_GROUP_SIZE => {
                out.array(&info.reqd_work_group_size.map_or([0usize; 3], |r| r.map(|v| v as usize)))
            }
            CL_KERNEL_LOCAL_MEM_SIZE => out.value::<cl_ulong>(k.local_mem_size() as cl_ulong),
            CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => out.value::<usize>(info.sub_group_width as usize),
            CL_KERNEL_PRIVATE_MEM_SIZE => out.value::<cl_ulong>(info.private_bytes_per_item as cl_ulong),
            CL_KERNEL_SPILL_MEM_SIZE_INTEL => out.value::<cl_ulong>(0),
            CL_KERNEL_GLOBAL_WORK_SIZE => Err(CL_INVALID_VALUE),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn sub_group_info(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_value_size: usize,
    input_value: *const c_void,
    out: InfoOut,
    param_value_size: usize,
) -> CLResult<()> {
    let k = get::<Kernel>(kernel)?;
    check_device(&k, device)?;
    let w = k.compiled.info.sub_group_width as usize;
    let max = k.max_work_group_size();
    let local_sizes = || -> CLResult<[usize; 3]> {
        let n = input_value_size / std::mem::size_of::<usize>();
        if !input_value_size.is_multiple_of(std::mem::size_of::<usize>()) || !(1..=3).contains(&n) {
            return Err(CL_INVALID_VALUE);
        }
        let mut l = [1usize; 3];
        l[..n].copy_from_slice(util::slice(input_value.cast::<usize>(), n)?);
        Ok(l)
    };
    match param_name {
        CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE => {
            // What `get_max_sub_group_size()` returns in the kernel: the width it
            // was compiled for, whatever the local size (as Intel's CPU runtime).
            local_sizes()?;
            out.value::<usize>(w)
        }
        CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE => {
            out.value::<usize>(k.sub_group_count(local_sizes()?))
        }
        CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT => {
            if input_value_size != std::mem::size_of::<usize>() {
                return Err(CL_INVALID_VALUE);
            }
            let count = util::slice(input_value.cast::<usize>(), 1)?[0];
            let dims = param_value_size / std::mem::size_of::<usize>();
            let dims = if param_value_size == 0 { 3 } else { dims };
            if !(1..=3).contains(&dims) {
                return Err(CL_INVALID_VALUE);
            }
            let mut local = vec![0usize; dims];
            // A kernel compiled for a number of sub-groups runs with no other.
            let required = k.compiled.info.required_num_sub_groups;
            let allowed = required.is_none_or(|n| n as usize == count);
            if let Some(x) = count
                .checked_mul(w)
                .filter(|x| *x <= max && count > 0 && allowed)
            {
                local[0] = x;
                for v in &mut local[1..] {
                    *v = 1;
                }
            }
            out.array(&local)
        }
        CL_KERNEL_MAX_NUM_SUB_GROUPS => out.value::<usize>(max.div_ceil(w)),
        CL_KERNEL_COMPILE_NUM_SUB_GROUPS => out.value::<usize>(
            k.compiled
                .info
                .required_num_sub_groups
                .map_or(0, |n| n as usize),
        ),
        CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL => out.value::<usize>(k.required_sub_group_size()),
        _ => Err(CL_INVALID_VALUE),
    }
}

cl_entry! {
    fn clGetKernelSubGroupInfo(
        kernel: cl_kernel,
        device: cl_device_id,
        param_name: cl_kernel_sub_group_info,
        input_value_size: size_t,
        input_value: *const c_void,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        sub_group_info(kernel, device, param_name, input_value_size, input_value, out, param_value_size)
    }
}

cl_entry! {
    fn clGetKernelSubGroupInfoKHR(
        in_kernel: cl_kernel,
        in_device: cl_device_id,
        param_name: cl_kernel_sub_group_info,
        input_value_size: size_t,
        input_value: *const c_void,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        sub_group_info(in_kernel, in_device, param_name, input_value_size, input_value, out, param_value_size)
    }
}
