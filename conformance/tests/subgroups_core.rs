//! cl_khr_subgroups core and the OpenCL C 2.0 work-group collectives: the
//! `clGetKernelSubGroupInfo` queries against what the same kernel sees
//! (`get_max_sub_group_size`, `get_num_sub_groups`, ...) for 1D/2D/3D local sizes,
//! `sub_group_barrier` (both OpenCL C forms and `OpControlBarrier` with Subgroup
//! scope) ordering `__local` memory, the `SubgroupsPerWorkgroup` execution mode
//! (`CL_KERNEL_COMPILE_NUM_SUB_GROUPS`), and every work-group collective on every
//! type in 1D, 2D and 3D work-groups, uniform and ragged, against a host reference.
//!
//! Sub-groups are assumed to be consecutive runs of the linear local id (what the
//! OpenCL C spec recommends and cranecl does); elsewhere only the portable
//! consistency checks are asserted.

use std::process::Command;

use cranecl_conformance::*;
use opencl_sys::{
    CL_INVALID_DEVICE, CL_INVALID_KERNEL, CL_INVALID_VALUE, CL_INVALID_WORK_GROUP_SIZE,
    CL_KERNEL_COMPILE_NUM_SUB_GROUPS, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
    CL_KERNEL_MAX_NUM_SUB_GROUPS, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
    CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, CL_KERNEL_WORK_GROUP_SIZE,
};

const OPTS: &str = "-cl-std=CL3.0";

fn sub_groups(ctx: &DeviceContext) -> bool {
    require(
        ctx.has_extension("cl_khr_subgroups"),
        "cl_khr_subgroups (sub-group queries and built-ins)",
    )
}

/// Items of an ND-range in global linear order, each with its work-group's linear
/// index, its linear local id and its work-group's real size (ragged groups are
/// smaller), for a zero offset.
#[derive(Clone, Copy, Debug)]
struct Item {
    group: usize,
    local_linear: usize,
    group_items: usize,
}

fn items(global: &[usize], local: &[usize]) -> Vec<Item> {
    let mut g = [1usize; 3];
    let mut l = [1usize; 3];
    g[..global.len()].copy_from_slice(global);
    l[..local.len()].copy_from_slice(local);
    let ngroups: Vec<usize> = (0..3).map(|d| g[d].div_ceil(l[d])).collect();
    let mut out = Vec::with_capacity(g[0] * g[1] * g[2]);
    for z in 0..g[2] {
        for y in 0..g[1] {
            for x in 0..g[0] {
                let id = [x, y, z];
                let gid: Vec<usize> = (0..3).map(|d| id[d] / l[d]).collect();
                let real: Vec<usize> = (0..3).map(|d| l[d].min(g[d] - gid[d] * l[d])).collect();
                let lid: Vec<usize> = (0..3).map(|d| id[d] % l[d]).collect();
                out.push(Item {
                    group: gid[0] + ngroups[0] * (gid[1] + ngroups[1] * gid[2]),
                    local_linear: lid[0] + real[0] * (lid[1] + real[1] * lid[2]),
                    group_items: real[0] * real[1] * real[2],
                });
            }
        }
    }
    out
}

/// `spirv-dis` of a module, for editing in what clang cannot express.
fn disassemble(module: &[u8]) -> Result<String, String> {
    let input = spirv::temp_path("module", "spv");
    std::fs::write(&input, module).map_err(|e| format!("writing {}: {e}", input.display()))?;
    let out = Command::new("spirv-dis").arg(&input).output();
    let _ = std::fs::remove_file(&input);
    let out = out.map_err(|e| format!("running spirv-dis (spirv-tools): {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// OpenCL C -> SPIR-V text, `edit`ed, -> module; None (test skipped) without the tools.
fn edited_module(source: &str, edit: impl Fn(&str) -> String) -> Option<Vec<u8>> {
    let have_tools = spirv::clang().is_some()
        && Command::new("spirv-dis").arg("--version").output().is_ok()
        && Command::new("spirv-as").arg("--version").output().is_ok();
    if !require(have_tools, "clang-22 + spirv-dis + spirv-as") {
        return None;
    }
    let module = spirv::compile(source, &[]).unwrap_or_else(|e| panic!("{e}"));
    let text = edit(&disassemble(&module).unwrap_or_else(|e| panic!("{e}")));
    Some(spirv::assemble(&text, "spv1.2").unwrap_or_else(|e| panic!("{e}\n{text}")))
}

/// Inserts `lines` after the first line containing `after`.
fn insert_after(text: &str, after: &str, lines: &str) -> String {
    let pos = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} not in module:\n{text}"));
    let eol = pos + text[pos..].find('\n').unwrap_or(text.len() - pos);
    format!("{}\n{lines}{}", &text[..eol], &text[eol..])
}

const IDS_SRC: &str = r#"
    kernel void k(global uint* o) {
        size_t i = get_global_linear_id();
        global uint* r = o + i * 6;
        r[0] = get_max_sub_group_size();
        r[1] = get_num_sub_groups();
        r[2] = get_sub_group_size();
        r[3] = get_sub_group_id();
        r[4] = get_sub_group_local_id();
        r[5] = get_enqueued_num_sub_groups();
    }"#;

/// Runs `IDS_SRC`'s kernel over `global` in groups of `local` and returns the six
/// values per work-item, in global linear order.
fn run_ids(ctx: &DeviceContext, kernel: &Kernel, global: &[usize], local: &[usize]) -> Vec<u32> {
    let n: usize = global.iter().product();
    let out = ctx.buffer_zeroed::<u32>(n * 6);
    kernel.arg_buffer(0, &out);
    ctx.run(kernel, global, Some(local));
    ctx.read(&out, n * 6)
}

#[test]
fn sub_group_queries_agree_with_the_kernel() {
    let ctx = DeviceContext::new();
    if !sub_groups(&ctx) {
        return;
    }
    let kernel = ctx.kernel(IDS_SRC, OPTS, "k");
    let locals: [&[usize]; 10] = [
        &[37],
        &[8],
        &[3],
        &[64],
        &[5, 3],
        &[1, 16],
        &[2, 3, 3],
        &[7, 7, 1],
        &[4, 4, 4],
        &[1, 1, 1],
    ];
    for local in locals {
        let max: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, local)
            .unwrap();
        let count: usize = kernel
            .sub_group_info(ctx.device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, local)
            .unwrap();
        // Two full groups in dimension 0 plus a ragged one.
        let mut global = local.to_vec();
        global[0] = 2 * local[0] + local[0].div_ceil(2);
        let got = run_ids(&ctx, &kernel, &global, local);
        let total: usize = local.iter().product();
        for (i, it) in items(&global, local).iter().enumerate() {
            let r = &got[i * 6..i * 6 + 6];
            let what = format!("local {local:?} item {i} ({it:?}): {r:?}");
            assert_eq!(r[0] as usize, max, "get_max_sub_group_size, {what}");
            assert_eq!(r[5] as usize, count, "get_enqueued_num_sub_groups, {what}");
            if it.group_items == total {
                assert_eq!(r[1] as usize, count, "get_num_sub_groups, {what}");
            }
            assert!(r[2] >= 1 && r[2] <= r[0], "sub-group size, {what}");
            assert!(r[3] < r[1] && r[4] < r[2], "ids in range, {what}");
            if testing_cranecl() {
                // Linear mapping: sub-group s holds linear ids s*max .. s*max+max-1.
                let sg = it.local_linear / max;
                let size = max.min(it.group_items - sg * max);
                let want = [
                    max,
                    it.group_items.div_ceil(max),
                    size,
                    sg,
                    it.local_linear % max,
                    total.div_ceil(max),
                ];
                assert_eq!(r, want.map(|v| v as u32), "{what}");
            }
        }
    }
    // CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT gives a local size with that many.
    let max_sg: usize = kernel
        .sub_group_info(ctx.device, CL_KERNEL_MAX_NUM_SUB_GROUPS, &[])
        .unwrap();
    let wg: usize = kernel
        .work_group_info(ctx.device, CL_KERNEL_WORK_GROUP_SIZE)
        .unwrap();
    let width: usize = kernel
        .sub_group_info(ctx.device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[wg])
        .unwrap();
    assert!(
        max_sg >= 1 && max_sg >= wg.div_ceil(width),
        "{max_sg} {wg} {width}"
    );
    if testing_cranecl() {
        assert_eq!(max_sg, wg.div_ceil(width));
    }
    for count in [1usize, 2, 3, 5, max_sg] {
        let local: [usize; 3] = kernel
            .sub_group_info(
                ctx.device,
                CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                &[count],
            )
            .unwrap();
        assert!(local.iter().all(|v| *v > 0), "count {count}: {local:?}");
        let got = run_ids(&ctx, &kernel, &local, &local);
        assert_eq!(got[1] as usize, count, "count {count}: local {local:?}");
    }
    let none: [usize; 3] = kernel
        .sub_group_info(
            ctx.device,
            CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
            &[max_sg + 1],
        )
        .unwrap();
    assert_eq!(none, [0; 3], "more sub-groups than any work-group has");
}

/// Each sub-group writes its slice of a `__local` array, passes a sub-group barrier
/// and reads it back reversed: the read sees every other work-item's write.
fn check_reversal(ctx: &DeviceContext, kernel: &Kernel, global: &[usize], local: &[usize]) {
    let n: usize = global.iter().product();
    let input: Vec<i32> = (0..n as i32).map(|i| i * 7 - 1000).collect();
    let a = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<i32>(n);
    let w = ctx.buffer_zeroed::<u32>(1);
    kernel.arg_buffer(0, &a).arg_buffer(1, &o).arg_buffer(2, &w);
    ctx.run(kernel, global, Some(local));
    let got: Vec<i32> = ctx.read(&o, n);
    let max = ctx.read::<u32>(&w, 1)[0] as usize;
    let its = items(global, local);
    // The global index of each (group, linear local id).
    let mut at = std::collections::HashMap::new();
    for (i, it) in its.iter().enumerate() {
        at.insert((it.group, it.local_linear), i);
    }
    for (i, it) in its.iter().enumerate() {
        let sg = it.local_linear / max;
        let size = max.min(it.group_items - sg * max);
        let lane = it.local_linear % max;
        let partner = at[&(it.group, sg * max + size - 1 - lane)];
        assert_eq!(
            got[i], input[partner],
            "global {global:?} local {local:?} item {i}"
        );
    }
}

const REVERSE_SRC: &str = r#"
    kernel void k(global const int* in, global int* out, global uint* w) {
        local int tmp[256];
        size_t g = get_global_linear_id();
        uint l = get_local_linear_id();
        uint base = get_sub_group_id() * get_max_sub_group_size();
        uint lane = get_sub_group_local_id();
        if (g == 0) w[0] = get_max_sub_group_size();
        tmp[l] = in[g];
        BARRIER;
        out[g] = tmp[base + get_sub_group_size() - 1 - lane];
    }"#;

#[test]
fn sub_group_barrier_orders_local_memory() {
    let ctx = DeviceContext::new();
    if !sub_groups(&ctx) || !testing_cranecl() {
        // The partner computation assumes the linear sub-group mapping.
        return;
    }
    for barrier in [
        "sub_group_barrier(CLK_LOCAL_MEM_FENCE)",
        "sub_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_sub_group)",
        "sub_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE, memory_scope_work_group)",
    ] {
        let src = REVERSE_SRC.replace("BARRIER", barrier);
        let kernel = ctx.kernel(&src, OPTS, "k");
        check_reversal(&ctx, &kernel, &[37 * 3 + 5], &[37]);
        check_reversal(&ctx, &kernel, &[64], &[64]);
        check_reversal(&ctx, &kernel, &[12, 7], &[5, 3]);
        check_reversal(&ctx, &kernel, &[7, 5, 4], &[3, 2, 4]);
    }
}

/// The CTS shape: only sub-group 0 passes the barrier (it is in a branch that is
/// uniform per sub-group but not per work-group), so it must not act as a
/// work-group barrier.
const BRANCH_SRC: &str = r#"
    kernel void k(global const int* in, global int* out) {
        local int tmp[256];
        size_t g = get_global_id(0);
        uint lane = get_sub_group_local_id();
        if (get_sub_group_id() == 0) {
            tmp[lane] = in[g];
            BARRIER;
            out[g] = tmp[get_sub_group_size() - 1 - lane];
        } else {
            out[g] = -in[g];
        }
    }"#;

fn check_branch(ctx: &DeviceContext, kernel: &Kernel) {
    for (n, local) in [(200usize, 100usize), (90, 20), (7, 7)] {
        let input: Vec<i32> = (0..n as i32).map(|i| 3 * i + 1).collect();
        let a = ctx.buffer_from(&input);
        let o = ctx.buffer_zeroed::<i32>(n);
        kernel.arg_buffer(0, &a).arg_buffer(1, &o);
        ctx.run(kernel, &[n], Some(&[local]));
        let got: Vec<i32> = ctx.read(&o, n);
        let w: usize = kernel
            .sub_group_info(
                ctx.device,
                CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                &[local],
            )
            .unwrap();
        for i in 0..n {
            let l = i % local;
            let size = w.min(local);
            let want = if l < w {
                input[i - l + size - 1 - l]
            } else {
                -input[i]
            };
            assert_eq!(got[i], want, "n {n} local {local} item {i}");
        }
    }
}

#[test]
fn sub_group_barrier_in_a_sub_group_uniform_branch() {
    let ctx = DeviceContext::new();
    if !sub_groups(&ctx) || !testing_cranecl() {
        return;
    }
    let src = BRANCH_SRC.replace("BARRIER", "sub_group_barrier(CLK_LOCAL_MEM_FENCE)");
    check_branch(&ctx, &ctx.kernel(&src, OPTS, "k"));
}

#[test]
fn control_barrier_with_subgroup_scope() {
    let ctx = DeviceContext::new();
    if !sub_groups(&ctx) || !testing_cranecl() || !ctx.supports_spirv() {
        return;
    }
    // clang emits sub_group_barrier as a call: make it OpControlBarrier Subgroup
    // Subgroup AcquireRelease|WorkgroupMemory (0x108).
    let src = BRANCH_SRC.replace("BARRIER", "sub_group_barrier(CLK_LOCAL_MEM_FENCE)");
    let Some(il) = edited_module(&src, |text| {
        let text = insert_after(
            text,
            "= OpTypeInt 32 0",
            "%sg_scope = OpConstant %uint 3\n%sg_sem = OpConstant %uint 264",
        );
        let lines: Vec<String> = text
            .lines()
            .map(|l| {
                if l.contains("OpFunctionCall") && l.contains("sub_group_barrier") {
                    "OpControlBarrier %sg_scope %sg_scope %sg_sem".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect();
        assert!(lines
            .iter()
            .any(|l| l.contains("OpControlBarrier %sg_scope")));
        lines.join("\n")
    }) else {
        return;
    };
    let program = ctx.try_program_from_il(&il).unwrap();
    let program = ctx
        .try_build_program(program, "")
        .unwrap_or_else(|f| panic!("{f}"));
    check_branch(&ctx, &program.kernel("k"));
}

#[test]
fn subgroups_per_workgroup_execution_mode() {
    let ctx = DeviceContext::new();
    if !sub_groups(&ctx) || !ctx.supports_spirv() {
        return;
    }
    // No OpenCL C attribute for it: the mode goes into clang's module.
    let src = IDS_SRC;
    let plain = ctx.kernel(src, OPTS, "k");
    let none: usize = plain
        .sub_group_info(ctx.device, CL_KERNEL_COMPILE_NUM_SUB_GROUPS, &[])
        .unwrap();
    assert_eq!(none, 0, "a kernel without the mode");
    for (mode, n) in [
        ("OpExecutionMode F SubgroupsPerWorkgroup 3", 3usize),
        ("OpExecutionModeId F SubgroupsPerWorkgroupId %nsg", 2),
    ] {
        let Some(il) = edited_module(src, |text| {
            let ep = text
                .lines()
                .find(|l| l.contains("OpEntryPoint Kernel"))
                .expect("entry point");
            let f = ep.split_whitespace().nth(2).expect("entry function");
            let text = text.replace(
                "OpCapability Kernel",
                "OpCapability Kernel\nOpCapability SubgroupDispatch",
            );
            let text = insert_after(&text, ep, &mode.replace(" F ", &format!(" {f} ")));
            insert_after(&text, "= OpTypeInt 32 0", "%nsg = OpConstant %uint 2")
        }) else {
            return;
        };
        let program = ctx.try_program_from_il(&il).unwrap();
        let program = ctx
            .try_build_program(program, "")
            .unwrap_or_else(|f| panic!("{f}"));
        let k = program.kernel("k");
        let compiled: usize = k
            .sub_group_info(ctx.device, CL_KERNEL_COMPILE_NUM_SUB_GROUPS, &[])
            .unwrap();
        assert_eq!(compiled, n, "{mode}");
        let max_sg: usize = k
            .sub_group_info(ctx.device, CL_KERNEL_MAX_NUM_SUB_GROUPS, &[])
            .unwrap();
        assert_eq!(max_sg, n, "{mode}: CL_KERNEL_MAX_NUM_SUB_GROUPS");
        let local: [usize; 3] = k
            .sub_group_info(ctx.device, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, &[n])
            .unwrap();
        let got = run_ids(&ctx, &k, &local, &local);
        assert_eq!(got[1] as usize, n, "{mode}: run at {local:?}");
        let other: [usize; 3] = k
            .sub_group_info(
                ctx.device,
                CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                &[n + 1],
            )
            .unwrap();
        assert_eq!(other, [0; 3], "{mode}: another count");
        let w: usize = k
            .sub_group_info(
                ctx.device,
                CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                &[n * 64],
            )
            .unwrap();
        // Any size giving n sub-groups runs; another count is refused.
        for l in [n * w, (n - 1) * w + 1] {
            let got = run_ids(&ctx, &k, &[l * 3], &[l]);
            assert!(
                got.chunks(6).all(|r| r[1] as usize == n),
                "{mode}: local {l}"
            );
        }
        for l in [(n - 1) * w, n * w + 1] {
            let out = ctx.buffer_zeroed::<u32>(l * 6);
            k.arg_buffer(0, &out);
            let err = ctx.try_enqueue(&k, None, &[l], Some(&[l]));
            assert_eq!(
                err.err().map(|e| e.code),
                Some(CL_INVALID_WORK_GROUP_SIZE),
                "{mode}: local {l}"
            );
        }
        // Without a local size the driver picks one with n sub-groups.
        let global = n * w * 4;
        let out = ctx.buffer_zeroed::<u32>(global * 6);
        k.arg_buffer(0, &out);
        ctx.run(&k, &[global], None);
        let got: Vec<u32> = ctx.read(&out, global * 6);
        assert!(
            got.chunks(6).all(|r| r[1] as usize == n),
            "{mode}: chosen local size"
        );
        let wg: usize = k
            .work_group_info(ctx.device, CL_KERNEL_WORK_GROUP_SIZE)
            .unwrap();
        assert!(
            wg > (n - 1) * w && wg <= n * w,
            "{mode}: CL_KERNEL_WORK_GROUP_SIZE {wg}"
        );
    }
}

/// ND-ranges the collective tests cover: (global, local); 1D, 2D and 3D, uniform
/// and ragged (the last group in some dimension smaller), partial sub-groups.
const SHAPES: [(&[usize], &[usize]); 7] = [
    (&[64], &[64]),
    (&[37 * 2 + 11], &[37]),
    (&[3], &[3]),
    (&[10, 6], &[5, 3]),
    (&[13, 7], &[5, 3]),
    (&[6, 4, 8], &[3, 2, 4]),
    (&[7, 5, 4], &[3, 2, 4]),
];

/// A work-group collective's host reference: for each work-group, its items in
/// linear local id order.
fn by_group(its: &[Item]) -> Vec<Vec<usize>> {
    let groups = its.iter().map(|i| i.group).max().map_or(0, |g| g + 1);
    let mut out = vec![Vec::new(); groups];
    for (i, it) in its.iter().enumerate() {
        out[it.group].push((it.local_linear, i));
    }
    out.into_iter()
        .map(|mut g: Vec<(usize, usize)>| {
            g.sort();
            g.into_iter().map(|(_, i)| i).collect()
        })
        .collect()
}

/// One element type of the collectives: its OpenCL C name, how a host value (i64
/// bits or f64) enters and leaves the kernel, and the host arithmetic.
#[derive(Clone, Copy)]
struct Ty {
    name: &'static str,
    float: bool,
    /// Integer width in bits and signedness (integers only).
    bits: u32,
    signed: bool,
}

const TYPES: [Ty; 7] = [
    Ty {
        name: "int",
        float: false,
        bits: 32,
        signed: true,
    },
    Ty {
        name: "uint",
        float: false,
        bits: 32,
        signed: false,
    },
    Ty {
        name: "long",
        float: false,
        bits: 64,
        signed: true,
    },
    Ty {
        name: "ulong",
        float: false,
        bits: 64,
        signed: false,
    },
    Ty {
        name: "float",
        float: true,
        bits: 32,
        signed: true,
    },
    Ty {
        name: "double",
        float: true,
        bits: 64,
        signed: true,
    },
    Ty {
        name: "half",
        float: true,
        bits: 16,
        signed: true,
    },
];

impl Ty {
    /// An integer's bits as the kernel returns them through `long`: the value in
    /// the type, zero- or sign-extended.
    fn norm(&self, x: i64) -> i64 {
        if self.bits == 64 {
            return x;
        }
        let sh = 64 - self.bits;
        if self.signed {
            (x << sh) >> sh
        } else {
            ((x as u64) << sh >> sh) as i64
        }
    }

    fn combine_int(&self, op: &str, a: i64, b: i64) -> i64 {
        let r = match op {
            "add" => a.wrapping_add(b),
            "min" if self.signed => a.min(b),
            "max" if self.signed => a.max(b),
            "min" => (a as u64).min(b as u64) as i64,
            _ => (a as u64).max(b as u64) as i64,
        };
        self.norm(r)
    }

    fn identity_int(&self, op: &str) -> i64 {
        match (op, self.signed) {
            ("add", _) => 0,
            ("min", true) => self.norm(i64::MAX >> (64 - self.bits)),
            ("min", false) => self.norm(-1),
            ("max", true) => i64::MIN >> (64 - self.bits),
            _ => 0,
        }
    }

    fn identity_float(&self, op: &str) -> f64 {
        match op {
            "add" => 0.0,
            "min" => f64::INFINITY,
            _ => f64::NEG_INFINITY,
        }
    }
}

const OPS: [&str; 3] = ["add", "min", "max"];
const MODES: [&str; 3] = ["reduce", "scan_inclusive", "scan_exclusive"];

fn collective_source(t: Ty) -> String {
    let (io, ext) = match (t.float, t.name) {
        (false, _) => ("long", ""),
        (true, "half") => ("double", "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"),
        (true, _) => ("double", ""),
    };
    let mut body = String::new();
    for (m, mode) in MODES.iter().enumerate() {
        for (o, op) in OPS.iter().enumerate() {
            body += &format!(
                "    out[(size_t){slot} * n + g] = ({io})work_group_{mode}_{op}(v);\n",
                slot = m * 3 + o
            );
        }
    }
    format!(
        "{ext}kernel void k(global const {io}* in, global {io}* out) {{\n\
         \x20   size_t g = get_global_linear_id();\n\
         \x20   size_t n = get_global_size(0) * get_global_size(1) * get_global_size(2);\n\
         \x20   {t} v = ({t})in[g];\n{body}}}\n",
        t = t.name
    )
}

#[test]
fn work_group_reduce_and_scans_on_every_type() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_khr_fp16") || testing_cranecl(),
        "cl_khr_fp16",
    ) {
        return;
    }
    // Every type at the default width; int, float and double also at the other
    // sub-group widths (the sub-group count per group changes).
    let mut cases: Vec<(Ty, String)> = TYPES.iter().map(|t| (*t, String::new())).collect();
    if ctx.has_extension("cl_intel_required_subgroup_size") {
        for w in ctx.sub_group_sizes() {
            for t in [TYPES[0], TYPES[4], TYPES[5]] {
                let attr = format!("__attribute__((intel_reqd_sub_group_size({w}))) kernel void");
                cases.push((t, attr));
            }
        }
    }
    for (t, attr) in cases {
        let mut src = collective_source(t);
        if !attr.is_empty() {
            src = src.replace("kernel void", &attr);
        }
        let kernel = ctx.kernel(&src, OPTS, "k");
        for (global, local) in SHAPES {
            let n: usize = global.iter().product();
            let its = items(global, local);
            let groups = by_group(&its);
            let mut rng = TestRng::new(n as u64 * 131 + t.bits as u64);
            let seen = |slot: usize, i: usize| {
                format!(
                    "{} {} {slot} {global:?} {local:?} item {i} {attr}",
                    t.name,
                    MODES[slot / 3]
                )
            };
            if t.float {
                // Multiples of 1/4 below 16 in magnitude: every sum is exact in
                // every order, also in half.
                let xs: Vec<f64> = rng.vec(n, |r| ((r.next_u32() % 129) as f64 - 64.0) / 4.0);
                let a = ctx.buffer_from(&xs);
                let o = ctx.buffer_zeroed::<f64>(9 * n);
                kernel.arg_buffer(0, &a).arg_buffer(1, &o);
                ctx.run(&kernel, global, Some(local));
                let got: Vec<f64> = ctx.read(&o, 9 * n);
                for (oi, op) in OPS.iter().enumerate() {
                    let f = |a: f64, b: f64| match *op {
                        "add" => a + b,
                        "min" => a.min(b),
                        _ => a.max(b),
                    };
                    for grp in &groups {
                        let total = grp.iter().fold(t.identity_float(op), |a, &i| f(a, xs[i]));
                        let mut acc = t.identity_float(op);
                        for &i in grp {
                            let excl = acc;
                            acc = f(acc, xs[i]);
                            for (m, want) in [total, acc, excl].into_iter().enumerate() {
                                let slot = m * 3 + oi;
                                let g = got[slot * n + i];
                                // half has no infinity problem: the identities of
                                // min/max are +-inf in every float type.
                                assert!(
                                    g == want,
                                    "{}: got {g}, want {want} ({op})",
                                    seen(slot, i)
                                );
                            }
                        }
                    }
                }
            } else {
                let xs: Vec<i64> = rng.vec(n, |r| {
                    let v = r.next_u64() as i64;
                    // Some small values so that sums and orders mix signs.
                    t.norm(if r.next_u32() % 2 == 0 { v } else { v % 1000 })
                });
                let a = ctx.buffer_from(&xs);
                let o = ctx.buffer_zeroed::<i64>(9 * n);
                kernel.arg_buffer(0, &a).arg_buffer(1, &o);
                ctx.run(&kernel, global, Some(local));
                let got: Vec<i64> = ctx.read(&o, 9 * n);
                for (oi, op) in OPS.iter().enumerate() {
                    for grp in &groups {
                        let total = grp
                            .iter()
                            .fold(t.identity_int(op), |a, &i| t.combine_int(op, a, xs[i]));
                        let mut acc = t.identity_int(op);
                        for &i in grp {
                            let excl = acc;
                            acc = t.combine_int(op, acc, xs[i]);
                            for (m, want) in [total, acc, excl].into_iter().enumerate() {
                                let slot = m * 3 + oi;
                                let g = got[slot * n + i];
                                assert_eq!(g, want, "{} ({op})", seen(slot, i));
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn work_group_all_any_and_broadcast_in_every_dimension() {
    let ctx = DeviceContext::new();
    let src = r#"
        #pragma OPENCL EXTENSION cl_khr_fp16 : enable
        // work_group_broadcast by the ND-range's dimension (uniform in a group).
        #define WGB(v, a, b, c) (get_work_dim() == 1 ? work_group_broadcast(v, a) \
            : get_work_dim() == 2 ? work_group_broadcast(v, a, b) : work_group_broadcast(v, a, b, c))
        kernel void k(global const int* in, global long* out) {
            size_t g = get_global_linear_id();
            size_t n = get_global_size(0) * get_global_size(1) * get_global_size(2);
            int x = in[g];
            out[g] = work_group_all(x != 0);
            out[n + g] = work_group_any(x == 7);
            // The last work-item of the group in each dimension, and one inside.
            size_t lx = get_local_size(0) - 1, ly = get_local_size(1) - 1, lz = get_local_size(2) - 1;
            if (get_work_dim() == 1) {
                out[2 * n + g] = work_group_broadcast((long)x * 3, lx);
                out[3 * n + g] = work_group_broadcast(x, lx / 2);
            } else if (get_work_dim() == 2) {
                out[2 * n + g] = work_group_broadcast((long)x * 3, lx, ly);
                out[3 * n + g] = work_group_broadcast(x, lx / 2, ly / 2);
            } else {
                out[2 * n + g] = work_group_broadcast((long)x * 3, lx, ly, lz);
                out[3 * n + g] = work_group_broadcast(x, lx / 2, ly / 2, lz / 2);
            }
            // The first work-item, by the form of the ND-range's dimension.
            float f = (float)x;
            size_t z = 0;
            float b = get_work_dim() == 1 ? work_group_broadcast(f, z)
                : get_work_dim() == 2 ? work_group_broadcast(f, z, z)
                : work_group_broadcast(f, z, z, z);
            out[4 * n + g] = as_uint(b);
            // The other types: uint and half from the last item, ulong from the
            // middle one, double from the first.
            out[5 * n + g] = WGB((uint)x * 5u + 1u, lx, ly, lz);
            out[6 * n + g] = (long)WGB(((ulong)x << 40) | (ulong)(x + 3), lx / 2, ly / 2, lz / 2);
            out[7 * n + g] = as_long(WGB((double)x * 0.25, z, z, z));
            out[8 * n + g] = as_ushort(WGB((half)x, lx, ly, lz));
        }"#;
    let kernel = ctx.kernel(src, OPTS, "k");
    for (global, local) in SHAPES {
        let n: usize = global.iter().product();
        let its = items(global, local);
        let groups = by_group(&its);
        for round in 0..3u64 {
            let mut rng = TestRng::new(n as u64 * 7 + round);
            // Round 0: all non-zero, no 7; round 1: a zero and a 7 in some groups;
            // round 2: random small values.
            let mut xs: Vec<i32> = rng.vec(n, |r| {
                (r.next_u32() % 5) as i32 + 1 + 7 * (round == 2) as i32
            });
            if round == 1 {
                for (gi, grp) in groups.iter().enumerate() {
                    if gi % 2 == 0 {
                        xs[grp[grp.len() - 1]] = 0;
                        xs[grp[0]] = 7;
                    }
                }
            }
            if round == 2 {
                for x in xs.iter_mut() {
                    *x %= 9;
                }
            }
            let a = ctx.buffer_from(&xs);
            let o = ctx.buffer_zeroed::<i64>(9 * n);
            kernel.arg_buffer(0, &a).arg_buffer(1, &o);
            ctx.run(&kernel, global, Some(local));
            let got: Vec<i64> = ctx.read(&o, 9 * n);
            for grp in &groups {
                let all = grp.iter().all(|&i| xs[i] != 0);
                let any = grp.iter().any(|&i| xs[i] == 7);
                // The group's real size per dimension, from its item count and shape.
                let first = its[grp[0]];
                let real = real_local(global, local, grp[0]);
                let lin = |ids: [usize; 3]| ids[0] + real[0] * (ids[1] + real[1] * ids[2]);
                let last = grp[lin([real[0] - 1, real[1] - 1, real[2] - 1])];
                let mid = grp[lin([(real[0] - 1) / 2, (real[1] - 1) / 2, (real[2] - 1) / 2])];
                assert_eq!(first.local_linear, 0);
                for &i in grp {
                    let what = format!("{global:?} {local:?} round {round} item {i}");
                    assert_eq!(got[i] != 0, all, "work_group_all, {what}");
                    assert_eq!(got[n + i] != 0, any, "work_group_any, {what}");
                    assert_eq!(
                        got[2 * n + i],
                        xs[last] as i64 * 3,
                        "broadcast last, {what}"
                    );
                    assert_eq!(got[3 * n + i], xs[mid] as i64, "broadcast middle, {what}");
                    assert_eq!(
                        got[4 * n + i] as u32,
                        (xs[grp[0]] as f32).to_bits(),
                        "broadcast float, {what}"
                    );
                    let (xl, xm, xf) = (xs[last] as u64, xs[mid] as u64, xs[grp[0]]);
                    let want = [
                        (xl as u32 * 5 + 1) as i64,
                        ((xm << 40) | (xm + 3)) as i64,
                        (f64::from(xf) * 0.25).to_bits() as i64,
                        i64::from(small_half_bits(xl as u16)),
                    ];
                    assert_eq!(
                        [got[5 * n + i], got[6 * n + i], got[7 * n + i], got[8 * n + i]],
                        want,
                        "broadcast uint (last), ulong (middle), double (first), half (last), {what}"
                    );
                }
            }
        }
    }
}

/// binary16 bits of a small non-negative integer (exact in half).
fn small_half_bits(v: u16) -> u16 {
    if v == 0 {
        return 0;
    }
    let e = 15 - v.leading_zeros() as u16;
    ((e + 15) << 10) | ((v << (10 - e)) & 0x3ff)
}

/// The real local size of the work-group holding global linear item `i`.
fn real_local(global: &[usize], local: &[usize], i: usize) -> [usize; 3] {
    let mut g = [1usize; 3];
    let mut l = [1usize; 3];
    g[..global.len()].copy_from_slice(global);
    l[..local.len()].copy_from_slice(local);
    let id = [i % g[0], (i / g[0]) % g[1], i / (g[0] * g[1])];
    let mut r = [1usize; 3];
    for d in 0..3 {
        let gid = id[d] / l[d];
        r[d] = l[d].min(g[d] - gid * l[d]);
    }
    r
}

#[test]
fn work_group_scan_and_reduce_in_a_loop() {
    // Collectives met several times by every work-item: each meeting combines only
    // its own values.
    let ctx = DeviceContext::new();
    let src = r#"
        kernel void k(global const int* in, global int* out, int rounds) {
            size_t g = get_global_linear_id();
            size_t n = get_global_size(0) * get_global_size(1);
            int acc = 0;
            for (int r = 0; r < rounds; r++) {
                int x = in[g] * (r + 1);
                int s = work_group_scan_inclusive_add(x);
                int e = work_group_scan_exclusive_max(x);
                int t = work_group_reduce_min(x);
                acc = acc * 3 + s + e * 5 + t * 7;
            }
            out[g] = acc;
        }"#;
    let kernel = ctx.kernel(src, OPTS, "k");
    for (global, local) in [(&[50usize][..], &[20usize][..]), (&[10, 6], &[5, 3])] {
        let n: usize = global.iter().product();
        let its = items(global, local);
        let groups = by_group(&its);
        let mut rng = TestRng::new(n as u64);
        let xs: Vec<i32> = rng.vec(n, |r| (r.next_u32() % 200) as i32 - 100);
        let rounds = 4;
        let a = ctx.buffer_from(&xs);
        let o = ctx.buffer_zeroed::<i32>(n);
        kernel.arg_buffer(0, &a).arg_buffer(1, &o).arg(2, rounds);
        ctx.run(&kernel, global, Some(local));
        let got: Vec<i32> = ctx.read(&o, n);
        let mut want = vec![0i32; n];
        for grp in &groups {
            for r in 0..rounds {
                let x = |i: usize| xs[i].wrapping_mul(r + 1);
                let t = grp.iter().map(|&i| x(i)).min().unwrap_or(i32::MAX);
                let (mut s, mut e) = (0i32, i32::MIN);
                for &i in grp {
                    let ex = e;
                    s = s.wrapping_add(x(i));
                    e = e.max(x(i));
                    want[i] = want[i]
                        .wrapping_mul(3)
                        .wrapping_add(s)
                        .wrapping_add(ex.wrapping_mul(5))
                        .wrapping_add(t.wrapping_mul(7));
                }
            }
        }
        assert_eq!(got, want, "{global:?} {local:?}");
    }
}

/// Sub-groups of a work-group hand a token down from the last to the first through
/// `__local` atomics: each spins until its successor has passed it on, so this
/// terminates only with independent forward progress. Collectives after the relay
/// still combine every sub-group's part in order.
const RELAY_SRC: &str = r#"
    kernel void relay(global int* out, global int* order) {
        local atomic_int turn;
        local atomic_int counter;
        int sg = (int)get_sub_group_id(), nsg = (int)get_num_sub_groups();
        if (get_local_linear_id() == 0) {
            atomic_init(&turn, nsg - 1);
            atomic_init(&counter, 0);
        }
        work_group_barrier(CLK_LOCAL_MEM_FENCE);
        if (get_sub_group_local_id() == 0) {
            while (atomic_load(&turn) != sg)
                ;
            int pos = atomic_fetch_add(&counter, 1);
            order[get_group_id(0) * get_enqueued_num_sub_groups() + pos] = sg;
            atomic_store(&turn, sg - 1);
        }
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        int s = work_group_reduce_add((int)get_local_linear_id());
        int e = work_group_scan_exclusive_add(2);
        out[get_global_id(0)] = s * 10000 + e;
    }"#;

#[test]
fn sub_groups_make_independent_forward_progress() {
    let ctx = DeviceContext::new();
    if !sub_groups(&ctx) {
        return;
    }
    let ifp: u32 = device_info(
        ctx.device,
        opencl_sys::CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
    )
    .unwrap();
    if !require(ifp != 0, "sub-group independent forward progress") {
        return;
    }
    for opts in [OPTS, "-cl-std=CL3.0 -cl-opt-disable"] {
        relay(&ctx, &ctx.kernel(RELAY_SRC, opts, "relay"));
    }
}

fn relay(ctx: &DeviceContext, kernel: &Kernel) {
    for (n, local) in [(200usize, 40usize), (96, 96), (37 * 3, 37), (250, 250)] {
        let w: usize = kernel
            .sub_group_info(
                ctx.device,
                CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                &[local],
            )
            .unwrap();
        let nsg = local.div_ceil(w);
        let groups = n / local;
        let out = ctx.buffer_zeroed::<i32>(n);
        let order = ctx.buffer_zeroed::<i32>(groups * nsg);
        kernel.arg_buffer(0, &out).arg_buffer(1, &order);
        ctx.run(kernel, &[n], Some(&[local]));
        let got: Vec<i32> = ctx.read(&out, n);
        let want: Vec<i32> = (0..n)
            .map(|i| (local * (local - 1) / 2) as i32 * 10000 + 2 * (i % local) as i32)
            .collect();
        assert_eq!(got, want, "n {n} local {local}");
        let seen: Vec<i32> = ctx.read(&order, groups * nsg);
        for g in 0..groups {
            let want: Vec<i32> = (0..nsg as i32).rev().collect();
            assert_eq!(&seen[g * nsg..(g + 1) * nsg], &want[..], "group {g} order");
        }
    }
}

#[test]
fn compare_exchange_loops_without_barriers() {
    // A float sum through a compare-exchange loop on one global word: its exit reads
    // an atomic (so it may yield) in a kernel without any barrier.
    let ctx = DeviceContext::new();
    let src = r#"
        kernel void k(global const float* in, volatile global uint* sum) {
            float x = in[get_global_id(0)];
            uint old = atomic_load_explicit((volatile global atomic_uint*)sum, memory_order_relaxed);
            for (;;) {
                uint next = as_uint(as_float(old) + x);
                if (atomic_compare_exchange_strong((volatile global atomic_uint*)sum, &old, next))
                    break;
            }
        }"#;
    let kernel = ctx.kernel(src, OPTS, "k");
    let n = 4096;
    let xs: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let a = ctx.buffer_from(&xs);
    let s = ctx.buffer_zeroed::<u32>(1);
    kernel.arg_buffer(0, &a).arg_buffer(1, &s);
    ctx.run(&kernel, &[n], Some(&[64]));
    let got = f32::from_bits(ctx.read::<u32>(&s, 1)[0]);
    let want: f32 = xs.iter().sum();
    assert_eq!(got, want);
}

#[test]
fn divergent_compare_exchange_loop_before_a_barrier() {
    // The lanes of a sub-group leave the loop at different iterations (each retry
    // may yield): the lanes that left early are still active after the barrier.
    let ctx = DeviceContext::new();
    let src = r#"
        kernel void k(global int* res) {
            local atomic_int c;
            size_t lid = get_local_id(0);
            if (lid == 0) atomic_init(&c, 0);
            barrier(CLK_LOCAL_MEM_FENCE);
            int e = atomic_load(&c);
            while (!atomic_compare_exchange_weak(&c, &e, e + 3)) {}
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0) res[get_group_id(0)] = atomic_load(&c);
            if (lid == get_local_size(0) - 1) res[get_num_groups(0) + get_group_id(0)] = 1;
        }"#;
    let kernel = ctx.kernel(src, OPTS, "k");
    for (n, local) in [(111usize, 37usize), (64, 64), (16, 16)] {
        let groups = n / local;
        let out = ctx.buffer_zeroed::<i32>(2 * groups);
        kernel.arg_buffer(0, &out);
        ctx.run(&kernel, &[n], Some(&[local]));
        let got: Vec<i32> = ctx.read(&out, 2 * groups);
        let mut want = vec![3 * local as i32; groups];
        want.extend(vec![1; groups]);
        assert_eq!(got, want, "n {n} local {local}");
    }
}

#[test]
fn lanes_leave_a_waiting_loop_at_different_times() {
    // Sub-group 0 waits, lane by lane, for counts sub-group 1 produces: lane 0 leaves
    // at once, the others only after yielding; all are active after the barrier.
    let ctx = DeviceContext::new();
    if !sub_groups(&ctx) {
        return;
    }
    let ifp: u32 = device_info(
        ctx.device,
        opencl_sys::CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
    )
    .unwrap();
    if !require(ifp != 0, "sub-group independent forward progress") {
        return;
    }
    let src = r#"
        kernel void k(global int* res) {
            local atomic_int c;
            uint lane = get_sub_group_local_id(), sg = get_sub_group_id();
            if (get_local_id(0) == 0) atomic_init(&c, 0);
            barrier(CLK_LOCAL_MEM_FENCE);
            int spins = 0;
            if (sg == 0) {
                while (atomic_load(&c) < (int)lane * 100) spins++;
            } else if (sg == 1 && lane == 0) {
                for (int i = 0; i < 10000; i++) atomic_fetch_add(&c, 1);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            res[get_global_id(0)] = (spins > 0) * 1000 + (int)lane + 1;
        }"#;
    let kernel = ctx.kernel(src, OPTS, "k");
    let local: usize = 2 * kernel
        .sub_group_info::<usize>(ctx.device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[64])
        .unwrap();
    let out = ctx.buffer_zeroed::<i32>(local);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[local], Some(&[local]));
    let got: Vec<i32> = ctx.read(&out, local);
    let w = local / 2;
    for (i, g) in got.iter().enumerate() {
        let lane = (i % w) as i32 + 1;
        // Lane 0 of sub-group 0 never spins; the others of sub-group 0 may.
        assert_eq!(g % 1000, lane, "item {i}: {got:?}");
        if i == 0 || i >= w {
            assert_eq!(*g, lane, "item {i}: {got:?}");
        }
    }
}

/// Sub-group functions in 1D, 2D and 3D work-groups (ragged ones included) at every
/// width. Which work-items form a sub-group is the implementation's choice: the host
/// groups them by the ids the kernel reports, checks that these partition each
/// work-group into sub-groups of at most the width with lanes 0..size, and compares
/// the collectives of each. cranecl forms sub-groups of `W` consecutive linear local
/// ids (the last one of a group partial), which is checked on cranecl too.
#[test]
fn sub_group_functions_in_every_dimension() {
    let ctx = DeviceContext::new();
    let widths: Vec<usize> = if ctx.has_extension("cl_intel_required_subgroup_size") {
        ctx.sub_group_sizes()
    } else {
        Vec::new()
    };
    // Without a required size, the device's own width (asked through the kernel).
    let mut variants: Vec<Option<usize>> = vec![None];
    variants.extend(widths.iter().map(|&w| Some(w)));
    for w in variants {
        let attr = w.map_or(String::new(), |w| {
            format!("__attribute__((intel_reqd_sub_group_size({w})))")
        });
        let src = format!(
            r#"{attr}
            kernel void k(global const int* in, global int* out) {{
                size_t g = get_global_linear_id();
                size_t n = get_global_size(0) * get_global_size(1) * get_global_size(2);
                int x = in[g];
                out[g] = sub_group_reduce_add(x);
                out[n + g] = sub_group_scan_inclusive_max(x);
                out[2 * n + g] = sub_group_scan_exclusive_add(x);
                out[3 * n + g] = sub_group_broadcast(x, 0);
                out[4 * n + g] = (int)(get_sub_group_id() * 1000 + get_sub_group_local_id());
                out[5 * n + g] = sub_group_any(x == 7) * 2 + sub_group_all(x > 0);
                out[6 * n + g] = (int)get_max_sub_group_size();
                out[7 * n + g] = (int)get_sub_group_size();
            }}"#
        );
        let kernel = ctx.kernel(&src, OPTS, "k");
        for (global, local) in SHAPES {
            let n: usize = global.iter().product();
            let its = items(global, local);
            let groups = by_group(&its);
            let mut rng = TestRng::new(n as u64 * 13 + w.unwrap_or(0) as u64);
            let xs: Vec<i32> = rng.vec(n, |r| (r.next_u32() % 17) as i32 - 4);
            let a = ctx.buffer_from(&xs);
            let o = ctx.buffer_zeroed::<i32>(8 * n);
            kernel.arg_buffer(0, &a).arg_buffer(1, &o);
            ctx.run(&kernel, global, Some(local));
            let got: Vec<i32> = ctx.read(&o, 8 * n);
            let width = got[6 * n] as usize;
            if let Some(w) = w {
                assert_eq!(width, w, "get_max_sub_group_size with a required size");
            }
            for grp in &groups {
                // The group's sub-groups as the kernel saw them, lanes in order.
                let mut sgs: Vec<Vec<(usize, usize)>> = Vec::new();
                for &i in grp {
                    let id = got[4 * n + i] as usize;
                    let (sg, lane) = (id / 1000, id % 1000);
                    if sgs.len() <= sg {
                        sgs.resize(sg + 1, Vec::new());
                    }
                    sgs[sg].push((lane, i));
                }
                for (sg, members) in sgs.iter_mut().enumerate() {
                    members.sort();
                    let what = format!("W={width} {global:?}/{local:?} sub-group {sg}");
                    let lanes: Vec<usize> = members.iter().map(|m| m.0).collect();
                    assert_eq!(
                        lanes,
                        (0..members.len()).collect::<Vec<_>>(),
                        "lanes, {what}"
                    );
                    assert!(members.len() <= width, "size, {what}");
                    let vals: Vec<i32> = members.iter().map(|&(_, i)| xs[i]).collect();
                    let sum: i32 = vals.iter().sum();
                    let any = vals.contains(&7) as i32;
                    let all = vals.iter().all(|&v| v > 0) as i32;
                    for (l, &(_, i)) in members.iter().enumerate() {
                        let want = [
                            sum,
                            *vals[..=l].iter().max().unwrap(),
                            vals[..l].iter().sum(),
                            vals[0],
                            any * 2 + all,
                            members.len() as i32,
                        ];
                        let have = [
                            got[i],
                            got[n + i],
                            got[2 * n + i],
                            got[3 * n + i],
                            got[5 * n + i],
                            got[7 * n + i],
                        ];
                        assert_eq!(
                            have, want,
                            "reduce, scan max, scan add, broadcast, any/all, size: {what} lane {l} item {i}"
                        );
                    }
                }
                if testing_cranecl() {
                    let linear: Vec<Vec<usize>> =
                        grp.chunks(width).map(<[usize]>::to_vec).collect();
                    let seen: Vec<Vec<usize>> = sgs
                        .iter()
                        .map(|m| m.iter().map(|&(_, i)| i).collect())
                        .collect();
                    assert_eq!(
                        seen, linear,
                        "cranecl: runs of W linear local ids, {global:?}/{local:?}"
                    );
                }
            }
        }
    }
}

/// `clGetKernelSubGroupInfo` refuses what the specification names: an invalid kernel
/// (`CL_INVALID_KERNEL`), a handle that is not a device (`CL_INVALID_DEVICE`), an unknown query, a result buffer too small, and an input
/// that is missing or not a whole number of `size_t` for the queries that take one
/// (`CL_INVALID_VALUE`); a null device is allowed when the program has one device.
#[test]
fn sub_group_info_errors() {
    let ctx = DeviceContext::new();
    if !sub_groups(&ctx) {
        return;
    }
    let kernel = ctx.kernel(
        "kernel void k(global int* p) { p[get_global_id(0)] = get_sub_group_size(); }",
        OPTS,
        "k",
    );
    let local = [64usize, 1];
    // One call with raw arguments: (code, bytes written or asked for).
    let call = |k: cranecl_conformance::sys::cl_kernel,
                dev: cranecl_conformance::sys::cl_device_id,
                param: u32,
                input: Option<&[u8]>,
                out_size: usize|
     -> (i32, usize) {
        let mut out = [0u8; 64];
        let mut ret = 0usize;
        let (isz, iptr) = input.map_or((0, std::ptr::null()), |i| (i.len(), i.as_ptr()));
        // SAFETY: every pointer is valid for the size passed with it.
        let code = unsafe {
            cranecl_conformance::sys::clGetKernelSubGroupInfo(
                k,
                dev,
                param,
                isz,
                iptr.cast(),
                out_size,
                if out_size == 0 {
                    std::ptr::null_mut()
                } else {
                    out.as_mut_ptr().cast()
                },
                &mut ret,
            )
        };
        (code, ret)
    };
    let word = std::mem::size_of::<usize>();
    let one = as_bytes(&local[..1]);
    let two = as_bytes(&local[..]);
    // Valid: 1D and 2D inputs, a null device with the program's one device.
    for (input, what) in [(one, "1D"), (two, "2D")] {
        let (code, ret) = call(
            kernel.raw(),
            ctx.device,
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
            Some(input),
            word,
        );
        assert_eq!((code, ret), (0, word), "{what} input");
    }
    let (code, _) = call(
        kernel.raw(),
        std::ptr::null_mut(),
        CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
        Some(one),
        word,
    );
    assert_eq!(code, 0, "null device, one device in the program");
    // Errors.
    let strict = testing_cranecl();
    let expect = |got: i32, want: i32, what: &str| {
        if strict {
            assert_eq!(got, want, "{what}: {}", error_name(got));
        } else {
            assert_ne!(got, 0, "{what}");
        }
    };
    for param in [
        CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
        CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
    ] {
        let (code, _) = call(kernel.raw(), ctx.device, param, None, word);
        expect(code, CL_INVALID_VALUE, &format!("{param:#x} without input"));
        let (code, _) = call(kernel.raw(), ctx.device, param, Some(&one[..3]), word);
        expect(
            code,
            CL_INVALID_VALUE,
            &format!("{param:#x} with 3 input bytes"),
        );
        let four = [0u8; 32];
        let (code, _) = call(kernel.raw(), ctx.device, param, Some(&four), word);
        expect(
            code,
            CL_INVALID_VALUE,
            &format!("{param:#x} with 4 dimensions"),
        );
        let (code, _) = call(kernel.raw(), ctx.device, param, Some(one), word - 1);
        expect(
            code,
            CL_INVALID_VALUE,
            &format!("{param:#x} with a short result"),
        );
    }
    let (code, _) = call(kernel.raw(), ctx.device, 0x7fff_0000, Some(one), word);
    expect(code, CL_INVALID_VALUE, "unknown query");
    let (code, _) = call(
        std::ptr::null_mut(),
        ctx.device,
        CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
        Some(one),
        word,
    );
    expect(code, CL_INVALID_KERNEL, "null kernel");
    // A handle of another kind (the context) where the device goes.
    let (code, _) = call(
        kernel.raw(),
        ctx.context.raw().cast(),
        CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
        Some(one),
        word,
    );
    expect(code, CL_INVALID_DEVICE, "a context handle as the device");
}
