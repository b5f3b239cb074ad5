//! Pipe entry points: `clCreatePipe` (a `Mem` with a pipe descriptor, storage
//! formatted by `cranecl_jit::pipe`) and `clGetPipeInfo`.

use cranecl_runtime::context::Context;
use cranecl_runtime::features;
use cranecl_runtime::memory::{Mem, PipeDesc, PIPE_MAX_PACKET_SIZE};

use super::prelude::*;

cl_entry! {
    fn clCreatePipe(
        context: cl_context,
        flags: cl_mem_flags,
        pipe_packet_size: cl_uint,
        pipe_max_packets: cl_uint,
        properties: *const cl_pipe_properties;
        errcode_ret
    ) -> cl_mem {
        let ctx = get::<Context>(context)?;
        // Only these two flags may be given; 0 means both.
        if flags & !(CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS) != 0 {
            return Err(CL_INVALID_VALUE);
        }
        let flags = if flags == 0 { CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS } else { flags };
        // "Currently, in all OpenCL versions, properties must be NULL" (even an empty
        // list is refused, as Intel's CPU runtime does).
        if !properties.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let props = Vec::new();
        if !features::pipe_support() {
            // "if no devices in context support pipes".
            return Err(CL_INVALID_OPERATION);
        }
        if pipe_packet_size == 0 || pipe_packet_size > PIPE_MAX_PACKET_SIZE || pipe_max_packets == 0 {
            return Err(CL_INVALID_PIPE_SIZE);
        }
        let max = ctx.devices.iter().map(|d| d.max_mem_alloc_size).min().unwrap_or(0);
        if u64::from(pipe_packet_size) * u64::from(pipe_max_packets) > max {
            return Err(CL_INVALID_PIPE_SIZE);
        }
        let desc = PipeDesc {
            packet_size: pipe_packet_size,
            max_packets: pipe_max_packets,
            properties: props,
        };
        Ok(new_handle(Mem::new_pipe(ctx, flags, desc)?))
    }
}

cl_entry! {
    fn clGetPipeInfo(
        pipe: cl_mem,
        param_name: cl_pipe_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let mem = get::<Mem>(pipe)?;
        // A valid buffer is still not a pipe.
        let desc = mem.pipe.as_ref().ok_or(CL_INVALID_MEM_OBJECT)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_PIPE_PACKET_SIZE => out.value::<cl_uint>(desc.packet_size),
            CL_PIPE_MAX_PACKETS => out.value::<cl_uint>(desc.max_packets),
            CL_PIPE_PROPERTIES => out.array(&desc.properties),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}
