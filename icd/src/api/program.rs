//! Program entry points: creation from source / IL / binary, build, queries.

use cranecl_jit::CompileErrorKind;
use cranecl_runtime::context::Context;
use cranecl_runtime::object::ApiObject;
use cranecl_runtime::program::{self as rt, Program, ProgramSource};

use cranecl_runtime::platform::Device;

use super::prelude::*;

/// Whether a build, compile or link that ended with `result` began (its callback is
/// then due): errors found before it starts (invalid options, a build already in
/// progress, kernels attached) do not call `pfn_notify`.
fn build_began(result: &CLResult<()>) -> bool {
    !matches!(
        result,
        Err(CL_INVALID_OPERATION | CL_INVALID_BUILD_OPTIONS | CL_INVALID_COMPILER_OPTIONS)
    )
}

/// An optional device list (`None` for NULL): `CL_INVALID_VALUE` for a malformed
/// list, `CL_INVALID_DEVICE` for an invalid handle.
fn listed_devices(num: cl_uint, list: *const cl_device_id) -> CLResult<Option<Vec<Arc<Device>>>> {
    if (num == 0) != list.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    if list.is_null() {
        return Ok(None);
    }
    handle::list::<Device>(list, num, CL_INVALID_VALUE).map(Some)
}

/// Checks an optional device list against the context (`CL_INVALID_VALUE` for a
/// malformed list, `CL_INVALID_DEVICE` for a device outside it).
fn check_devices(
    ctx: &Context,
    num: cl_uint,
    list: *const cl_device_id,
) -> CLResult<Option<Vec<Arc<Device>>>> {
    let devices = listed_devices(num, list)?;
    if devices.iter().flatten().any(|d| !ctx.has_device(d)) {
        return Err(CL_INVALID_DEVICE);
    }
    Ok(devices)
}

cl_entry! {
    fn clCreateProgramWithSource(
        context: cl_context,
        count: cl_uint,
        strings: *mut *const c_char,
        lengths: *const size_t;
        errcode_ret
    ) -> cl_program {
        let ctx = get::<Context>(context)?;
        if count == 0 || strings.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let strs = util::slice(strings.cast_const(), count as usize)?;
        let lens = if lengths.is_null() { None } else { Some(util::slice(lengths, count as usize)?) };
        let mut source = Vec::new();
        for (i, s) in strs.iter().enumerate() {
            if s.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            match lens.map_or(0, |l| l[i]) {
                0 => {
                    // SAFETY: without a length the string is NUL-terminated.
                    source.extend_from_slice(unsafe { std::ffi::CStr::from_ptr(*s) }.to_bytes());
                }
                n => source.extend_from_slice(util::slice(s.cast::<u8>(), n)?),
            }
        }
        let text = String::from_utf8_lossy(&source).into_owned();
        Ok(new_handle(Program::new(ctx, ProgramSource::Source(text))))
    }
}

cl_entry! {
    fn clCreateProgramWithIL(context: cl_context, il: *const c_void, length: size_t; errcode_ret) -> cl_program {
        let ctx = get::<Context>(context)?;
        if il.is_null() || length == 0 {
            return Err(CL_INVALID_VALUE);
        }
        let words = rt::il_words(util::slice(il.cast::<u8>(), length)?)?;
        if let Err(e) = cranecl_jit::validate(&words) {
            if e.kind == CompileErrorKind::Malformed {
                return Err(CL_INVALID_VALUE);
            }
        }
        Ok(new_handle(Program::new(ctx, ProgramSource::Il(words))))
    }
}

cl_entry! {
    fn clCreateProgramWithBinary(
        context: cl_context,
        num_devices: cl_uint,
        device_list: *const cl_device_id,
        lengths: *const size_t,
        binaries: *mut *const u8,
        binary_status: *mut cl_int;
        errcode_ret
    ) -> cl_program {
        let ctx = get::<Context>(context)?;
        if num_devices == 0 || device_list.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let devices = check_devices(&ctx, num_devices, device_list)?.unwrap_or_default();
        if lengths.is_null() || binaries.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let lens = util::slice(lengths, num_devices as usize)?;
        let bins = util::slice(binaries.cast_const(), num_devices as usize)?;
        let mut decoded = Vec::with_capacity(devices.len());
        let mut status = vec![CL_SUCCESS; num_devices as usize];
        let mut result = Ok(());
        for i in 0..num_devices as usize {
            if lens[i] == 0 || bins[i].is_null() {
                status[i] = CL_INVALID_VALUE;
                result = result.and(Err(CL_INVALID_VALUE));
                continue;
            }
            match rt::decode_binary(util::slice(bins[i], lens[i])?) {
                Ok(loaded) => decoded.push(loaded),
                Err(code) => {
                    status[i] = code;
                    result = result.and(Err(CL_INVALID_BINARY));
                }
            }
        }
        if !binary_status.is_null() {
            for (i, s) in status.iter().enumerate() {
                // SAFETY: `binary_status` has `num_devices` entries per the API.
                unsafe { binary_status.add(i).write(*s) };
            }
        }
        result?;
        if devices.iter().enumerate().any(|(i, d)| devices[..i].iter().any(|e| Arc::ptr_eq(d, e))) {
            // Each device gets one binary.
            return Err(CL_INVALID_VALUE);
        }
        Ok(new_handle(Program::with_binaries(ctx, devices, decoded)))
    }
}

cl_entry! {
    fn clCreateProgramWithBuiltInKernels(
        context: cl_context,
        num_devices: cl_uint,
        device_list: *const cl_device_id,
        kernel_names: *const c_char;
        errcode_ret
    ) -> cl_program {
        let ctx = get::<Context>(context)?;
        check_devices(&ctx, num_devices, device_list)?;
        // The device has no built-in kernels.
        Err(CL_INVALID_VALUE)
    }
}

cl_entry! {
    fn clRetainProgram(program: cl_program) -> cl_int {
        handle::retain::<Program>(program)
    }
}

cl_entry! {
    fn clReleaseProgram(program: cl_program) -> cl_int {
        handle::release::<Program>(program)
    }
}

cl_entry! {
    fn clBuildProgram(
        program: cl_program,
        num_devices: cl_uint,
        device_list: *const cl_device_id,
        options: *const c_char,
        pfn_notify: Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>,
        user_data: *mut c_void
    ) -> cl_int {
        let p = get::<Program>(program)?;
        let devices = listed_devices(num_devices, device_list)?;
        if pfn_notify.is_none() && !user_data.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let options = if options.is_null() { "" } else { util::c_str(options)? };
        let result = p.build(devices.as_deref(), options);
        if let Some(notify) = pfn_notify.filter(|_| build_began(&result)) {
            // SAFETY: the application's callback for (program, user_data).
            unsafe { notify(program, user_data) };
        }
        result
    }
}

cl_entry! {
    fn clSetProgramSpecializationConstant(
        program: cl_program,
        spec_id: cl_uint,
        spec_size: size_t,
        spec_value: *const c_void
    ) -> cl_int {
        let p = get::<Program>(program)?;
        if spec_value.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // Size first: the value is only read once it is known to be that long.
        if p.spec_constant_size(spec_id)? != spec_size {
            return Err(CL_INVALID_VALUE);
        }
        p.set_spec_constant(spec_id, util::slice(spec_value.cast::<u8>(), spec_size)?)
    }
}

cl_entry! {
    fn clGetProgramInfo(
        program: cl_program,
        param_name: cl_program_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let p = get::<Program>(program)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        let built = || p.kernel_names().ok_or(CL_INVALID_PROGRAM_EXECUTABLE);
        match param_name {
            CL_PROGRAM_REFERENCE_COUNT => out.value::<cl_uint>(p.header().api_refs()),
            CL_PROGRAM_CONTEXT => out.value(handle_of(&p.context)),
            CL_PROGRAM_NUM_DEVICES => out.value::<cl_uint>(p.devices().len() as cl_uint),
            CL_PROGRAM_DEVICES => out.array(&p.devices().iter().map(handle_of).collect::<Vec<_>>()),
            CL_PROGRAM_SOURCE => match &p.source {
                ProgramSource::Source(s) => out.string(s),
                _ => out.string(""),
            },
            CL_PROGRAM_IL => match &p.source {
                ProgramSource::Il(words) => {
                    out.bytes(&words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<_>>())
                }
                _ => out.bytes(&[]),
            },
            CL_PROGRAM_BINARY_SIZES => {
                out.array(&p.binaries().iter().map(Vec::len).collect::<Vec<usize>>())
            }
            CL_PROGRAM_BINARIES => {
                let bins = p.binaries();
                let n = bins.len();
                let size = n * std::mem::size_of::<*mut u8>();
                if !param_value.is_null() {
                    if param_value_size < size {
                        return Err(CL_INVALID_VALUE);
                    }
                    let dsts = util::slice(param_value.cast::<*mut u8>().cast_const(), n)?;
                    for (dst, bin) in dsts.iter().zip(&bins) {
                        if !dst.is_null() {
                            // SAFETY: the application provides a buffer of
                            // CL_PROGRAM_BINARY_SIZES bytes behind each non-null pointer.
                            unsafe { std::ptr::copy_nonoverlapping(bin.as_ptr(), *dst, bin.len()) };
                        }
                    }
                }
                write_out(param_value_size_ret, size);
                Ok(())
            }
            CL_PROGRAM_NUM_KERNELS => out.value::<usize>(built()?.len()),
            CL_PROGRAM_KERNEL_NAMES => out.string(&built()?.join(";")),
            CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT | CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT => out.bool(false),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

cl_entry! {
    fn clGetProgramBuildInfo(
        program: cl_program,
        device: cl_device_id,
        param_name: cl_program_build_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let p = get::<Program>(program)?;
        let d = get::<Device>(device)?;
        let st = p.device_state(&d).ok_or(CL_INVALID_DEVICE)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_PROGRAM_BUILD_STATUS => out.value::<cl_build_status>(st.status),
            CL_PROGRAM_BUILD_OPTIONS => out.string(&st.options),
            CL_PROGRAM_BUILD_LOG => out.string(&st.log),
            CL_PROGRAM_BINARY_TYPE => out.value::<cl_program_binary_type>(st.binary_type),
            CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE => out.value::<usize>(
                st.compiled
                    .as_ref()
                    .map_or(0, |c| c.global_variable_bytes),
            ),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

cl_entry! {
    fn clCompileProgram(
        program: cl_program,
        num_devices: cl_uint,
        device_list: *const cl_device_id,
        options: *const c_char,
        num_input_headers: cl_uint,
        input_headers: *const cl_program,
        header_include_names: *mut *const c_char,
        pfn_notify: Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>,
        user_data: *mut c_void
    ) -> cl_int {
        let p = get::<Program>(program)?;
        let devices = listed_devices(num_devices, device_list)?;
        p.check_devices(devices.as_deref())?;
        if pfn_notify.is_none() && !user_data.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        if (num_input_headers == 0) != input_headers.is_null()
            || (num_input_headers == 0) != header_include_names.is_null()
        {
            return Err(CL_INVALID_VALUE);
        }
        let programs = handle::list::<Program>(input_headers, num_input_headers, CL_INVALID_VALUE)?;
        let names = util::slice(header_include_names.cast_const(), num_input_headers as usize)?;
        let mut headers = Vec::with_capacity(programs.len());
        for (h, name) in programs.iter().zip(names) {
            let ProgramSource::Source(text) = &h.source else {
                return Err(CL_INVALID_OPERATION);
            };
            headers.push((util::c_str(*name)?.to_string(), text.clone()));
        }
        let options = if options.is_null() { "" } else { util::c_str(options)? };
        let result = p.compile(devices.as_deref(), options, &headers);
        if let Some(notify) = pfn_notify.filter(|_| build_began(&result)) {
            // SAFETY: the application's callback for (program, user_data).
            unsafe { notify(program, user_data) };
        }
        result
    }
}

#[allow(clippy::too_many_arguments)] // the C signature of clLinkProgram
fn link_program(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    pfn_notify: Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>,
    user_data: *mut c_void,
) -> CLResult<(cl_program, CLResult<()>)> {
    let ctx = get::<Context>(context)?;
    let devices = check_devices(&ctx, num_devices, device_list)?;
    if pfn_notify.is_none() && !user_data.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    if num_input_programs == 0 || input_programs.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let inputs = handle::list::<Program>(input_programs, num_input_programs, CL_INVALID_VALUE)?;
    if inputs.iter().any(|p| !Arc::ptr_eq(&p.context, &ctx)) {
        return Err(CL_INVALID_CONTEXT);
    }
    let options = if options.is_null() {
        ""
    } else {
        util::c_str(options)?
    };
    let (program, status) = Program::link(ctx, devices, &inputs, options)?;
    let handle = new_handle(program);
    if let Some(notify) = pfn_notify {
        // SAFETY: the application's callback for (program, user_data).
        unsafe { notify(handle, user_data) };
    }
    Ok((handle, status))
}

cl_entry! {
    fn clLinkProgram(
        context: cl_context,
        num_devices: cl_uint,
        device_list: *const cl_device_id,
        options: *const c_char,
        num_input_programs: cl_uint,
        input_programs: *const cl_program,
        pfn_notify: Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>,
        user_data: *mut c_void,
        errcode_ret: *mut cl_int
    ) -> cl_program {
        // The program is returned even when linking fails, so that its log can be read.
        let (program, code) = match link_program(
            context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify, user_data,
        ) {
            Ok((p, Ok(()))) => (p, CL_SUCCESS),
            Ok((p, Err(code))) => (p, code),
            Err(code) => (std::ptr::null_mut(), code),
        };
        write_out(errcode_ret, code);
        program
    }
}
