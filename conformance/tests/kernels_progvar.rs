//! Program-scope variables (OpenCL C 3.0 `__opencl_c_program_scope_global_variables`)
//! through the ICD loader: the device limits, `CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE`,
//! initial values, values kept between launches and shared by a program's kernels,
//! and each program owning its own copy.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// `CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE` (0 when program-scope variables are not offered).
fn max_global_variable_size(ctx: &DeviceContext) -> usize {
    device_info::<usize>(ctx.device, opencl_sys_consts::MAX_GLOBAL_VARIABLE_SIZE).unwrap()
}

/// The OpenCL 3.0 query values cl-sys lacks.
mod opencl_sys_consts {
    pub const MAX_GLOBAL_VARIABLE_SIZE: u32 = 0x104D;
    pub const GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE: u32 = 0x1054;
    pub const PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE: u32 = 0x1185;
}

fn total_size(ctx: &DeviceContext, program: &Program) -> usize {
    query_value::<usize>("CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE", |n, p, r| {
        // SAFETY: the pointers come from query_value.
        unsafe {
            clGetProgramBuildInfo(
                program.raw(),
                ctx.device,
                opencl_sys_consts::PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
                n,
                p,
                r,
            )
        }
    })
    .unwrap()
}

const SRC: &str = r#"
int total = 100;
global long history[8];
int* cursor = (int*)&history[0];
constant int weights[3] = {1, 10, 100};

kernel void add(global const int* in) {
  static int launches;
  int v = in[get_global_id(0)] * weights[get_global_id(0) % 3];
  atomic_add(&total, v);
  work_group_barrier(CLK_GLOBAL_MEM_FENCE);
  if (get_global_id(0) == 0) {
    launches++;
    history[launches & 7] = launches;
  }
}

kernel void report(global long* out) {
  out[0] = total;
  for (int i = 0; i < 8; i++) out[1 + i] = history[i];
  out[9] = *cursor;
}
"#;

#[test]
fn device_reports_global_variable_limits() {
    let ctx = DeviceContext::new();
    let max = max_global_variable_size(&ctx);
    let preferred: usize = device_info(
        ctx.device,
        opencl_sys_consts::GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE,
    )
    .unwrap();
    if testing_cranecl() {
        assert_eq!(max, 64 << 20);
        assert_eq!(preferred, max);
    }
    if max == 0 {
        assert_eq!(preferred, 0);
    }
}

#[test]
fn program_scope_variables_keep_their_values_between_launches() {
    let ctx = DeviceContext::new();
    if !require(
        max_global_variable_size(&ctx) > 0,
        "program-scope global variables",
    ) {
        return;
    }
    let n = 96;
    let input: Vec<i32> = (0..n as i32).map(|i| i - 40).collect();
    let a = ctx.buffer_from(&input);
    let out = ctx.buffer_zeroed::<i64>(10);
    let once: i64 = input
        .iter()
        .enumerate()
        .map(|(i, v)| i64::from(*v) * [1, 10, 100][i % 3])
        .sum();
    let build = || {
        let program = ctx.build(SRC, "-cl-std=CL3.0");
        // total (4) + history (64) + cursor (8) + launches (4); not the constant table.
        assert!(total_size(&ctx, &program) >= 4 + 64 + 8 + 4);
        if testing_cranecl() {
            assert_eq!(total_size(&ctx, &program), 4 + 64 + 8 + 4);
        }
        program
    };
    let first = build();
    let add = first.kernel("add");
    add.arg_buffer(0, &a);
    let report = first.kernel("report");
    report.arg_buffer(0, &out);
    for launch in 1..=3i64 {
        // One work-group: the barrier orders the atomic adds before the history write.
        ctx.run(&add, &[n], Some(&[n]));
        ctx.run(&report, &[1], None);
        let got: Vec<i64> = ctx.read(&out, 10);
        assert_eq!(got[0], 100 + launch * once, "total after launch {launch}");
        for slot in 1..=launch as usize {
            assert_eq!(got[1 + slot], slot as i64, "history[{slot}]");
        }
        // *cursor reads the low half of history[0], never written.
        assert_eq!(got[9], 0);
    }
    // A second program from the same source starts from the initial values.
    let second = build();
    let report2 = second.kernel("report");
    report2.arg_buffer(0, &out);
    ctx.run(&report2, &[1], None);
    let got: Vec<i64> = ctx.read(&out, 10);
    assert_eq!(got[0], 100, "a new program has its own, initialised copy");
    assert!(got[1..9].iter().all(|&h| h == 0));
    // The first program's values are untouched by the second one.
    ctx.run(&report, &[1], None);
    let got: Vec<i64> = ctx.read(&out, 10);
    assert_eq!(got[0], 100 + 3 * once);
}

#[test]
fn oversized_program_scope_variable_fails_to_build_with_a_log() {
    let ctx = DeviceContext::new();
    let max = max_global_variable_size(&ctx);
    if !require(
        max > 0 && testing_cranecl(),
        "cranecl's global variable limit",
    ) {
        return;
    }
    let src = format!(
        "uchar huge[{}];\nkernel void k(global uchar* o) {{ o[0] = huge[get_global_id(0)]; }}\n",
        max + 1
    );
    let failure = match ctx.try_build(&src, "-cl-std=CL3.0") {
        Ok(_) => panic!("a variable over CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE built"),
        Err(f) => f,
    };
    assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(failure.log.contains("huge"), "{}", failure.log);
}

/// A pointer variable without an initializer starts null (clang-22 initialises it
/// with a null *integer*, which the intake accepts: CTS basic
/// progvar_prog_scope_uninit), and keeps the address a kernel stores in it.
#[test]
fn uninitialised_pointer_variable_starts_null() {
    let ctx = DeviceContext::new();
    if !require(
        max_global_variable_size(&ctx) > 0,
        "program-scope global variables",
    ) {
        return;
    }
    // This shape (no kernel that only compares) is the one clang-22 initialises
    // with `OpConstantNull %ulong`.
    let src = r#"
uchar a_var[2];
global uchar* p_var;
kernel void writer(global uchar* src, uint idx) {
  a_var[0] = src[0];
  a_var[1] = src[1];
  p_var = a_var + idx;
}
kernel void reader(global uchar* dest) {
  dest[1] = p_var == 0;
  if (p_var) dest[0] = *p_var;
  dest[2] = a_var[0];
}
"#;
    let program = ctx.build(src, "-cl-std=CL3.0");
    let dest = ctx.buffer_from(&[99u8; 3]);
    let reader = program.kernel("reader");
    reader.arg_buffer(0, &dest);
    ctx.run(&reader, &[1], None);
    assert_eq!(
        ctx.read::<u8>(&dest, 3),
        vec![99, 1, 0],
        "p_var starts NULL"
    );
    let src_buf = ctx.buffer_from(&[17u8, 42]);
    let writer = program.kernel("writer");
    writer.arg_buffer(0, &src_buf).arg(1, 1u32);
    ctx.run(&writer, &[1], None);
    ctx.run(&reader, &[1], None);
    assert_eq!(
        ctx.read::<u8>(&dest, 3),
        vec![42, 0, 17],
        "p_var = &a_var[1]"
    );
}
