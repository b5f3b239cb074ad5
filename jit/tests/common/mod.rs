//! Test harness for the jit: OpenCL C -> SPIR-V with clang-22, `cranecl_jit::compile`,
//! and a single-threaded ND-range runner that fills the argument block and the
//! work-group state the way the runtime does.

#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use cranecl_jit::{
    ArgKind, CompileOptions, CompiledKernel, CompiledProgram, NdRangeInfo, PrintfBuffer,
    WorkGroupState,
};

/// OpenCL C source -> SPIR-V words (panics with clang's diagnostics on failure).
pub fn spirv(src: &str) -> Vec<u32> {
    spirv_ext(src, "")
}

/// Extra `-cl-ext` features for OpenCL C 3.0 memory-model tests: generic address
/// space, program-scope globals, every atomic order and scope, 64-bit and float atomics.
pub const MEMORY_MODEL_EXT: &str = ",+__opencl_c_generic_address_space,+__opencl_c_program_scope_global_variables,+__opencl_c_atomic_order_acq_rel,+__opencl_c_atomic_order_seq_cst,+__opencl_c_atomic_scope_device,+__opencl_c_atomic_scope_all_devices,+cl_khr_int64_extended_atomics,+cl_ext_float_atomics,+__opencl_c_ext_fp32_global_atomic_add,+__opencl_c_ext_fp32_local_atomic_add,+__opencl_c_ext_fp32_global_atomic_min_max,+__opencl_c_ext_fp32_local_atomic_min_max,+__opencl_c_ext_fp64_global_atomic_add,+__opencl_c_ext_fp64_local_atomic_add,+__opencl_c_ext_fp64_global_atomic_min_max,+__opencl_c_ext_fp64_local_atomic_min_max";

/// [`spirv`] with `extra_ext` appended to the `-cl-ext` list (starting with a comma).
pub fn spirv_ext(src: &str, extra_ext: &str) -> Vec<u32> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("cranecl-jit-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = N.fetch_add(1, Ordering::Relaxed);
    let cl = dir.join(format!("k{n}.cl"));
    let spv = dir.join(format!("k{n}.spv"));
    std::fs::write(&cl, src).unwrap();
    let out = Command::new("clang-22")
        .args([
            "-cc1",
            "-triple",
            "spirv64-unknown-unknown",
            "-cl-std=CL3.0",
            "-finclude-default-header",
            "-O2",
            "-mllvm",
            "-spirv-ext=+SPV_INTEL_subgroups,+SPV_EXT_shader_atomic_float_add,+SPV_EXT_shader_atomic_float_min_max,+SPV_KHR_bit_instructions,+SPV_KHR_integer_dot_product",
        ])
        .arg(format!("-cl-ext=+cl_khr_subgroups,+cl_intel_subgroups,+__opencl_c_subgroups,+cl_khr_fp64,+__opencl_c_fp64,+__opencl_c_work_group_collective_functions,+cl_khr_int64_base_atomics,+cl_khr_fp16{extra_ext}"))
        .args(["-emit-obj", "-o"])
        .arg(&spv)
        .arg(&cl)
        .output()
        .expect("clang-22 runs");
    assert!(
        out.status.success(),
        "clang failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&spv).unwrap();
    let _ = std::fs::remove_file(&cl);
    let _ = std::fs::remove_file(&spv);
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Compiles OpenCL C source (panics with the compile error).
pub fn build(src: &str) -> CompiledProgram {
    build_with(src, &CompileOptions::default())
}

/// Compiles with the OpenCL C 3.0 memory-model features ([`MEMORY_MODEL_EXT`]).
pub fn build_memory_model(src: &str) -> CompiledProgram {
    let words = spirv_ext(src, MEMORY_MODEL_EXT);
    match cranecl_jit::compile(&words, &CompileOptions::default()) {
        Ok(p) => p,
        Err(e) => panic!("compile failed ({:?}): {}", e.kind, e.message),
    }
}

/// Compiles with options.
pub fn build_with(src: &str, opts: &CompileOptions) -> CompiledProgram {
    let words = spirv(src);
    match cranecl_jit::compile(&words, opts) {
        Ok(p) => p,
        Err(e) => panic!("compile failed ({:?}): {}", e.kind, e.message),
    }
}

/// Compiles with sub-group width `w`.
pub fn build_w(src: &str, w: u32) -> CompiledProgram {
    build_with(
        src,
        &CompileOptions {
            default_sub_group_width: Some(w),
            ..Default::default()
        },
    )
}

/// A kernel argument.
pub enum Arg {
    /// A buffer: its address.
    Buf(*mut u8),
    /// A value, its bytes.
    Val(Vec<u8>),
    /// `__local` memory of this many bytes.
    Local(usize),
}

/// A buffer argument over `v`.
pub fn buf<T>(v: &mut [T]) -> Arg {
    Arg::Buf(v.as_mut_ptr() as *mut u8)
}

/// A by-value argument.
pub fn val<T: Copy>(x: T) -> Arg {
    let size = std::mem::size_of::<T>();
    let mut b = vec![0u8; size];
    // SAFETY: T is Copy (plain data); we copy its bytes.
    unsafe { std::ptr::copy_nonoverlapping(&x as *const T as *const u8, b.as_mut_ptr(), size) };
    Arg::Val(b)
}

/// Runs `kernel` over `global` with work-groups of `local` (1 to 3 dims), every
/// work-group in order on this thread.
pub fn run(kernel: &CompiledKernel, global: &[usize], local: &[usize], args: &[Arg]) {
    run_with_printf(kernel, global, local, args, None)
}

/// A printf buffer of `capacity` bytes for [`run_with_printf`].
pub fn printf_buffer(capacity: usize) -> (Vec<u64>, PrintfBuffer) {
    let mut data = vec![0u64; capacity.div_ceil(8)];
    let buffer = PrintfBuffer {
        data: data.as_mut_ptr() as *mut u8,
        capacity: capacity as u64,
        used: AtomicU64::new(0),
        limit: AtomicU64::new(capacity as u64),
    };
    (data, buffer)
}

/// The records written into `buffer`: `(site, record bytes)` for each, in order.
pub fn printf_records(
    kernel: &CompiledKernel,
    data: &[u64],
    buffer: &PrintfBuffer,
) -> Vec<(u32, Vec<u8>)> {
    let bytes: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = buffer
        .used
        .load(Ordering::Relaxed)
        .min(buffer.limit.load(Ordering::Relaxed)) as usize;
    let mut at = 0;
    let mut out = Vec::new();
    while at < end {
        let site = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let size = kernel.printf().sites[site as usize].record_size as usize;
        out.push((site, bytes[at..at + size].to_vec()));
        at += size;
    }
    assert_eq!(at, end, "records end exactly at the claimed bytes");
    out
}

/// [`run`] with a printf buffer (None: the launch has none).
pub fn run_with_printf(
    kernel: &CompiledKernel,
    global: &[usize],
    local: &[usize],
    args: &[Arg],
    printf: Option<&PrintfBuffer>,
) {
    run_full(kernel, global, local, &[0; 3], args, printf)
}

/// [`run`] with a global work offset (`get_global_offset`, one per dimension).
pub fn run_offset(
    kernel: &CompiledKernel,
    global: &[usize],
    local: &[usize],
    offset: &[u64],
    args: &[Arg],
) {
    run_full(kernel, global, local, offset, args, None)
}

/// Runs an ND-range with offsets and an optional printf buffer.
pub fn run_full(
    kernel: &CompiledKernel,
    global: &[usize],
    local: &[usize],
    offset: &[u64],
    args: &[Arg],
    printf: Option<&PrintfBuffer>,
) {
    let info = &kernel.info;
    assert_eq!(
        args.len(),
        info.args.len(),
        "argument count of {}",
        info.name
    );
    let dims = global.len();
    let mut g = [1u64; 3];
    let mut l = [1u64; 3];
    for d in 0..dims {
        g[d] = global[d] as u64;
        l[d] = local[d] as u64;
    }
    let num_groups = [0, 1, 2].map(|d| g[d].div_ceil(l[d]));
    let mut global_offset = [0u64; 3];
    global_offset[..offset.len()].copy_from_slice(offset);
    let nd = NdRangeInfo {
        work_dim: dims as u32,
        _pad: 0,
        global_offset,
        global_size: g,
        enqueued_local_size: l,
        num_groups,
        printf_buffer: printf.map_or(0, |p| p as *const PrintfBuffer as u64),
        device_enqueue: 0,
    };
    // Local memory: static part, then each __local argument (aligned to 64).
    let mut local_total = info.static_local_bytes.next_multiple_of(64);
    let mut local_offs = Vec::new();
    for a in args {
        if let Arg::Local(n) = a {
            local_offs.push(local_total);
            local_total += n.next_multiple_of(64);
        }
    }
    // 128-byte aligned like the runtime's block (the largest type, long16).
    let mut local_mem = vec![0u64; local_total.div_ceil(8) + 24];
    let misalign = (local_mem.as_ptr() as usize).wrapping_neg() % 128;
    // SAFETY: the vector has 192 spare bytes, more than the 127 skipped at most.
    let local_base = unsafe { (local_mem.as_mut_ptr() as *mut u8).add(misalign) };
    let mut block = vec![0u8; info.arg_block_size.max(8)];
    let mut li = 0;
    for (a, meta) in args.iter().zip(&info.args) {
        let dst = &mut block[meta.offset..];
        match a {
            Arg::Buf(p) => {
                assert!(
                    matches!(meta.kind, ArgKind::GlobalPtr | ArgKind::ConstantPtr),
                    "arg {} is not a buffer",
                    meta.name
                );
                dst[..8].copy_from_slice(&(*p as u64).to_le_bytes());
            }
            Arg::Val(b) => {
                assert_eq!(b.len(), meta.size, "size of arg {}", meta.name);
                dst[..b.len()].copy_from_slice(b);
            }
            Arg::Local(_) => {
                assert_eq!(
                    meta.kind,
                    ArgKind::LocalPtr,
                    "arg {} is not __local",
                    meta.name
                );
                // SAFETY: offset within the local block allocated above.
                let p = unsafe { local_base.add(local_offs[li]) } as u64;
                li += 1;
                dst[..8].copy_from_slice(&p.to_le_bytes());
            }
        }
    }
    let lin_max = (l[0] * l[1] * l[2]) as usize;
    let mut scratch = vec![0u64; info.scratch_bytes(lin_max).div_ceil(8) + 8];
    for gz in 0..num_groups[2] {
        for gy in 0..num_groups[1] {
            for gx in 0..num_groups[0] {
                let gid = [gx, gy, gz];
                let ls = [0, 1, 2].map(|d| l[d].min(g[d] - gid[d] * l[d]));
                let wg = WorkGroupState {
                    ndrange: &nd,
                    group_id: gid,
                    local_size: ls,
                    local_mem: local_base,
                    local_mem_size: local_total as u64,
                    scratch: scratch.as_mut_ptr() as *mut u8,
                };
                // SAFETY: the argument block and buffers are laid out per the kernel's info.
                unsafe { kernel.run_work_group(block.as_ptr(), &wg) };
            }
        }
    }
}

/// The kernel `name` of `p`.
pub fn kernel<'a>(p: &'a CompiledProgram, name: &str) -> &'a CompiledKernel {
    p.kernel(name).unwrap_or_else(|| panic!("no kernel {name}"))
}

/// SPIR-V assembly -> words with `spirv-as` (SPIRV-Tools) for SPIR-V version
/// `env` (e.g. "spv1.4"); panics with the assembler's message on failure.
pub fn assemble(text: &str, env: &str) -> Vec<u32> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("cranecl-jit-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = N.fetch_add(1, Ordering::Relaxed);
    let src = dir.join(format!("a{n}.spvasm"));
    let spv = dir.join(format!("a{n}.spv"));
    std::fs::write(&src, text).unwrap();
    let out = Command::new("spirv-as")
        .args(["--target-env", env, "-o"])
        .arg(&spv)
        .arg(&src)
        .output()
        .expect("spirv-as runs (apt install spirv-tools)");
    assert!(
        out.status.success(),
        "spirv-as failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&spv).unwrap();
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&spv);
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Compiles assembled SPIR-V (panics with the compile error).
pub fn build_asm(text: &str, env: &str) -> CompiledProgram {
    let words = assemble(text, env);
    match cranecl_jit::compile(&words, &CompileOptions::default()) {
        Ok(p) => p,
        Err(e) => panic!("compile failed ({:?}): {}", e.kind, e.message),
    }
}
