//! Shared virtual memory entry points: clSVMAlloc/clSVMFree, SVM kernel arguments and
//! the SVM enqueue commands. The device is the host CPU, so every level is met:
//! coarse- and fine-grained buffers, fine-grained system memory (any host pointer,
//! e.g. from malloc, is a valid kernel argument and SVM command operand) and SVM
//! atomics (locked instructions on the same coherent memory).

use cranecl_jit::ArgKind;
use cranecl_runtime::context::Context;
use cranecl_runtime::kernel::{ArgValue, Kernel};
use cranecl_runtime::queue::{Command, HostPtr, Queue};
use cranecl_runtime::svm;

use super::prelude::*;

cl_entry! {
    fn clSVMAlloc(context: cl_context, flags: cl_svm_mem_flags, size: size_t, alignment: cl_uint) -> *mut c_void {
        let Ok(ctx) = get::<Context>(context) else {
            return std::ptr::null_mut();
        };
        if !svm::validate_flags(flags) {
            return std::ptr::null_mut();
        }
        let max = ctx.devices.iter().map(|d| d.max_mem_alloc_size).min().unwrap_or(0);
        ctx.svm.alloc(size, alignment as usize, max, svm::AllocKind::Svm).map_or(std::ptr::null_mut(), |p| p.cast())
    }
}

cl_entry! {
    fn clSVMFree(context: cl_context, svm_pointer: *mut c_void) {
        if let Ok(ctx) = get::<Context>(context) {
            if !svm_pointer.is_null() {
                ctx.svm.free(svm_pointer as usize);
            }
        }
    }
}

cl_entry! {
    fn clSetKernelArgSVMPointer(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> cl_int {
        set_pointer_arg(kernel, arg_index, arg_value)
    }
}

/// Sets a `__global`/`__constant` pointer argument to a raw device address (an SVM
/// or USM pointer): what `clSetKernelArgSVMPointer` and
/// `clSetKernelArgMemPointerINTEL` share.
pub(super) fn set_pointer_arg(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_value: *const c_void,
) -> CLResult<()> {
    let k = get::<Kernel>(kernel)?;
    let arg = k.arg(arg_index)?;
    if !matches!(arg.kind, ArgKind::GlobalPtr | ArgKind::ConstantPtr) {
        return Err(CL_INVALID_ARG_VALUE);
    }
    k.set_arg(
        arg_index,
        std::mem::size_of::<*const c_void>(),
        ArgValue::Svm(arg_value as usize),
    )
}

cl_entry! {
    fn clSetKernelExecInfo(
        kernel: cl_kernel,
        param_name: cl_kernel_exec_info,
        param_value_size: size_t,
        param_value: *const c_void
    ) -> cl_int {
        get::<Kernel>(kernel)?;
        match param_name {
            // Every SVM pointer is host memory the kernel may reach: nothing to record.
            CL_KERNEL_EXEC_INFO_SVM_PTRS => {
                if !param_value_size.is_multiple_of(std::mem::size_of::<*const c_void>())
                    || (param_value_size > 0 && param_value.is_null())
                {
                    return Err(CL_INVALID_VALUE);
                }
                Ok(())
            }
            // cl_intel_unified_shared_memory: every allocation is host memory the kernel
            // may reach, so indirect access needs no bookkeeping either.
            CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL => {
                if !param_value_size.is_multiple_of(std::mem::size_of::<*const c_void>())
                    || (param_value_size > 0 && param_value.is_null())
                {
                    return Err(CL_INVALID_VALUE);
                }
                Ok(())
            }
            CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL
            | CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL
            | CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL => {
                if param_value_size != std::mem::size_of::<cl_bool>() || param_value.is_null() {
                    return Err(CL_INVALID_VALUE);
                }
                Ok(())
            }
            CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM => {
                if param_value_size != std::mem::size_of::<cl_bool>() || param_value.is_null() {
                    return Err(CL_INVALID_VALUE);
                }
                // Fine-grained system SVM: every host address is device memory, so
                // either value needs no bookkeeping.
                util::slice(param_value.cast::<cl_bool>(), 1)?;
                Ok(())
            }
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

/// The queue and wait list of an SVM command.
fn queue_and_wait(
    command_queue: cl_command_queue,
    num_events: cl_uint,
    events: *const cl_event,
) -> CLResult<(Arc<Queue>, Vec<Arc<cranecl_runtime::event::Event>>)> {
    let q = get::<Queue>(command_queue)?;
    let wait = handle::wait_list(events, num_events, &q.context)?;
    Ok((q, wait))
}

fn submit(
    q: &Arc<Queue>,
    wait: &[Arc<cranecl_runtime::event::Event>],
    command_type: cl_command_type,
    command: Command,
    blocking: bool,
    event: *mut cl_event,
) -> CLResult<()> {
    let e = q.enqueue(command_type, command, wait, blocking)?;
    handle::return_event(e, event);
    Ok(())
}

cl_entry! {
    fn clEnqueueSVMMemcpy(
        command_queue: cl_command_queue,
        blocking_copy: cl_bool,
        dst_ptr: *mut c_void,
        src_ptr: *const c_void,
        size: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let (q, wait) = queue_and_wait(command_queue, num_events_in_wait_list, event_wait_list)?;
        util::host_range(dst_ptr, size)?;
        util::host_range(src_ptr, size)?;
        let (d, s) = (dst_ptr as usize, src_ptr as usize);
        if d < s + size && s < d + size {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        let command = Command::HostCopy { dst: HostPtr(dst_ptr.cast()), src: HostPtr(src_ptr.cast_mut().cast()), size };
        submit(&q, &wait, CL_COMMAND_SVM_MEMCPY, command, blocking_copy != CL_FALSE, event)
    }
}

cl_entry! {
    fn clEnqueueSVMMemFill(
        command_queue: cl_command_queue,
        svm_ptr: *mut c_void,
        pattern: *const c_void,
        pattern_size: size_t,
        size: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let (q, wait) = queue_and_wait(command_queue, num_events_in_wait_list, event_wait_list)?;
        util::host_range(svm_ptr, size)?;
        if pattern.is_null() || !pattern_size.is_power_of_two() || pattern_size > 128 {
            return Err(CL_INVALID_VALUE);
        }
        if !(svm_ptr as usize).is_multiple_of(pattern_size) || !size.is_multiple_of(pattern_size) {
            return Err(CL_INVALID_VALUE);
        }
        let pattern = util::slice(pattern.cast::<u8>(), pattern_size)?.to_vec();
        let command = Command::HostFill { dst: HostPtr(svm_ptr.cast()), pattern, size };
        submit(&q, &wait, CL_COMMAND_SVM_MEMFILL, command, false, event)
    }
}

cl_entry! {
    fn clEnqueueSVMMap(
        command_queue: cl_command_queue,
        blocking_map: cl_bool,
        flags: cl_map_flags,
        svm_ptr: *mut c_void,
        size: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let (q, wait) = queue_and_wait(command_queue, num_events_in_wait_list, event_wait_list)?;
        if size == 0 {
            return Err(CL_INVALID_VALUE);
        }
        util::host_range(svm_ptr, size)?;
        let known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
        if flags & !known != 0 {
            return Err(CL_INVALID_VALUE);
        }
        submit(&q, &wait, CL_COMMAND_SVM_MAP, Command::Nothing { keep: None }, blocking_map != CL_FALSE, event)
    }
}

cl_entry! {
    fn clEnqueueSVMUnmap(
        command_queue: cl_command_queue,
        svm_ptr: *mut c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let (q, wait) = queue_and_wait(command_queue, num_events_in_wait_list, event_wait_list)?;
        if svm_ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        submit(&q, &wait, CL_COMMAND_SVM_UNMAP, Command::Nothing { keep: None }, false, event)
    }
}

cl_entry! {
    fn clEnqueueSVMMigrateMem(
        command_queue: cl_command_queue,
        num_svm_pointers: cl_uint,
        svm_pointers: *mut *const c_void,
        sizes: *const size_t,
        flags: cl_mem_migration_flags,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let (q, wait) = queue_and_wait(command_queue, num_events_in_wait_list, event_wait_list)?;
        if num_svm_pointers == 0 || svm_pointers.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        if flags & !(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0 {
            return Err(CL_INVALID_VALUE);
        }
        if util::slice(svm_pointers.cast_const(), num_svm_pointers as usize)?.iter().any(|p| p.is_null()) {
            return Err(CL_INVALID_VALUE);
        }
        let _ = sizes;
        submit(&q, &wait, CL_COMMAND_SVM_MIGRATE_MEM, Command::Nothing { keep: None }, false, event)
    }
}

cl_entry! {
    fn clEnqueueSVMFree(
        command_queue: cl_command_queue,
        num_svm_pointers: cl_uint,
        svm_pointers: *mut *mut c_void,
        pfn_free_func: Option<unsafe extern "C" fn(queue: cl_command_queue, num_svm_pointers: cl_uint, svm_pointers: *mut *mut c_void, user_data: *mut c_void)>,
        user_data: *mut c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let (q, wait) = queue_and_wait(command_queue, num_events_in_wait_list, event_wait_list)?;
        if (num_svm_pointers == 0) != svm_pointers.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let ptrs: Vec<usize> =
            util::slice(svm_pointers.cast_const(), num_svm_pointers as usize)?.iter().map(|p| *p as usize).collect();
        let queue_handle = handle_of(&q) as usize;
        let ctx = q.context.clone();
        let user = user_data as usize;
        let command = Command::Host(Box::new(move || {
            match pfn_free_func {
                Some(free) => {
                    let mut list: Vec<*mut c_void> = ptrs.iter().map(|p| *p as *mut c_void).collect();
                    // SAFETY: the application's callback for (queue, count, pointers,
                    // user_data); the list lives across the call.
                    unsafe { free(queue_handle as cl_command_queue, list.len() as cl_uint, list.as_mut_ptr(), user as *mut c_void) };
                }
                None => {
                    for p in &ptrs {
                        ctx.svm.free(*p);
                    }
                }
            }
            Ok(())
        }));
        submit(&q, &wait, CL_COMMAND_SVM_FREE, command, false, event)
    }
}
