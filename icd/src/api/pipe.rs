//! Pipe entry points. The device has no pipe support (`CL_DEVICE_PIPE_SUPPORT` is
//! false), so no pipe object can exist: creating one is `CL_INVALID_OPERATION` and
//! every memory object passed to `clGetPipeInfo` is "not a valid pipe object".

use cranecl_runtime::context::Context;
use cranecl_runtime::memory::Mem;

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
        get::<Context>(context)?;
        let _ = (flags, pipe_packet_size, pipe_max_packets, properties);
        // "if no devices in context support pipes".
        Err(CL_INVALID_OPERATION)
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
        // A valid buffer is still not a pipe.
        get::<Mem>(pipe)?;
        let _ = (param_name, param_value_size, param_value, param_value_size_ret);
        Err(CL_INVALID_MEM_OBJECT)
    }
}
