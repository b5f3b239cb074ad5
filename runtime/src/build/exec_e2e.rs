//! End-to-end tests of the execution engine with real kernels: OpenCL C through
//! clang ([`crate::build`]), the jit and [`crate::exec::try_run_ndrange`], checked
//! against host references. They exercise what the fake-kernel tests of `exec` cannot:
//! that the ABI the jit generates and the one the scheduler fills agree (group ids,
//! offsets, ragged groups, `__local` arguments, scratch for barriers). They live under
//! `build`, which sits above `exec`, so that `exec` does not depend on `build`.

use std::sync::Arc;

use cranecl_jit::{ArgKind, CompiledKernel};

use crate::build::{BuildOptions, Frontend};
use crate::exec::tests::nd;
use crate::exec::*;

/// Compiles `source` (clang, then the jit) and returns kernel `name`.
fn kernel(source: &str, name: &str) -> Arc<CompiledKernel> {
    let frontend = Frontend::from_env().expect("clang-22 (scripts/install-deps.sh)");
    let options = BuildOptions::parse("").expect("empty options");
    let spirv = frontend
        .compile(source, &options)
        .expect("clang compiles the test kernel")
        .spirv;
    let program = cranecl_jit::compile(&spirv, &options.jit)
        .unwrap_or_else(|e| panic!("the jit compiles {name}: {e}"));
    Arc::clone(program.kernel(name).expect("kernel in program"))
}

/// An argument for [`launch`].
enum Arg<'a> {
    /// A buffer: its base pointer goes in the block.
    Buf(*mut u8),
    /// A `__local` buffer of this many bytes.
    Local(usize),
    /// Bytes passed by value.
    Val(&'a [u8]),
}

fn launch(kernel: &Arc<CompiledKernel>, args: &[Arg], ndrange: NdRange) -> Launch {
    let info = &kernel.info;
    assert_eq!(
        info.args.len(),
        args.len(),
        "argument count of {}",
        info.name
    );
    let mut block = vec![0u8; info.arg_block_size];
    let mut local_args = Vec::new();
    for (spec, arg) in info.args.iter().zip(args) {
        match (spec.kind, arg) {
            (ArgKind::GlobalPtr | ArgKind::ConstantPtr, Arg::Buf(p)) => block
                [spec.offset..spec.offset + 8]
                .copy_from_slice(&(*p as usize as u64).to_ne_bytes()),
            (ArgKind::LocalPtr, Arg::Local(size)) => local_args.push(LocalArg {
                offset: spec.offset,
                size: *size,
            }),
            (ArgKind::Value, Arg::Val(bytes)) => {
                assert_eq!(spec.size, bytes.len(), "size of argument {}", spec.name);
                block[spec.offset..spec.offset + bytes.len()].copy_from_slice(bytes)
            }
            (kind, _) => panic!(
                "argument {} of kind {kind:?} given the wrong thing",
                spec.name
            ),
        }
    }
    Launch {
        kernel: Arc::clone(kernel),
        args: block,
        local_args,
        ndrange,
        threads: num_workers(),
    }
}

#[test]
fn ids_offsets_and_ragged_groups_match_the_host() {
    let src = r#"
kernel void ids(global uint* out, uint width) {
  size_t x = get_global_id(0) - get_global_offset(0);
  size_t y = get_global_id(1) - get_global_offset(1);
  uint v = (uint)get_group_id(0) | ((uint)get_group_id(1) << 8) | ((uint)get_local_id(0) << 16)
         | ((uint)get_local_size(0) << 24);
  out[y * width + x] = v;
}
"#;
    let k = kernel(src, "ids");
    for (global, local, offset) in [
        ([64, 4], [16, 2], [0, 0]),
        ([61, 5], [16, 2], [3, 7]),
        ([7, 3], [8, 4], [1, 1]),
    ] {
        let mut out = vec![0xffff_ffffu32; global[0] * global[1]];
        let width = (global[0] as u32).to_ne_bytes();
        let l = launch(
            &k,
            &[Arg::Buf(out.as_mut_ptr().cast()), Arg::Val(&width)],
            nd(
                2,
                [offset[0], offset[1], 0],
                [global[0], global[1], 1],
                [local[0], local[1], 1],
            ),
        );
        try_run_ndrange(&l).expect("runs");
        for y in 0..global[1] {
            for x in 0..global[0] {
                let (gx, gy, lx) = (x / local[0], y / local[1], x % local[0]);
                let lsize = local[0].min(global[0] - gx * local[0]);
                let want = gx as u32 | (gy as u32) << 8 | (lx as u32) << 16 | (lsize as u32) << 24;
                assert_eq!(
                    out[y * global[0] + x],
                    want,
                    "global {global:?} local {local:?} at ({x},{y})"
                );
            }
        }
    }
}

#[test]
fn local_argument_reduction_with_barriers() {
    let src = r#"
kernel void reduce(global const float* in, global float* out, local float* tmp) {
  size_t l = get_local_id(0);
  tmp[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = tmp[0];
}
"#;
    let k = kernel(src, "reduce");
    let (n, local) = (1 << 14, 128);
    let input: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let mut out = vec![0f32; n / local];
    let l = launch(
        &k,
        &[
            Arg::Buf(input.as_ptr() as *mut u8),
            Arg::Buf(out.as_mut_ptr().cast()),
            Arg::Local(local * 4),
        ],
        nd(1, [0; 3], [n, 1, 1], [local, 1, 1]),
    );
    try_run_ndrange(&l).expect("runs");
    for (g, v) in out.iter().enumerate() {
        let want: f32 = input[g * local..(g + 1) * local].iter().sum();
        assert_eq!(*v, want, "group {g}");
    }
}

#[test]
fn concurrent_real_launches() {
    let src = "kernel void add(global float* a, global const float* b, float s) { size_t i = get_global_id(0); a[i] = a[i] * s + b[i]; }\n";
    let k = kernel(src, "add");
    let threads: Vec<_> = (0..3)
        .map(|t| {
            let k = Arc::clone(&k);
            std::thread::spawn(move || {
                for round in 0..20 {
                    let n = 1000 + 333 * t + round;
                    let mut a: Vec<f32> = (0..n).map(|i| i as f32).collect();
                    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
                    let s = 2f32.to_ne_bytes();
                    let l = launch(
                        &k,
                        &[
                            Arg::Buf(a.as_mut_ptr().cast()),
                            Arg::Buf(b.as_ptr() as *mut u8),
                            Arg::Val(&s),
                        ],
                        nd(1, [0; 3], [n, 1, 1], [64, 1, 1]),
                    );
                    try_run_ndrange(&l).expect("runs");
                    for (i, v) in a.iter().enumerate() {
                        assert_eq!(
                            *v,
                            i as f32 * 2.0 + (i % 7) as f32,
                            "thread {t} round {round} item {i}"
                        );
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("launching thread");
    }
}
