//! `#pragma OPENCL EXTENSION <name> : enable` (and `: disable`) for every extension
//! the device reports builds silently under `-Werror` at OpenCL C 1.2 (the default),
//! 2.0 and 3.0, in one pragma per line and with comments after it; a pragma naming an
//! extension nobody reports still gets clang's warning (an error under -Werror), and
//! `cl_khr_fp16`'s pragma still enables `half` where OpenCL C 1.2 needs it.
//!
//! A cranecl promise (clang-22 warns about most of these pragmas); elsewhere the
//! tests run too, as any conformant compiler accepts the pragma of its extensions.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

fn extensions(ctx: &DeviceContext) -> Vec<String> {
    device_info_string(ctx.device, CL_DEVICE_EXTENSIONS)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_reported_extension_pragma_builds_under_werror() {
    let ctx = DeviceContext::new();
    let exts = extensions(&ctx);
    assert!(!exts.is_empty());
    let mut src = String::new();
    for (i, e) in exts.iter().enumerate() {
        let behaviour = if i % 3 == 2 { "disable" } else { "enable" };
        src += &format!("#pragma OPENCL EXTENSION {e} : {behaviour}\n");
        src += &format!("  #  pragma OPENCL EXTENSION {e}:enable // again\n");
    }
    src += "kernel void k(global int* a) { a[get_global_id(0)] = 7; }\n";
    for std in ["", "-cl-std=CL1.2", "-cl-std=CL2.0", "-cl-std=CL3.0"] {
        if let Err(f) = ctx.try_build(&src, &format!("-Werror {std}")) {
            panic!("{std}: {f}");
        }
    }
    // One extension at a time, and the kernel runs.
    for e in &exts {
        let src = format!(
            "#pragma OPENCL EXTENSION {e} : enable\n\
             kernel void k(global int* a) {{ a[get_global_id(0)] = 7; }}\n"
        );
        let k = ctx.kernel(&src, "-Werror", "k");
        let out = ctx.buffer_zeroed::<i32>(4);
        k.arg_buffer(0, &out);
        ctx.run(&k, &[4], None);
        assert_eq!(ctx.read::<i32>(&out, 4), vec![7; 4], "{e}");
    }
}

#[test]
fn an_unknown_extension_pragma_still_warns() {
    let ctx = DeviceContext::new();
    let src = "#pragma OPENCL EXTENSION cl_nobody_reports_this : enable\n\
               kernel void k(global int* a) { a[0] = 1; }\n";
    let Err(err) = ctx.try_build(src, "-Werror") else {
        panic!("an unknown extension's pragma is an error under -Werror");
    };
    assert_eq!(err.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(err.log.contains("cl_nobody_reports_this"), "{}", err.log);
    // Without -Werror it is a warning only.
    ctx.build(src, "");
}

#[test]
fn the_fp16_pragma_still_enables_half_in_opencl_c_1_2() {
    let ctx = DeviceContext::new();
    if !ctx.has_extension("cl_khr_fp16") {
        return;
    }
    let src = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
               kernel void k(global float* a) { half h = (half)1.5f; a[0] = (float)(h + h); }\n";
    let k = ctx.kernel(src, "-Werror -cl-std=CL1.2", "k");
    let out = ctx.buffer_zeroed::<f32>(1);
    k.arg_buffer(0, &out);
    ctx.run(&k, &[1], None);
    assert_eq!(ctx.read::<f32>(&out, 1), vec![3.0]);
    // Without the pragma, OpenCL C 1.2 refuses `half` arithmetic.
    let bare = src.replace("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n", "");
    assert!(ctx.try_build(&bare, "-cl-std=CL1.2").is_err());
}
