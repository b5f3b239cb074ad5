//! Big sources (16 KB and more), which clBuildProgram compiles in two clang runs
//! (front end to LLVM IR, then optimiser and backend, so each kernel body is optimised
//! once): results, kernels calling kernels, build options, diagnostics and logs must
//! be as for small sources.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// Statements in the generated kernel: enough for a source above 16 KB.
const STATEMENTS: usize = 400;

/// A source of more than 16 KB: kernel `sum` folds `in` with STATEMENTS statements
/// (scaled by `SCALE`, a -D the caller gives), `single` writes 5 + SCALE, and `twice`
/// calls kernel `single` twice and adds one. `extra` goes before the kernels.
fn big_source(extra: &str) -> String {
    let mut s = String::from(extra);
    s.push_str("kernel void sum(global const float *in, global float *out)\n{\n");
    s.push_str("  size_t gid = get_global_id(0);\n  float acc = 0.0f;\n");
    for i in 0..STATEMENTS {
        s.push_str(&format!(
            "  acc = acc * 0.5f + in[(gid + {i}) & 63] * (SCALE + {}.0f); /* statement {i} */\n",
            i % 5
        ));
    }
    s.push_str("  out[gid] = acc;\n}\n");
    s.push_str("kernel void single(global int *o) { o[get_global_id(0)] += 5 + (int)SCALE; }\n");
    s.push_str(
        "kernel void twice(global int *o) { single(o); single(o); o[get_global_id(0)] += 1; }\n",
    );
    assert!(s.len() > 16 << 10, "source of {} bytes", s.len());
    s
}

/// What kernel `sum` computes for work-item `gid`, in the same order of operations
/// (clang may contract `acc * 0.5f + x` into an fma: compare with a tolerance).
fn sum_reference(input: &[f32], gid: usize, scale: f32) -> f32 {
    let mut acc = 0.0f32;
    for i in 0..STATEMENTS {
        acc = acc * 0.5 + input[(gid + i) & 63] * (scale + (i % 5) as f32);
    }
    acc
}

#[test]
fn big_source_builds_and_computes() {
    let ctx = DeviceContext::new();
    let program = ctx.build(&big_source(""), "-DSCALE=2.0f");
    let mut names: Vec<String> = bytes_to_string(
        "CL_PROGRAM_KERNEL_NAMES",
        &program.info_bytes(CL_PROGRAM_KERNEL_NAMES).unwrap(),
    )
    .split(';')
    .map(str::to_string)
    .collect();
    names.sort();
    assert_eq!(names, ["single", "sum", "twice"]);

    let input: Vec<f32> = (0..64).map(|i| (i as f32 * 0.37).sin()).collect();
    let inb = ctx.buffer_from(&input);
    let out = ctx.buffer_zeroed::<f32>(64);
    let kernel = program.kernel("sum");
    kernel.arg_buffer(0, &inb).arg_buffer(1, &out);
    ctx.run(&kernel, &[64], None);
    let got = ctx.read::<f32>(&out, 64);
    for (gid, g) in got.iter().enumerate() {
        let want = sum_reference(&input, gid, 2.0);
        assert!(
            (g - want).abs() <= 1e-4 * want.abs().max(1.0),
            "sum[{gid}] = {g}, want {want}"
        );
    }

    // A kernel calling a kernel: the callee's body is inlined into the caller.
    let ints = ctx.buffer_zeroed::<i32>(16);
    let twice = program.kernel("twice");
    twice.arg_buffer(0, &ints);
    ctx.run(&twice, &[16], None);
    assert_eq!(ctx.read::<i32>(&ints, 16), vec![15; 16]);
    let single = program.kernel("single");
    single.arg_buffer(0, &ints);
    ctx.run(&single, &[16], None);
    assert_eq!(ctx.read::<i32>(&ints, 16), vec![22; 16]);
}

#[test]
fn big_source_warnings_werror_and_errors_reach_the_log() {
    let ctx = DeviceContext::new();
    let warns = big_source("#warning cranecl_big_warning\n");
    let program = ctx.build(&warns, "-DSCALE=1.0f");
    let log = ctx.build_log(&program);
    assert!(
        log.contains("cranecl_big_warning"),
        "warning missing from the build log: {log:?}"
    );
    let failure = ctx
        .try_build(&warns, "-DSCALE=1.0f -Werror")
        .map(|_| ())
        .unwrap_err();
    assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(
        failure.log.contains("cranecl_big_warning"),
        "{}",
        failure.log
    );
    let program = ctx.build(&warns, "-DSCALE=1.0f -w");
    assert!(!ctx.build_log(&program).contains("cranecl_big_warning"));

    // No -D: SCALE is undeclared, and the log says so.
    let failure = ctx.try_build(&big_source(""), "").map(|_| ()).unwrap_err();
    assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(failure.log.contains("SCALE"), "{}", failure.log);
    assert!(failure.log.contains("error"), "{}", failure.log);
}

#[test]
fn big_source_math_options_reach_the_front_end() {
    let ctx = DeviceContext::new();
    // __FAST_RELAXED_MATH__ is the front end's macro for -cl-fast-relaxed-math.
    let src = big_source(
        "#ifdef __FAST_RELAXED_MATH__\n#define SCALE 3.0f\n#else\n#define SCALE 1.0f\n#endif\n",
    );
    for (options, expect) in [("", 6), ("-cl-fast-relaxed-math", 8)] {
        let program = ctx.build(&src, options);
        let ints = ctx.buffer_zeroed::<i32>(4);
        let single = program.kernel("single");
        single.arg_buffer(0, &ints);
        ctx.run(&single, &[4], None);
        assert_eq!(ctx.read::<i32>(&ints, 4), vec![expect; 4], "{options}");
    }
}
