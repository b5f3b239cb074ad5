//! Core SPIR-V instructions clang rarely emits but the OpenCL SPIR-V environment
//! allows, written as SPIR-V assembly: the carry/borrow/extended-multiply family,
//! structured merges with every control, OpUndef, OpVectorTimesScalar, OpPtrDiff,
//! OpCopyLogical, OpSizeOf, pointers to opaque types. Results are compared with
//! values computed on the host.

mod common;
use common::*;

/// Module header shared by the tests: capabilities, the global id, common types.
fn header(extra_caps: &str, entry: &str) -> String {
    format!(
        r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               {extra_caps}
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "{entry}" %gid
               OpDecorate %gid BuiltIn GlobalInvocationId
       %void = OpTypeVoid
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %float = OpTypeFloat 32
    %v3ulong = OpTypeVector %ulong 3
     %ptr_in = OpTypePointer Input %v3ulong
        %gid = OpVariable %ptr_in Input
         %pu = OpTypePointer CrossWorkgroup %uint
         %pl = OpTypePointer CrossWorkgroup %ulong
         %pf = OpTypePointer CrossWorkgroup %float
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
    %ulong_1 = OpConstant %ulong 1
"#
    )
}

#[test]
fn carry_borrow_and_extended_multiply() {
    let src = header("", "wide")
        + r#"
    %ulong_6 = OpConstant %ulong 6
    %ulong_3 = OpConstant %ulong 3
      %suu = OpTypeStruct %uint %uint
      %sll = OpTypeStruct %ulong %ulong
       %ft = OpTypeFunction %void %pu %pu %pu %pl %pl %pl
        %k = OpFunction %void None %ft
        %a = OpFunctionParameter %pu
        %b = OpFunctionParameter %pu
        %o = OpFunctionParameter %pu
       %la = OpFunctionParameter %pl
       %lb = OpFunctionParameter %pl
       %lo = OpFunctionParameter %pl
    %entry = OpLabel
       %g3 = OpLoad %v3ulong %gid
        %i = OpCompositeExtract %ulong %g3 0
       %pa = OpInBoundsPtrAccessChain %pu %a %i
       %pb = OpInBoundsPtrAccessChain %pu %b %i
        %x = OpLoad %uint %pa
        %y = OpLoad %uint %pb
      %add = OpIAddCarry %suu %x %y
      %sub = OpISubBorrow %suu %x %y
      %umu = OpUMulExtended %suu %x %y
      %smu = OpSMulExtended %suu %x %y
       %i6 = OpIMul %ulong %i %ulong_6
     %a_lo = OpCompositeExtract %uint %add 0
     %a_hi = OpCompositeExtract %uint %add 1
     %s_lo = OpCompositeExtract %uint %sub 0
     %s_hi = OpCompositeExtract %uint %sub 1
     %u_hi = OpCompositeExtract %uint %umu 1
     %m_hi = OpCompositeExtract %uint %smu 1
       %q0 = OpInBoundsPtrAccessChain %pu %o %i6
               OpStore %q0 %a_lo
       %q1 = OpInBoundsPtrAccessChain %pu %q0 %ulong_1
               OpStore %q1 %a_hi
       %q2 = OpInBoundsPtrAccessChain %pu %q1 %ulong_1
               OpStore %q2 %s_lo
       %q3 = OpInBoundsPtrAccessChain %pu %q2 %ulong_1
               OpStore %q3 %s_hi
       %q4 = OpInBoundsPtrAccessChain %pu %q3 %ulong_1
               OpStore %q4 %u_hi
       %q5 = OpInBoundsPtrAccessChain %pu %q4 %ulong_1
               OpStore %q5 %m_hi
      %pla = OpInBoundsPtrAccessChain %pl %la %i
      %plb = OpInBoundsPtrAccessChain %pl %lb %i
       %lx = OpLoad %ulong %pla
       %ly = OpLoad %ulong %plb
     %ladd = OpIAddCarry %sll %lx %ly
     %lumu = OpUMulExtended %sll %lx %ly
     %lsmu = OpSMulExtended %sll %lx %ly
       %i3 = OpIMul %ulong %i %ulong_3
     %c_hi = OpCompositeExtract %ulong %ladd 1
     %v_hi = OpCompositeExtract %ulong %lumu 1
     %w_hi = OpCompositeExtract %ulong %lsmu 1
       %r0 = OpInBoundsPtrAccessChain %pl %lo %i3
               OpStore %r0 %c_hi
       %r1 = OpInBoundsPtrAccessChain %pl %r0 %ulong_1
               OpStore %r1 %v_hi
       %r2 = OpInBoundsPtrAccessChain %pl %r1 %ulong_1
               OpStore %r2 %w_hi
               OpReturn
               OpFunctionEnd
"#;
    let p = build_asm(&src, "spv1.0");
    let k = kernel(&p, "wide");
    let n = 40usize;
    let mut a: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 28))
        .collect();
    let mut b: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(0x85eb_ca6b).rotate_left(i))
        .collect();
    a[0] = u32::MAX;
    b[0] = 1;
    let mut la: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 60))
        .collect();
    let mut lb: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0xc2b2_ae3d_27d4_eb4f).rotate_left(i as u32))
        .collect();
    let mut o = vec![0u32; 6 * n];
    let mut lo = vec![0u64; 3 * n];
    run(
        k,
        &[n],
        &[8],
        &[
            buf(&mut a),
            buf(&mut b),
            buf(&mut o),
            buf(&mut la),
            buf(&mut lb),
            buf(&mut lo),
        ],
    );
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let (sum, carry) = x.overflowing_add(y);
        let (diff, borrow) = x.overflowing_sub(y);
        let uhi = ((u64::from(x) * u64::from(y)) >> 32) as u32;
        let shi = ((i64::from(x as i32) * i64::from(y as i32)) >> 32) as u32;
        assert_eq!(
            &o[6 * i..6 * i + 6],
            &[sum, carry as u32, diff, borrow as u32, uhi, shi],
            "uint lane {i}: {x:#x} {y:#x}"
        );
        let (lx, ly) = (la[i], lb[i]);
        let lcarry = lx.overflowing_add(ly).1 as u64;
        let luhi = ((u128::from(lx) * u128::from(ly)) >> 64) as u64;
        let lshi = ((i128::from(lx as i64) * i128::from(ly as i64)) >> 64) as u64;
        assert_eq!(
            &lo[3 * i..3 * i + 3],
            &[lcarry, luhi, lshi],
            "ulong lane {i}: {lx:#x} {ly:#x}"
        );
    }
}

/// A loop summing 0..n under `OpLoopMerge` with `control`, and a selection under
/// `OpSelectionMerge` with `sel`, for SPIR-V version `env`.
fn merge_module(control: &str, sel: &str) -> String {
    header("", "merges")
        + &format!(
            r#"
       %ft = OpTypeFunction %void %pu %uint
        %k = OpFunction %void None %ft
        %o = OpFunctionParameter %pu
        %n = OpFunctionParameter %uint
    %entry = OpLabel
       %g3 = OpLoad %v3ulong %gid
       %gl = OpCompositeExtract %ulong %g3 0
        %g = OpUConvert %uint %gl
        %m = OpIAdd %uint %n %g
               OpBranch %head
     %head = OpLabel
        %i = OpPhi %uint %uint_0 %entry %i1 %cont
        %s = OpPhi %uint %uint_0 %entry %s1 %cont
               OpLoopMerge %exit %cont {control}
               OpBranch %body
     %body = OpLabel
       %s1 = OpIAdd %uint %s %i
       %i1 = OpIAdd %uint %i %uint_1
               OpBranch %cont
     %cont = OpLabel
       %lt = OpULessThan %bool %i1 %m
               OpBranchConditional %lt %head %exit
     %exit = OpLabel
      %odd = OpBitwiseAnd %uint %g %uint_1
      %iso = OpIEqual %bool %odd %uint_1
               OpSelectionMerge %join {sel}
               OpBranchConditional %iso %then %join
     %then = OpLabel
       %s2 = OpIMul %uint %s1 %uint_1
       %s3 = OpIAdd %uint %s2 %s2
               OpBranch %join
     %join = OpLabel
       %sr = OpPhi %uint %s1 %exit %s3 %then
       %po = OpInBoundsPtrAccessChain %pu %o %gl
               OpStore %po %sr
               OpReturn
               OpFunctionEnd
"#
        )
}

#[test]
fn loop_and_selection_merges_with_every_control() {
    let cases: &[(&str, &str, &str)] = &[
        ("None", "None", "spv1.0"),
        ("Unroll", "Flatten", "spv1.0"),
        ("DontUnroll", "DontFlatten", "spv1.0"),
        ("Unroll|DontUnroll", "Flatten|DontFlatten", "spv1.0"),
        ("DependencyInfinite", "None", "spv1.1"),
        ("DependencyLength 4", "None", "spv1.1"),
        ("MinIterations 2", "None", "spv1.4"),
        ("MaxIterations 64", "None", "spv1.4"),
        ("IterationMultiple 1", "None", "spv1.4"),
        ("PeelCount 3", "None", "spv1.4"),
        ("PartialCount 2", "None", "spv1.4"),
        (
            "Unroll|MinIterations|MaxIterations|PeelCount 1 64 2",
            "Flatten",
            "spv1.4",
        ),
    ];
    for (control, sel, env) in cases {
        let p = build_asm(&merge_module(control, sel), env);
        let k = kernel(&p, "merges");
        let n = 20usize;
        let base = 5u32;
        let mut o = vec![0u32; n];
        run(k, &[n], &[4], &[buf(&mut o), val(base)]);
        for (g, got) in o.iter().enumerate() {
            let m = base + g as u32;
            let s: u32 = (0..m).sum();
            let want = if g % 2 == 1 { 2 * s } else { s };
            assert_eq!(*got, want, "{control} / {sel}: lane {g}");
        }
    }
}

#[test]
fn undef_vector_times_scalar_ptr_diff_copy_logical_size_of() {
    let src = header("", "misc")
        + r#"
    %v4float = OpTypeVector %float 4
      %pv4f = OpTypePointer CrossWorkgroup %v4float
       %sa = OpTypeStruct %uint %float
       %sb = OpTypeStruct %uint %float
      %psb = OpTypePointer CrossWorkgroup %sb
 %uint_1024 = OpConstant %uint 1024
  %float_pi = OpConstant %float 3.25
      %csa = OpConstantComposite %sa %uint_1024 %float_pi
       %ft = OpTypeFunction %void %pv4f %pf %pl %psb %pl
        %k = OpFunction %void None %ft
        %v = OpFunctionParameter %pv4f
        %f = OpFunctionParameter %pf
       %pd = OpFunctionParameter %pl
       %st = OpFunctionParameter %psb
       %sz = OpFunctionParameter %pl
    %entry = OpLabel
       %g3 = OpLoad %v3ulong %gid
        %i = OpCompositeExtract %ulong %g3 0
       %pvi = OpInBoundsPtrAccessChain %pv4f %v %i
       %vi = OpLoad %v4float %pvi
       %pfi = OpInBoundsPtrAccessChain %pf %f %i
       %fi = OpLoad %float %pfi
       %un = OpUndef %v4float
       %u2 = OpCompositeInsert %v4float %fi %un 0
       %f0 = OpCompositeExtract %float %u2 0
      %vts = OpVectorTimesScalar %v4float %vi %f0
               OpStore %pvi %vts
       %pdi = OpInBoundsPtrAccessChain %pl %pd %i
      %diff = OpPtrDiff %ulong %pdi %pd
               OpStore %pdi %diff
      %psi = OpInBoundsPtrAccessChain %psb %st %i
      %cpy = OpCopyLogical %sb %csa
               OpStore %psi %cpy
       %so = OpSizeOf %ulong %pvi
      %psz = OpInBoundsPtrAccessChain %pl %sz %i
               OpStore %psz %so
               OpReturn
               OpFunctionEnd
"#;
    let p = build_asm(&src, "spv1.4");
    let k = kernel(&p, "misc");
    let n = 12usize;
    let mut v: Vec<f32> = (0..4 * n).map(|i| i as f32 - 7.5).collect();
    let v0 = v.clone();
    let mut f: Vec<f32> = (0..n).map(|i| 0.5 + i as f32).collect();
    let mut pd = vec![u64::MAX; n];
    let mut st = vec![0u32; 2 * n];
    let mut sz = vec![0u64; n];
    run(
        k,
        &[n],
        &[4],
        &[
            buf(&mut v),
            buf(&mut f),
            buf(&mut pd),
            buf(&mut st),
            buf(&mut sz),
        ],
    );
    for i in 0..n {
        for c in 0..4 {
            assert_eq!(v[4 * i + c], v0[4 * i + c] * f[i], "vts {i}.{c}");
        }
        assert_eq!(pd[i], i as u64, "ptr diff {i}");
        assert_eq!(st[2 * i], 1024, "copy logical {i}");
        assert_eq!(f32::from_bits(st[2 * i + 1]), 3.25, "copy logical {i}");
        assert_eq!(sz[i], 16, "size of float4 {i}");
    }
}

#[test]
fn pointer_to_opaque_type_is_a_kernel_argument() {
    let src = header("", "opaque")
        + r#"
   %opaque = OpTypeOpaque "thing_t"
       %po = OpTypePointer CrossWorkgroup %opaque
       %ft = OpTypeFunction %void %po %pu
        %k = OpFunction %void None %ft
        %t = OpFunctionParameter %po
        %o = OpFunctionParameter %pu
    %entry = OpLabel
       %pt = OpConvertPtrToU %ulong %t
       %po2 = OpConvertPtrToU %ulong %o
       %d = OpISub %ulong %pt %po2
       %du = OpUConvert %uint %d
               OpStore %o %du
               OpReturn
               OpFunctionEnd
"#;
    let p = build_asm(&src, "spv1.0");
    let k = kernel(&p, "opaque");
    assert_eq!(k.info.args[0].kind, cranecl_jit::ArgKind::GlobalPtr);
    let mut thing = [0u8; 64];
    let mut o = [0u32; 4];
    run(k, &[1], &[1], &[buf(&mut thing), buf(&mut o)]);
    let want = (thing.as_ptr() as u64).wrapping_sub(o.as_ptr() as u64) as u32;
    assert_eq!(o[0], want);
}

#[test]
fn local_size_id_from_constants_and_spec_constants() {
    let text = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "sized"
               OpExecutionModeId %k LocalSizeId %x %c1 %c1
               OpExecutionModeId %k LocalSizeHintId %c1 %x %c1
               OpDecorate %x SpecId 3
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
         %c1 = OpConstant %uint 1
          %x = OpSpecConstant %uint 16
         %ft = OpTypeFunction %void
          %k = OpFunction %void None %ft
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    let words = assemble(text, "spv1.2");
    let p = cranecl_jit::compile(&words, &Default::default()).unwrap();
    let info = &kernel(&p, "sized").info;
    assert_eq!(info.reqd_work_group_size, Some([16, 1, 1]));
    assert_eq!(info.work_group_size_hint, Some([1, 16, 1]));
    let mut values = std::collections::BTreeMap::new();
    values.insert(3, 32u32.to_le_bytes().to_vec());
    let spec = cranecl_jit::spirv::specialize(&words, &values).unwrap();
    let p = cranecl_jit::compile(&spec, &Default::default()).unwrap();
    assert_eq!(
        kernel(&p, "sized").info.reqd_work_group_size,
        Some([32, 1, 1])
    );
}

#[test]
fn clang_add_with_carry_runs() {
    // clang-22 turns `s = x + y; s + (s < x)` into OpIAddCarry (pyopencl's
    // Random123 counters do the same).
    let src = r#"
kernel void k(global const uint* a, global const uint* b, global uint* o,
              global const ulong* la, global const ulong* lb, global ulong* lo) {
  size_t i = get_global_id(0);
  uint x = a[i], y = b[i];
  uint s = x + y;
  o[i] = s + (s < x);
  ulong lx = la[i], ly = lb[i];
  ulong ls = lx + ly;
  lo[i] = ls + (ls < lx);
}
"#;
    let words = spirv(src);
    let op_iadd_carry = 149;
    assert!(
        words
            .iter()
            .any(|w| w & 0xffff == op_iadd_carry && w >> 16 == 5),
        "clang no longer emits OpIAddCarry here"
    );
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 64usize;
    let mut a: Vec<u32> = (0..n as u32).map(|i| u32::MAX - i * 3).collect();
    let mut b: Vec<u32> = (0..n as u32).map(|i| i * 5).collect();
    let mut la: Vec<u64> = (0..n as u64).map(|i| u64::MAX - (i << 33)).collect();
    let mut lb: Vec<u64> = (0..n as u64).map(|i| i << 32).collect();
    let mut o = vec![0u32; n];
    let mut lo = vec![0u64; n];
    run(
        k,
        &[n],
        &[16],
        &[
            buf(&mut a),
            buf(&mut b),
            buf(&mut o),
            buf(&mut la),
            buf(&mut lb),
            buf(&mut lo),
        ],
    );
    for i in 0..n {
        let (s, c) = a[i].overflowing_add(b[i]);
        assert_eq!(o[i], s.wrapping_add(c as u32), "uint {i}");
        let (s, c) = la[i].overflowing_add(lb[i]);
        assert_eq!(lo[i], s.wrapping_add(c as u64), "ulong {i}");
    }
}

#[test]
fn shift_amounts_of_another_width() {
    let src = header("", "shifts")
        + r#"
    %uchar = OpTypeInt 8 0
  %uchar_3 = OpConstant %uchar 3
       %ft = OpTypeFunction %void %pl %pu
        %k = OpFunction %void None %ft
        %o = OpFunctionParameter %pl
        %s = OpFunctionParameter %pu
    %entry = OpLabel
       %g3 = OpLoad %v3ulong %gid
        %i = OpCompositeExtract %ulong %g3 0
       %ps = OpInBoundsPtrAccessChain %pu %s %i
       %sh = OpLoad %uint %ps
       %po = OpInBoundsPtrAccessChain %pl %o %i
        %x = OpLoad %ulong %po
       %y = OpShiftLeftLogical %ulong %x %sh
       %z = OpShiftRightLogical %ulong %y %uchar_3
               OpStore %po %z
               OpReturn
               OpFunctionEnd
"#;
    let src = src.replace(
        "OpCapability Int64",
        "OpCapability Int64\nOpCapability Int8",
    );
    let p = build_asm(&src, "spv1.0");
    let k = kernel(&p, "shifts");
    let n = 16usize;
    let mut o: Vec<u64> = (0..n as u64).map(|i| 0x0123_4567_89ab_cdef ^ i).collect();
    let o0 = o.clone();
    let mut s: Vec<u32> = (0..n as u32).map(|i| i * 3 % 60).collect();
    run(k, &[n], &[8], &[buf(&mut o), buf(&mut s)]);
    for i in 0..n {
        assert_eq!(o[i], (o0[i] << s[i]) >> 3, "lane {i}");
    }
}

/// The shape of the Khronos LLVM/SPIR-V translator's output before 2019 (pyopencl's
/// own `add-vectors-64.spv`, which Intel's runtime runs): built-in variables declared
/// `UniformConstant` and imported by linkage, parameter attributes through a
/// decoration group. A built-in of another storage class is still refused.
#[test]
fn legacy_translator_uniform_constant_builtins() {
    let module = |storage: &str| {
        format!(
            r#"
               OpCapability Addresses
               OpCapability Linkage
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "sum"
               OpDecorate %grp FuncParamAttr NoWrite
        %grp = OpDecorationGroup
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
               OpDecorate %gid LinkageAttributes "__spirv_BuiltInGlobalInvocationId" Import
               OpDecorate %lid BuiltIn LocalInvocationId
               OpDecorate %lid Constant
               OpDecorate %lid LinkageAttributes "__spirv_BuiltInLocalInvocationId" Import
               OpGroupDecorate %grp %a %b
      %ulong = OpTypeInt 64 0
       %uint = OpTypeInt 32 0
    %v3ulong = OpTypeVector %ulong 3
     %ptr_bi = OpTypePointer {storage} %v3ulong
       %void = OpTypeVoid
      %float = OpTypeFloat 32
         %pf = OpTypePointer CrossWorkgroup %float
         %ft = OpTypeFunction %void %pf %pf %pf
        %gid = OpVariable %ptr_bi {storage}
        %lid = OpVariable %ptr_bi {storage}
          %k = OpFunction %void None %ft
          %a = OpFunctionParameter %pf
          %b = OpFunctionParameter %pf
        %res = OpFunctionParameter %pf
      %entry = OpLabel
         %g3 = OpLoad %v3ulong %gid
       %call = OpCompositeExtract %ulong %g3 0
       %conv = OpUConvert %uint %call
        %idx = OpSConvert %ulong %conv
         %l3 = OpLoad %v3ulong %lid
          %l = OpCompositeExtract %ulong %l3 0
         %pa = OpInBoundsPtrAccessChain %pf %a %idx
         %va = OpLoad %float %pa Aligned 4
         %pb = OpInBoundsPtrAccessChain %pf %b %idx
         %vb = OpLoad %float %pb Aligned 4
        %add = OpFAdd %float %va %vb
         %lf = OpConvertUToF %float %l
        %sum = OpFAdd %float %add %lf
         %pr = OpInBoundsPtrAccessChain %pf %res %idx
               OpStore %pr %sum Aligned 4
               OpReturn
               OpFunctionEnd
"#
        )
    };
    let p = build_asm(&module("UniformConstant"), "spv1.0");
    let k = kernel(&p, "sum");
    let n = 40;
    let mut a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let mut b: Vec<f32> = (0..n).map(|i| 100.0 - i as f32).collect();
    let mut r = vec![0f32; n];
    run(k, &[n], &[8], &[buf(&mut a), buf(&mut b), buf(&mut r)]);
    for i in 0..n {
        assert_eq!(r[i], a[i] + b[i] + (i % 8) as f32, "item {i}");
    }
    let words = assemble(&module("CrossWorkgroup"), "spv1.0");
    let e = cranecl_jit::validate(&words).expect_err("a CrossWorkgroup built-in");
    assert_eq!(
        e.kind,
        cranecl_jit::CompileErrorKind::Malformed,
        "{}",
        e.message
    );
    assert!(e.message.contains("BuiltIn"), "{}", e.message);
}

/// A private struct variable with an initializer, written field by field under a
/// selection that diverges across lanes and read back whole and as a `ulong`: the
/// promotion to SSA values (`analysis::promote`) must give each lane the fields its
/// own path stored, and the untouched field its initial value.
#[test]
fn private_variable_with_initializer_stored_under_divergent_selection() {
    let src = header("", "priv")
        + r#"
        %s = OpTypeStruct %uint %uint %float
       %ps = OpTypePointer Function %s
      %ppu = OpTypePointer Function %uint
      %ppl = OpTypePointer Function %ulong
  %uint_2 = OpConstant %uint 2
  %uint_7 = OpConstant %uint 7
 %uint_70 = OpConstant %uint 70
%float_1_5 = OpConstant %float 1.5
     %init = OpConstantComposite %s %uint_7 %uint_70 %float_1_5
       %ft = OpTypeFunction %void %pu %pl %pf
        %k = OpFunction %void None %ft
       %ou = OpFunctionParameter %pu
       %ol = OpFunctionParameter %pl
       %of = OpFunctionParameter %pf
    %entry = OpLabel
      %var = OpVariable %ps Function %init
       %g3 = OpLoad %v3ulong %gid
        %i = OpCompositeExtract %ulong %g3 0
       %iu = OpUConvert %uint %i
      %odd = OpBitwiseAnd %uint %iu %uint_1
     %isodd = OpIEqual %bool %odd %uint_1
               OpSelectionMerge %join None
               OpBranchConditional %isodd %then %else
     %then = OpLabel
       %f0 = OpAccessChain %ppu %var %uint_0
               OpStore %f0 %iu
               OpBranch %join
     %else = OpLabel
       %f1 = OpAccessChain %ppu %var %uint_1
      %x3 = OpIMul %uint %iu %uint_2
               OpStore %f1 %x3
               OpBranch %join
     %join = OpLabel
    %whole = OpLoad %s %var
       %a = OpCompositeExtract %uint %whole 0
       %b = OpCompositeExtract %uint %whole 1
       %c = OpCompositeExtract %float %whole 2
      %sum = OpIAdd %uint %a %b
      %pou = OpInBoundsPtrAccessChain %pu %ou %i
               OpStore %pou %sum
       %pl0 = OpBitcast %ppl %var
      %both = OpLoad %ulong %pl0
      %pol = OpInBoundsPtrAccessChain %pl %ol %i
               OpStore %pol %both
      %pof = OpInBoundsPtrAccessChain %pf %of %i
               OpStore %pof %c
               OpReturn
               OpFunctionEnd
"#;
    let p = build_asm(&src, "spv1.2");
    let k = kernel(&p, "priv");
    assert_eq!(k.info.private_bytes_per_item, 0, "the struct is promoted");
    let n = 37usize;
    let (mut ou, mut ol, mut of) = (vec![0u32; n], vec![0u64; n], vec![0f32; n]);
    run(k, &[n], &[n], &[buf(&mut ou), buf(&mut ol), buf(&mut of)]);
    for i in 0..n {
        let (a, b) = if i % 2 == 1 {
            (i as u32, 70)
        } else {
            (7, 2 * i as u32)
        };
        assert_eq!(ou[i], a + b, "sum {i}");
        assert_eq!(ol[i], u64::from(a) | u64::from(b) << 32, "ulong {i}");
        assert_eq!(of[i], 1.5, "untouched field {i}");
    }
}
