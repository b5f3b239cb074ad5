//! Separate compilation as applications use it: clCompileProgram with embedded
//! headers and `-I` directories, clLinkProgram of compiled objects and libraries
//! (from OpenCL C and from SPIR-V), link and compile options with their error codes,
//! program binaries of every type through clCreateProgramWithBinary,
//! clUnloadPlatformCompiler, build callbacks, and C99 `inline` functions across
//! programs. Results are checked by running the linked kernels.

use std::ffi::{c_char, c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

extern "C" {
    // Declared by cl-sys only as a comment; the ICD loader exports it.
    fn clUnloadPlatformCompiler(platform: cl_platform_id) -> cl_int;
}

type Notify = Option<extern "C" fn(cl_program, *mut c_void)>;

/// clCompileProgram with `headers` as `(include name, header program)`.
fn try_compile(
    ctx: &DeviceContext,
    program: &Program,
    options: &str,
    headers: &[(&str, &Program)],
    notify: Notify,
    user_data: *mut c_void,
) -> cl_int {
    let opts = CString::new(options).unwrap();
    let names: Vec<CString> = headers
        .iter()
        .map(|(n, _)| CString::new(*n).unwrap())
        .collect();
    let name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let programs: Vec<cl_program> = headers.iter().map(|(_, p)| p.raw()).collect();
    let (n, progs, names) = if headers.is_empty() {
        (0, ptr::null(), ptr::null())
    } else {
        (
            headers.len() as cl_uint,
            programs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    };
    // SAFETY: valid handles; the arrays live until the call returns.
    unsafe {
        clCompileProgram(
            program.raw(),
            1,
            &ctx.device,
            opts.as_ptr(),
            n,
            progs,
            names,
            notify,
            user_data,
        )
    }
}

/// A program from `source`, compiled (panics with the log on failure).
fn compiled(ctx: &DeviceContext, source: &str, options: &str) -> Program {
    let p = ctx.try_program_from_source(source).unwrap();
    let code = try_compile(ctx, &p, options, &[], None, ptr::null_mut());
    assert_eq!(
        code,
        CL_SUCCESS,
        "clCompileProgram: {}\n{source}",
        ctx.build_log(&p)
    );
    p
}

/// clLinkProgram: the program (also returned when linking fails) and the code.
fn try_link(
    ctx: &DeviceContext,
    inputs: &[&Program],
    options: &str,
    notify: Notify,
    user_data: *mut c_void,
) -> (Option<Program>, cl_int) {
    let opts = CString::new(options).unwrap();
    let raw: Vec<cl_program> = inputs.iter().map(|p| p.raw()).collect();
    let mut err = 0;
    // SAFETY: valid handles; `raw` lives until the call returns.
    let program = unsafe {
        clLinkProgram(
            ctx.context.raw(),
            1,
            &ctx.device,
            opts.as_ptr(),
            raw.len() as cl_uint,
            raw.as_ptr(),
            notify,
            user_data,
            &mut err,
        )
    };
    // SAFETY: a non-null program is a new reference for us.
    let program = (!program.is_null()).then(|| unsafe { Program::from_raw(program) });
    (program, err)
}

fn linked(ctx: &DeviceContext, inputs: &[&Program], options: &str) -> Program {
    let (p, code) = try_link(ctx, inputs, options, None, ptr::null_mut());
    let log = p.as_ref().map(|p| ctx.build_log(p)).unwrap_or_default();
    assert_eq!(code, CL_SUCCESS, "clLinkProgram({options:?}): {log}");
    p.expect("a linked program")
}

fn build_info<T: Pod>(ctx: &DeviceContext, program: &Program, param: cl_uint) -> T {
    query_value("clGetProgramBuildInfo", |n, p, r| {
        // SAFETY: pointers from query_value.
        unsafe { clGetProgramBuildInfo(program.raw(), ctx.device, param, n, p, r) }
    })
    .unwrap()
}

/// `CL_PROGRAM_BINARY_TYPE` (a `cl_uint`; cl-sys types the constants as bitfields).
fn binary_type(ctx: &DeviceContext, program: &Program) -> cl_bitfield {
    build_info::<cl_uint>(ctx, program, CL_PROGRAM_BINARY_TYPE).into()
}

/// Runs `k(global int* out)` over `n` items and returns `out`.
fn run_k(ctx: &DeviceContext, program: &Program, n: usize) -> Vec<i32> {
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i32>(n);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[n], None);
    ctx.read(&out, n)
}

const N: usize = 64;

fn expect(f: impl Fn(i32) -> i32) -> Vec<i32> {
    (0..N as i32).map(f).collect()
}

#[test]
fn embedded_and_include_headers() {
    let ctx = DeviceContext::new();
    let defs = ctx.try_program_from_source("#define SCALE 3\n").unwrap();
    let more = ctx
        .try_program_from_source("#include \"defs.h\"\n#define OFFSET (SCALE + 4)\n")
        .unwrap();
    let dir = spirv::temp_path("inc", "d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("from_dir.h"), "#define FROM_DIR 100\n").unwrap();
    let src = "#include \"defs.h\"\n#include \"sub/more.h\"\n#include \"from_dir.h\"\n\
               kernel void k(global int* o) { int i = get_global_id(0); o[i] = i * SCALE + OFFSET + FROM_DIR; }";
    let p = ctx.try_program_from_source(src).unwrap();
    let code = try_compile(
        &ctx,
        &p,
        &format!("-I {}", dir.display()),
        &[("defs.h", &defs), ("sub/more.h", &more)],
        None,
        ptr::null_mut(),
    );
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, CL_SUCCESS, "{}", ctx.build_log(&p));
    assert_eq!(
        binary_type(&ctx, &p),
        CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    );
    let exe = linked(&ctx, &[&p], "");
    assert_eq!(run_k(&ctx, &exe, N), expect(|i| i * 3 + 7 + 100));

    // A header missing from the list: the compile fails naming it.
    let p = ctx.try_program_from_source(src).unwrap();
    let code = try_compile(&ctx, &p, "", &[("defs.h", &defs)], None, ptr::null_mut());
    assert_eq!(code, CL_COMPILE_PROGRAM_FAILURE);
    assert!(
        ctx.build_log(&p).contains("sub/more.h"),
        "{}",
        ctx.build_log(&p)
    );
    assert_eq!(
        build_info::<cl_int>(&ctx, &p, CL_PROGRAM_BUILD_STATUS),
        CL_BUILD_ERROR
    );

    // Headers and names must come together.
    let names = [c"defs.h".as_ptr()];
    // SAFETY: a header count with null arrays is the error case under test.
    let code = unsafe {
        clCompileProgram(
            p.raw(),
            1,
            &ctx.device,
            ptr::null(),
            1,
            ptr::null(),
            names.as_ptr(),
            None,
            ptr::null_mut(),
        )
    };
    assert_eq!(code, CL_INVALID_VALUE);
    // SAFETY: as above, names missing.
    let raw = defs.raw();
    let code = unsafe {
        clCompileProgram(
            p.raw(),
            1,
            &ctx.device,
            ptr::null(),
            1,
            &raw,
            ptr::null(),
            None,
            ptr::null_mut(),
        )
    };
    assert_eq!(code, CL_INVALID_VALUE);
    let code = try_compile(&ctx, &p, "-cl-bogus-option", &[], None, ptr::null_mut());
    assert_eq!(code, CL_INVALID_COMPILER_OPTIONS);
}

const HELPER: &str = "int helper(int x) { return x * 5 + 1; }";
const TWICE: &str = "int helper(int x);\nint twice(int x) { return 2 * helper(x); }";
const USES_TWICE: &str =
    "int twice(int x);\nkernel void k(global int* o) { int i = get_global_id(0); o[i] = twice(i) - 3; }";

#[test]
fn objects_and_libraries_link_into_an_executable() {
    let ctx = DeviceContext::new();
    let helper = compiled(&ctx, HELPER, "");
    let twice = compiled(&ctx, TWICE, "");
    let user = compiled(&ctx, USES_TWICE, "");
    let want = expect(|i| 2 * (i * 5 + 1) - 3);

    // Objects directly.
    let exe = linked(&ctx, &[&user, &twice, &helper], "");
    assert_eq!(binary_type(&ctx, &exe), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    assert_eq!(
        build_info::<cl_int>(&ctx, &exe, CL_PROGRAM_BUILD_STATUS),
        CL_BUILD_SUCCESS
    );
    assert_eq!(run_k(&ctx, &exe, N), want);

    // A library, a library of a library and an object, then the executable.
    let lib = linked(&ctx, &[&helper], "-create-library");
    assert_eq!(binary_type(&ctx, &lib), CL_PROGRAM_BINARY_TYPE_LIBRARY);
    // SAFETY: no kernels in a library: clCreateKernel must fail.
    let mut err = 0;
    let k = unsafe { clCreateKernel(lib.raw(), c"k".as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE);
    let lib2 = linked(
        &ctx,
        &[&twice, &lib],
        "-create-library -enable-link-options -cl-fast-relaxed-math",
    );
    assert_eq!(binary_type(&ctx, &lib2), CL_PROGRAM_BINARY_TYPE_LIBRARY);
    let exe = linked(&ctx, &[&lib2, &user], "-cl-denorms-are-zero");
    assert_eq!(run_k(&ctx, &exe, N), want);
    let options = bytes_to_string(
        "CL_PROGRAM_BUILD_OPTIONS",
        &query_bytes("CL_PROGRAM_BUILD_OPTIONS", |n, p, r| {
            // SAFETY: pointers from query_bytes.
            unsafe {
                clGetProgramBuildInfo(exe.raw(), ctx.device, CL_PROGRAM_BUILD_OPTIONS, n, p, r)
            }
        })
        .unwrap(),
    );
    assert_eq!(options, "-cl-denorms-are-zero");
}

#[test]
fn link_errors() {
    let ctx = DeviceContext::new();
    let user = compiled(&ctx, USES_TWICE, "");
    // An undefined function: the program comes back with a log naming it.
    let (p, code) = try_link(&ctx, &[&user], "", None, ptr::null_mut());
    assert_eq!(code, CL_LINK_PROGRAM_FAILURE);
    let p = p.expect("the failed program is returned for its log");
    assert!(ctx.build_log(&p).contains("twice"), "{}", ctx.build_log(&p));
    assert_eq!(
        build_info::<cl_int>(&ctx, &p, CL_PROGRAM_BUILD_STATUS),
        CL_BUILD_ERROR
    );
    // ... but a library may leave it undefined.
    linked(&ctx, &[&user], "-create-library");

    // Two different definitions of one function, and one kernel defined twice.
    let a = compiled(&ctx, HELPER, "");
    let b = compiled(&ctx, "int helper(int x) { return x - 1; }", "");
    let (p, code) = try_link(&ctx, &[&a, &b], "-create-library", None, ptr::null_mut());
    assert_eq!(code, CL_LINK_PROGRAM_FAILURE);
    assert!(ctx.build_log(&p.unwrap()).contains("helper"));
    let k = compiled(&ctx, "kernel void k(global int* o) { o[0] = 1; }", "");
    let (p, code) = try_link(&ctx, &[&k, &k], "", None, ptr::null_mut());
    assert_eq!(code, CL_LINK_PROGRAM_FAILURE);
    assert!(ctx.build_log(&p.unwrap()).contains("kernel k"));

    // Inputs must be compiled objects or libraries.
    let source_only = ctx.try_program_from_source(HELPER).unwrap();
    assert_eq!(
        try_link(&ctx, &[&source_only], "", None, ptr::null_mut()).1,
        CL_INVALID_OPERATION
    );
    let exe = ctx.build("kernel void k(global int* o) { o[0] = 1; }", "");
    assert_eq!(
        try_link(&ctx, &[&exe], "", None, ptr::null_mut()).1,
        CL_INVALID_OPERATION
    );
    assert_eq!(
        try_link(&ctx, &[], "", None, ptr::null_mut()).1,
        CL_INVALID_VALUE
    );
    let mut err = 0;
    // A live object of another type where a program belongs.
    let not_a_program: cl_program = ctx.context.raw().cast();
    // SAFETY: a wrong-typed handle in the input list is the error case under test.
    let p = unsafe {
        clLinkProgram(
            ctx.context.raw(),
            1,
            &ctx.device,
            ptr::null(),
            1,
            &not_a_program,
            None,
            ptr::null_mut(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_PROGRAM);
}

#[test]
fn link_options_and_their_error_codes() {
    let ctx = DeviceContext::new();
    let helper = compiled(&ctx, HELPER, "");
    let user = compiled(&ctx, "int helper(int x);\nkernel void k(global int* o) { int i = get_global_id(0); o[i] = helper(i); }", "");
    for ok in [
        "",
        "-create-library",
        "-create-library -enable-link-options",
        "-create-library -enable-link-options -cl-denorms-are-zero -cl-no-signed-zeros -cl-unsafe-math-optimizations -cl-finite-math-only -cl-fast-relaxed-math",
    ] {
        linked(&ctx, &[&helper], ok);
    }
    let exe = linked(
        &ctx,
        &[&helper, &user],
        "-cl-denorms-are-zero -cl-no-signed-zeros -cl-unsafe-math-optimizations -cl-finite-math-only -cl-fast-relaxed-math",
    );
    assert_eq!(run_k(&ctx, &exe, N), expect(|i| i * 5 + 1));
    for bad in [
        "-enable-link-options",
        "-create-library -cl-fast-relaxed-math",
        "-cl-mad-enable",
        "-DX=1",
        "-bogus",
    ] {
        let (p, code) = try_link(&ctx, &[&helper], bad, None, ptr::null_mut());
        assert_eq!(code, CL_INVALID_LINKER_OPTIONS, "{bad}");
        assert!(p.is_none(), "{bad}: no program for invalid options");
    }
}

/// CL_PROGRAM_BINARIES of a one-device program.
fn binary_of(program: &Program) -> Vec<u8> {
    let sizes = from_bytes::<usize>(&program.info_bytes(CL_PROGRAM_BINARY_SIZES).unwrap());
    assert_eq!(sizes.len(), 1);
    let mut bin = vec![0u8; sizes[0]];
    let mut ptrs = [bin.as_mut_ptr()];
    // SAFETY: one pointer to a buffer of the reported size.
    let code = unsafe {
        clGetProgramInfo(
            program.raw(),
            CL_PROGRAM_BINARIES,
            std::mem::size_of_val(&ptrs),
            ptrs.as_mut_ptr().cast(),
            ptr::null_mut(),
        )
    };
    assert_eq!(code, CL_SUCCESS);
    bin
}

/// clCreateProgramWithBinary: the program (if any), the code and the binary status.
fn from_binary(ctx: &DeviceContext, bin: &[u8]) -> (Option<Program>, cl_int, cl_int) {
    let len = bin.len();
    let ptrs = [bin.as_ptr()];
    let mut status = 12345;
    let mut err = 0;
    // SAFETY: one device, one binary of `len` bytes.
    let p = unsafe {
        clCreateProgramWithBinary(
            ctx.context.raw(),
            1,
            &ctx.device,
            &len,
            ptrs.as_ptr(),
            &mut status,
            &mut err,
        )
    };
    // SAFETY: a non-null program is ours.
    (
        (!p.is_null()).then(|| unsafe { Program::from_raw(p) }),
        err,
        status,
    )
}

#[test]
fn binaries_of_every_type_round_trip() {
    let ctx = DeviceContext::new();
    let helper = compiled(&ctx, HELPER, "");
    let twice = compiled(&ctx, TWICE, "");
    let user = compiled(&ctx, USES_TWICE, "");
    let lib = linked(&ctx, &[&twice, &helper], "-create-library");
    let want = expect(|i| 2 * (i * 5 + 1) - 3);

    let reload = |p: &Program, ty: cl_bitfield| -> Program {
        let bin = binary_of(p);
        assert!(!bin.is_empty());
        let (q, err, status) = from_binary(&ctx, &bin);
        assert_eq!((err, status), (CL_SUCCESS, CL_SUCCESS));
        let q = q.unwrap();
        assert_eq!(binary_type(&ctx, &q), ty);
        assert_eq!(binary_of(&q), bin, "the binary survives a reload unchanged");
        q
    };
    // A compiled object and a library, reloaded, still link.
    let user2 = reload(&user, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    let lib2 = reload(&lib, CL_PROGRAM_BINARY_TYPE_LIBRARY);
    let exe = linked(&ctx, &[&user2, &lib2], "");
    assert_eq!(run_k(&ctx, &exe, N), want);
    // An executable, reloaded and built, runs; as does one built from source.
    let exe2 = reload(&exe, CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    let exe2 = ctx
        .try_build_program(exe2, "")
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(run_k(&ctx, &exe2, N), want);
    let built = ctx.build(
        "kernel void k(global int* o) { o[get_global_id(0)] = 7; }",
        "-cl-mad-enable",
    );
    let built2 = reload(&built, CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    let built2 = ctx
        .try_build_program(built2, "")
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(run_k(&ctx, &built2, 4), vec![7; 4]);

    // Garbage and truncated binaries.
    let (p, err, status) = from_binary(&ctx, b"definitely not a program binary");
    assert!(p.is_none());
    assert_eq!((err, status), (CL_INVALID_BINARY, CL_INVALID_BINARY));
    let bin = binary_of(&exe);
    let (p, err, status) = from_binary(&ctx, &bin[..bin.len() - 3]);
    assert!(p.is_none());
    assert_eq!((err, status), (CL_INVALID_BINARY, CL_INVALID_BINARY));
    let (p, err, status) = from_binary(&ctx, &[]);
    assert!(p.is_none());
    assert_eq!((err, status), (CL_INVALID_VALUE, CL_INVALID_VALUE));
    // A program not compiled yet has no binary.
    let fresh = ctx.try_program_from_source(HELPER).unwrap();
    assert_eq!(binary_of(&fresh), Vec::<u8>::new());
}

#[test]
fn spirv_programs_compile_and_link() {
    let ctx = DeviceContext::new();
    let def = spirv::compile("float scale(float x) { return x * 4.0f; }", &[]).unwrap();
    let user = spirv::compile(
        "float scale(float x);\nkernel void k(global int* o) { int i = get_global_id(0); o[i] = (int)scale((float)i); }",
        &[],
    )
    .unwrap();
    let def = ctx.try_program_from_il(&def).unwrap();
    let user = ctx.try_program_from_il(&user).unwrap();
    for p in [&def, &user] {
        assert_eq!(
            try_compile(&ctx, p, "", &[], None, ptr::null_mut()),
            CL_SUCCESS
        );
        assert_eq!(binary_type(&ctx, p), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    }
    // Mixed with a program compiled from OpenCL C.
    let c = compiled(
        &ctx,
        "float scale(float x);\nkernel void k2(global int* o) { o[0] = (int)scale(2.5f); }",
        "",
    );
    let exe = linked(&ctx, &[&user, &def, &c], "");
    assert_eq!(run_k(&ctx, &exe, N), expect(|i| i * 4));
}

#[test]
fn unload_platform_compiler_then_build_again() {
    let ctx = DeviceContext::new();
    let src = "kernel void k(global int* o) { o[get_global_id(0)] = 11; }";
    assert_eq!(run_k(&ctx, &ctx.build(src, ""), 2), vec![11; 2]);
    // SAFETY: a valid platform.
    assert_eq!(
        unsafe { clUnloadPlatformCompiler(ctx.platform) },
        CL_SUCCESS
    );
    assert_eq!(run_k(&ctx, &ctx.build(src, ""), 2), vec![11; 2]);
    let helper = compiled(&ctx, HELPER, "");
    // SAFETY: as above.
    assert_eq!(
        unsafe { clUnloadPlatformCompiler(ctx.platform) },
        CL_SUCCESS
    );
    let user = compiled(&ctx, "int helper(int x);\nkernel void k(global int* o) { int i = get_global_id(0); o[i] = helper(i); }", "");
    assert_eq!(
        run_k(&ctx, &linked(&ctx, &[&helper, &user], ""), N),
        expect(|i| i * 5 + 1)
    );
}

/// What a callback saw: the program it got and its build status at that moment.
struct Seen {
    calls: AtomicUsize,
    programs: Mutex<Vec<(usize, cl_int)>>,
    device: cl_device_id,
}

extern "C" fn record(program: cl_program, user_data: *mut c_void) {
    // SAFETY: every test passes a `Seen` that outlives the call.
    let seen = unsafe { &*user_data.cast::<Seen>() };
    let mut status: cl_int = 0;
    // SAFETY: the callback may call the API; the program is valid during the call.
    let code = unsafe {
        clGetProgramBuildInfo(
            program,
            seen.device,
            CL_PROGRAM_BUILD_STATUS,
            std::mem::size_of::<cl_int>(),
            (&mut status as *mut cl_int).cast(),
            ptr::null_mut(),
        )
    };
    assert_eq!(code, CL_SUCCESS);
    seen.programs
        .lock()
        .unwrap()
        .push((program as usize, status));
    seen.calls.fetch_add(1, Ordering::SeqCst);
}

/// Waits (the callback may come from another thread) until `n` calls were seen.
fn wait_calls(seen: &Seen, n: usize) -> Vec<(usize, cl_int)> {
    for _ in 0..500 {
        if seen.calls.load(Ordering::SeqCst) >= n {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    seen.programs.lock().unwrap().clone()
}

#[test]
fn callbacks_report_the_finished_build_once() {
    let ctx = DeviceContext::new();
    let seen = Seen {
        calls: AtomicUsize::new(0),
        programs: Mutex::new(Vec::new()),
        device: ctx.device,
    };
    let data = (&seen as *const Seen).cast_mut().cast::<c_void>();

    // clBuildProgram, success and failure.
    let p = ctx
        .try_program_from_source("kernel void k(global int* o) { o[0] = 1; }")
        .unwrap();
    // SAFETY: valid program, a callback with its user data.
    let code = unsafe { clBuildProgram(p.raw(), 1, &ctx.device, ptr::null(), Some(record), data) };
    assert_eq!(code, CL_SUCCESS);
    assert_eq!(
        wait_calls(&seen, 1),
        vec![(p.raw() as usize, CL_BUILD_SUCCESS)]
    );
    let bad = ctx
        .try_program_from_source("kernel void k( { nonsense")
        .unwrap();
    // SAFETY: as above.
    let code =
        unsafe { clBuildProgram(bad.raw(), 1, &ctx.device, ptr::null(), Some(record), data) };
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert_eq!(
        wait_calls(&seen, 2)[1],
        (bad.raw() as usize, CL_BUILD_ERROR)
    );
    // Invalid options: the build never starts, no callback.
    let opts = c"-cl-no-such-option";
    // SAFETY: as above.
    let code =
        unsafe { clBuildProgram(p.raw(), 1, &ctx.device, opts.as_ptr(), Some(record), data) };
    assert_eq!(code, CL_INVALID_BUILD_OPTIONS);
    // user_data without a callback is invalid.
    // SAFETY: as above.
    let code = unsafe { clBuildProgram(p.raw(), 1, &ctx.device, ptr::null(), None, data) };
    assert_eq!(code, CL_INVALID_VALUE);

    // clCompileProgram and clLinkProgram (the link callback gets the new program,
    // also when linking fails).
    let helper = ctx.try_program_from_source(HELPER).unwrap();
    assert_eq!(
        try_compile(&ctx, &helper, "", &[], Some(record), data),
        CL_SUCCESS
    );
    assert_eq!(
        wait_calls(&seen, 3)[2],
        (helper.raw() as usize, CL_BUILD_SUCCESS)
    );
    let (lib, code) = try_link(&ctx, &[&helper], "-create-library", Some(record), data);
    assert_eq!(code, CL_SUCCESS);
    assert_eq!(
        wait_calls(&seen, 4)[3],
        (lib.unwrap().raw() as usize, CL_BUILD_SUCCESS)
    );
    let user = compiled(&ctx, USES_TWICE, "");
    let (failed, code) = try_link(&ctx, &[&user], "", Some(record), data);
    assert_eq!(code, CL_LINK_PROGRAM_FAILURE);
    assert_eq!(
        wait_calls(&seen, 5)[4],
        (failed.unwrap().raw() as usize, CL_BUILD_ERROR)
    );
    let (none, code) = try_link(&ctx, &[&user], "-bogus", Some(record), data);
    assert!(none.is_none());
    assert_eq!(code, CL_INVALID_LINKER_OPTIONS);
    assert_eq!(
        wait_calls(&seen, 6).len(),
        5,
        "no callback for a link that never started"
    );
}

#[test]
fn inline_functions_in_every_form() {
    let ctx = DeviceContext::new();
    // A loop keeps clang from inlining the function, so its definition must exist.
    // (Arguments from 100 up: clang turns the loop into a closed form in which
    // `x - 2` wraps around for small `x`.)
    let body = "int f(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * x; return s; }\n";
    let want = expect(|x| (0..x + 100).map(|i| i * (x + 100)).sum());
    let kernel = "kernel void k(global int* o) { int i = get_global_id(0); o[i] = f(i + 100); }";
    let user = format!("int f(int x);\n{kernel}");
    for prefix in [
        "inline ",
        "static inline ",
        "extern inline ",
        "__inline ",
        "__inline__ ",
    ] {
        let p = ctx.build(&format!("{prefix}{body}{kernel}"), "");
        assert_eq!(run_k(&ctx, &p, N), want, "{prefix}in one program");
        let p = ctx.build(&format!("{prefix}{body}{kernel}"), "-cl-std=CL3.0");
        assert_eq!(
            run_k(&ctx, &p, N),
            want,
            "{prefix}in one OpenCL C 3.0 program"
        );
    }
    // Defined inline in one program, called from another.
    for prefix in ["inline ", "extern inline "] {
        let def = compiled(&ctx, &format!("{prefix}{body}"), "");
        let exe = linked(&ctx, &[&def, &compiled(&ctx, &user, "")], "");
        assert_eq!(run_k(&ctx, &exe, N), want, "{prefix}across programs");
    }
    // The same inline function from one header in two programs, and an inline
    // definition next to an `extern inline` one.
    let a = compiled(&ctx, &format!("inline {body}{kernel}"), "");
    let b = compiled(
        &ctx,
        &format!("inline {body}kernel void k2(global int* o) {{ o[0] = f(3); }}"),
        "",
    );
    assert_eq!(run_k(&ctx, &linked(&ctx, &[&a, &b], ""), N), want);
    let c = compiled(&ctx, &format!("extern inline {body}"), "");
    assert_eq!(run_k(&ctx, &linked(&ctx, &[&a, &c], ""), N), want);
    // Unused static inline functions do not warn, even with -Werror.
    ctx.build(
        &format!("static inline {body}kernel void k(global int* o) {{ o[0] = 1; }}"),
        "-Werror",
    );
}

extern "C" {
    // OpenCL 2.2, not in cl-sys; the ICD loader exports it.
    fn clSetProgramSpecializationConstant(
        program: cl_program,
        spec_id: cl_uint,
        spec_size: usize,
        spec_value: *const c_void,
    ) -> cl_int;
}

/// Exports `uint get_a()` returning specialization constant 3 (default 5).
const GET_A: &str = r#"
               OpCapability Addresses
               OpCapability Linkage
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpDecorate %a SpecId 3
               OpDecorate %get LinkageAttributes "get_a" Export
       %uint = OpTypeInt 32 0
          %a = OpSpecConstant %uint 5
         %ft = OpTypeFunction %uint
        %get = OpFunction %uint None %ft
      %entry = OpLabel
               OpReturnValue %a
               OpFunctionEnd
"#;

/// `kernel void k(global uint* o) { o[0] = get_a(); }` with `get_a` imported.
const CALLS_GET_A: &str = r#"
               OpCapability Addresses
               OpCapability Linkage
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
               OpDecorate %get LinkageAttributes "get_a" Import
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
         %pu = OpTypePointer CrossWorkgroup %uint
         %ft = OpTypeFunction %uint
         %kt = OpTypeFunction %void %pu
        %get = OpFunction %uint None %ft
               OpFunctionEnd
          %k = OpFunction %void None %kt
        %out = OpFunctionParameter %pu
      %entry = OpLabel
          %v = OpFunctionCall %uint %get
               OpStore %out %v
               OpReturn
               OpFunctionEnd
"#;

#[test]
fn specialization_constants_apply_at_clcompileprogram() {
    let ctx = DeviceContext::new();
    let (def, user) = match (
        spirv::assemble(GET_A, "spv1.0"),
        spirv::assemble(CALLS_GET_A, "spv1.0"),
    ) {
        (Ok(d), Ok(u)) => (d, u),
        (Err(e), _) | (_, Err(e)) => panic!("spirv-as (spirv-tools) is needed: {e}"),
    };
    for value in [None, Some(42u32)] {
        let def_p = ctx.try_program_from_il(&def).unwrap();
        if let Some(v) = value {
            let bytes = v.to_le_bytes();
            // SAFETY: four bytes for a 32-bit constant.
            let code = unsafe {
                clSetProgramSpecializationConstant(def_p.raw(), 3, 4, bytes.as_ptr().cast())
            };
            assert_eq!(code, CL_SUCCESS);
        }
        let user_p = ctx.try_program_from_il(&user).unwrap();
        for p in [&def_p, &user_p] {
            assert_eq!(
                try_compile(&ctx, p, "", &[], None, ptr::null_mut()),
                CL_SUCCESS,
                "{}",
                ctx.build_log(p)
            );
        }
        let exe = linked(&ctx, &[&user_p, &def_p], "");
        let kernel = exe.kernel("k");
        let out = ctx.buffer_zeroed::<u32>(1);
        kernel.arg_buffer(0, &out);
        ctx.run(&kernel, &[1], None);
        assert_eq!(ctx.read::<u32>(&out, 1), vec![value.unwrap_or(5)]);
    }
}

/// A binary keeps the work-group rule of the source it was built from when it is
/// rebuilt with options that name no OpenCL C version (its own, or pyopencl's `-I`
/// for its cached binaries): an OpenCL C 1.x program refuses a ragged ND-range, as
/// the source program does, and its kernels are compiled for full sub-groups; a
/// `-cl-std=CL3.0` rebuild, or a binary of an OpenCL C 3.0 program, takes one.
#[test]
fn binaries_keep_the_work_group_rule_of_their_source() {
    let ctx = DeviceContext::new();
    let src =
        "kernel void k(global int* o) { o[get_global_id(0)] = 3 * (int)get_global_id(0) + 1; }";
    let want = |n: usize| (0..n as i32).map(|i| 3 * i + 1).collect::<Vec<_>>();
    let ragged = |p: &Program| -> Option<Vec<i32>> {
        let kernel = p.kernel("k");
        let out = ctx.buffer_zeroed::<i32>(10);
        kernel.arg_buffer(0, &out);
        match ctx.try_enqueue(&kernel, None, &[10], Some(&[4])) {
            Ok(_) => Some(ctx.read(&out, 10)),
            Err(e) => {
                assert_eq!(e.code, CL_INVALID_WORK_GROUP_SIZE);
                None
            }
        }
    };
    let rebuilt = |p: &Program, options: &str| -> Program {
        let (q, err, _) = from_binary(&ctx, &binary_of(p));
        assert_eq!(err, CL_SUCCESS);
        ctx.try_build_program(q.unwrap(), options)
            .unwrap_or_else(|f| panic!("{f}"))
    };
    let cl12 = ctx.build(src, "");
    assert_eq!(ragged(&cl12), None, "OpenCL C 1.2 source");
    for options in ["", "-I /tmp", "-cl-std=CL1.2"] {
        let p = rebuilt(&cl12, options);
        assert_eq!(
            ragged(&p),
            None,
            "OpenCL C 1.2 binary rebuilt with {options:?}"
        );
        assert_eq!(run_k(&ctx, &p, N), want(N), "{options:?}");
    }
    let p = rebuilt(&cl12, "-cl-std=CL3.0");
    assert_eq!(ragged(&p), Some(want(10)), "rebuilt with -cl-std=CL3.0");
    let cl30 = ctx.build(src, "-cl-std=CL3.0");
    assert_eq!(ragged(&cl30), Some(want(10)), "OpenCL C 3.0 source");
    let p = rebuilt(&cl30, "");
    assert_eq!(ragged(&p), Some(want(10)), "OpenCL C 3.0 binary");
}
