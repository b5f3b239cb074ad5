//! Specialization constants end to end in the jit: `spec_constants` lists the ids
//! and sizes, `specialize` writes values, and `OpSpecConstantOp` is folded (numbers)
//! or evaluated where used (addresses). Results are checked against the same
//! expressions computed on the host, for the defaults and for specialized values.

use std::collections::BTreeMap;

use cranecl_jit::spirv::{spec_constants, specialize, SpecConstant};
use cranecl_jit::CompileOptions;

mod common;
use common::*;

const MODULE: &str = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "spec"
               OpDecorate %s SpecId 1
               OpDecorate %b SpecId 2
               OpDecorate %f SpecId 3
               OpDecorate %l SpecId 4
       %void = OpTypeVoid
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %float = OpTypeFloat 32
     %v2uint = OpTypeVector %uint 2
     %uint_1 = OpConstant %uint 1
     %uint_7 = OpConstant %uint 7
    %uint_10 = OpConstant %uint 10
          %s = OpSpecConstant %uint 5
          %b = OpSpecConstantTrue %bool
          %f = OpSpecConstant %float 1.5
          %l = OpSpecConstant %ulong 1000
       %sp10 = OpSpecConstantOp %uint IAdd %s %uint_10
       %smul = OpSpecConstantOp %uint IMul %sp10 %uint_7
        %sel = OpSpecConstantOp %uint Select %b %smul %uint_1
        %vec = OpSpecConstantComposite %v2uint %s %uint_7
       %shuf = OpSpecConstantOp %v2uint VectorShuffle %vec %vec 1 0
        %ext = OpSpecConstantOp %uint CompositeExtract %shuf 0
        %sfl = OpSpecConstantOp %float ConvertUToF %s
       %fmul = OpSpecConstantOp %float FMul %sfl %f
        %lt  = OpSpecConstantOp %bool ULessThan %s %uint_7
        %ltu = OpSpecConstantOp %uint Select %lt %uint_1 %uint_10
       %wide = OpSpecConstantOp %ulong UConvert %s
       %lsum = OpSpecConstantOp %ulong IAdd %wide %l
        %len = OpSpecConstantOp %uint IAdd %s %uint_1
        %arr = OpTypeArray %uint %len
       %parr = OpTypePointer Function %arr
         %pf = OpTypePointer Function %uint
         %pu = OpTypePointer CrossWorkgroup %uint
         %pl = OpTypePointer CrossWorkgroup %ulong
    %table_t = OpTypeArray %uint %uint_10
      %ptab = OpTypePointer UniformConstant %table_t
        %pcu = OpTypePointer UniformConstant %uint
    %uint_40 = OpConstant %uint 40
    %uint_41 = OpConstant %uint 41
    %uint_42 = OpConstant %uint 42
    %ulong_2 = OpConstant %ulong 2
     %tinit = OpConstantComposite %table_t %uint_40 %uint_41 %uint_42 %uint_1 %uint_1 %uint_1 %uint_1 %uint_1 %uint_1 %uint_1
      %table = OpVariable %ptab UniformConstant %tinit
    %elem2 = OpSpecConstantOp %pcu InBoundsAccessChain %table %ulong_2
    %taddr = OpSpecConstantOp %ulong ConvertPtrToU %table
       %ft = OpTypeFunction %void %pu %pl
          %k = OpFunction %void None %ft
          %o = OpFunctionParameter %pu
         %ol = OpFunctionParameter %pl
      %entry = OpLabel
          %a = OpVariable %parr Function
       %last = OpInBoundsAccessChain %pf %a %s
               OpStore %last %sel
         %rd = OpLoad %uint %last
               OpStore %o %rd
         %o1 = OpInBoundsPtrAccessChain %pu %o %uint_1
               OpStore %o1 %ext
         %o2 = OpInBoundsPtrAccessChain %pu %o1 %uint_1
        %fmb = OpBitcast %uint %fmul
               OpStore %o2 %fmb
         %o3 = OpInBoundsPtrAccessChain %pu %o2 %uint_1
               OpStore %o3 %ltu
         %o4 = OpInBoundsPtrAccessChain %pu %o3 %uint_1
         %e2 = OpLoad %uint %elem2
               OpStore %o4 %e2
               OpStore %ol %lsum
        %ol1 = OpInBoundsPtrAccessChain %pl %ol %uint_1
         %ta = OpConvertPtrToU %ulong %table
       %same = OpISub %ulong %ta %taddr
               OpStore %ol1 %same
               OpReturn
               OpFunctionEnd
"#;

/// Runs the kernel of `words`: the five uint and two ulong outputs.
fn run_spec(words: &[u32]) -> ([u32; 5], [u64; 2]) {
    let p = cranecl_jit::compile(words, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{:?}: {}", e.kind, e.message));
    let k = kernel(&p, "spec");
    let mut o = [0u32; 5];
    let mut ol = [7u64; 2];
    run(k, &[1], &[1], &[buf(&mut o), buf(&mut ol)]);
    (o, ol)
}

/// The same expressions on the host.
fn expected(s: u32, b: bool, f: f32, l: u64) -> ([u32; 5], [u64; 2]) {
    let sel = if b { (s + 10) * 7 } else { 1 };
    (
        [
            sel,
            7,
            (s as f32 * f).to_bits(),
            if s < 7 { 1 } else { 10 },
            42,
        ],
        [u64::from(s) + l, 0],
    )
}

#[test]
fn lists_spec_ids_with_sizes() {
    let words = assemble(MODULE, "spv1.0");
    assert_eq!(
        spec_constants(&words).unwrap(),
        [(1, 4), (2, 1), (3, 4), (4, 8)]
            .map(|(spec_id, size)| SpecConstant { spec_id, size })
            .to_vec()
    );
}

#[test]
fn defaults_and_specialized_values() {
    let words = assemble(MODULE, "spv1.0");
    assert_eq!(run_spec(&words), expected(5, true, 1.5, 1000));
    for (s, b, f, l) in [
        (9u32, false, -2.25f32, 1u64 << 40),
        (0, true, 0.5, 3),
        (6, true, 8.0, u64::MAX - 100),
    ] {
        let mut values = BTreeMap::new();
        values.insert(1, s.to_le_bytes().to_vec());
        values.insert(2, vec![u8::from(b)]);
        values.insert(3, f.to_le_bytes().to_vec());
        values.insert(4, l.to_le_bytes().to_vec());
        let spec = specialize(&words, &values).unwrap();
        assert_eq!(
            run_spec(&spec),
            expected(s, b, f, l),
            "s={s} b={b} f={f} l={l}"
        );
    }
}

#[test]
fn wrong_ids_and_sizes_are_refused() {
    let words = assemble(MODULE, "spv1.0");
    let mut unknown = BTreeMap::new();
    unknown.insert(99, vec![0, 0, 0, 0]);
    assert!(specialize(&words, &unknown)
        .unwrap_err()
        .message
        .contains("99"));
    let mut short = BTreeMap::new();
    short.insert(4, vec![0, 0, 0, 0]);
    assert!(specialize(&words, &short)
        .unwrap_err()
        .message
        .contains("8 bytes"));
}
