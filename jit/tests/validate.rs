//! The validator in front of the jit: each module here breaks one rule of the
//! SPIR-V / OpenCL environment specifications that analysis or lowering relies on,
//! and must be refused as `Malformed` with a message naming what is wrong. The
//! unbroken module is accepted, so each case fails for its one reason.

mod common;
use common::assemble;

use cranecl_jit::{validate, CompileErrorKind};

/// A kernel `k(global uint* o, uint n)` storing into `o[gid]`: `{decls}` go at
/// module scope (after the common types), `{body}` in the entry block before the
/// store of `%v` (a uint).
fn module(caps: &str, decls: &str, body: &str) -> String {
    format!(
        r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               {caps}
          %1 = OpExtInstImport "OpenCL.std"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k" %gid
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
         %pf = OpTypePointer CrossWorkgroup %float
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
    %float_1 = OpConstant %float 1
         %ft = OpTypeFunction %void %pu %uint
{decls}
          %k = OpFunction %void None %ft
          %o = OpFunctionParameter %pu
          %n = OpFunctionParameter %uint
      %entry = OpLabel
         %g3 = OpLoad %v3ulong %gid
          %i = OpCompositeExtract %ulong %g3 0
{body}
         %po = OpInBoundsPtrAccessChain %pu %o %i
               OpStore %po %v
               OpReturn
               OpFunctionEnd
"#
    )
}

/// Asserts that `text` is refused as Malformed with a message containing every
/// one of `words`.
fn refused(text: &str, env: &str, words: &[&str]) {
    let w = assemble(text, env);
    let e = validate(&w).expect_err("the module must be refused");
    assert_eq!(e.kind, CompileErrorKind::Malformed, "{}", e.message);
    for word in words {
        assert!(
            e.message.contains(word),
            "message {:?} lacks {word:?}",
            e.message
        );
    }
}

#[test]
fn the_base_module_is_valid() {
    let w = assemble(&module("", "", "%v = OpIAdd %uint %n %uint_1"), "spv1.0");
    validate(&w).unwrap();
    let p = cranecl_jit::compile(&w, &Default::default()).unwrap();
    let mut o = vec![0u32; 8];
    common::run(
        common::kernel(&p, "k"),
        &[8],
        &[8],
        &[common::buf(&mut o), common::val(41u32)],
    );
    assert_eq!(o, vec![42; 8]);
}

#[test]
fn operand_types_must_match() {
    refused(
        &module("", "", "%v = OpIAdd %uint %n %float_1"),
        "spv1.0",
        &["OpIAdd", "has type float32, expected int32"],
    );
    refused(
        &module(
            "",
            "",
            "%f = OpFAdd %float %float_1 %n\n%v = OpBitcast %uint %f",
        ),
        "spv1.0",
        &["OpFAdd"],
    );
    refused(
        &module(
            "",
            "",
            "%c = OpSLessThan %bool %n %float_1\n%v = OpSelect %uint %c %n %n",
        ),
        "spv1.0",
        &["OpSLessThan"],
    );
}

#[test]
fn values_must_be_defined_before_use() {
    let body = r#"
               OpBranch %next
       %next = OpLabel
         %v = OpIAdd %uint %w %uint_1
         %w = OpIAdd %uint %n %uint_1
"#;
    refused(
        &module("", "", body),
        "spv1.0",
        &["OpIAdd", "not defined before"],
    );
    // Defined on one side of a branch only, used after the join.
    let body = r#"
         %c = OpULessThan %bool %n %uint_2
               OpBranchConditional %c %then %join
       %then = OpLabel
         %t = OpIAdd %uint %n %uint_1
               OpBranch %join
       %join = OpLabel
         %v = OpIAdd %uint %t %uint_1
"#;
    refused(&module("", "", body), "spv1.0", &["not defined before"]);
}

#[test]
fn phis_name_each_predecessor_once() {
    let body = r#"
         %c = OpULessThan %bool %n %uint_2
               OpBranchConditional %c %then %join
       %then = OpLabel
               OpBranch %join
       %join = OpLabel
         %v = OpPhi %uint %n %then
"#;
    refused(&module("", "", body), "spv1.0", &["OpPhi", "predecessors"]);
    let body = r#"
               OpBranch %join
       %join = OpLabel
         %v = OpPhi %uint %n %entry %n %entry
"#;
    refused(&module("", "", body), "spv1.0", &["appears twice"]);
}

#[test]
fn branches_stay_inside_the_function_and_avoid_the_entry() {
    let body = r#"
         %c = OpULessThan %bool %n %uint_2
               OpBranchConditional %c %entry %next
       %next = OpLabel
         %v = OpIAdd %uint %n %uint_1
"#;
    refused(&module("", "", body), "spv1.0", &["entry block"]);
    let body = r#"
               OpBranchConditional %n %next %next
       %next = OpLabel
         %v = OpIAdd %uint %n %uint_1
"#;
    refused(
        &module("", "", body),
        "spv1.0",
        &["OpBranchConditional", "not bool"],
    );
}

#[test]
fn memory_access_through_pointers_of_the_right_type() {
    refused(
        &module("", "", "%v = OpLoad %uint %n"),
        "spv1.0",
        &["OpLoad", "not a pointer"],
    );
    refused(
        &module("", "", "%pfo = OpBitcast %pf %o\n%v = OpLoad %uint %pfo"),
        "spv1.0",
        &["loads int32 through a pointer to float32"],
    );
    let decls = "%s = OpTypeStruct %uint %float\n%ps = OpTypePointer CrossWorkgroup %s\n%pfs = OpTypePointer CrossWorkgroup %float";
    refused(
        &module(
            "",
            decls,
            "%sp = OpBitcast %ps %o\n%m = OpInBoundsAccessChain %pfs %sp %n\n%v = OpLoad %uint %o",
        ),
        "spv1.0",
        &["struct index", "constant"],
    );
}

#[test]
fn extended_instructions_have_their_operands() {
    // fma with its last operand cut off (the assembler would refuse to write it).
    let mut w = assemble(
        &module(
            "",
            "",
            "%f = OpExtInst %float %1 fma %float_1 %float_1 %float_1\n%v = OpBitcast %uint %f",
        ),
        "spv1.0",
    );
    let at = (5..w.len())
        .find(|&i| w[i] == (8 << 16) | 12)
        .expect("the OpExtInst");
    w[at] = (7 << 16) | 12;
    w.remove(at + 7);
    let e = validate(&w).unwrap_err();
    assert_eq!(e.kind, CompileErrorKind::Malformed);
    assert!(e.message.contains("fma takes 3 operands"), "{}", e.message);
    refused(
        &module(
            "OpCapability Vector16",
            "%v4 = OpTypeVector %uint 4",
            "%l = OpExtInst %v4 %1 vloadn %i %n 4\n%v = OpCompositeExtract %uint %l 0",
        ),
        "spv1.0",
        &["vloadn", "operand 1"],
    );
}

#[test]
fn decorations_and_capabilities() {
    let text = module("", "", "%v = OpIAdd %uint %n %uint_1").replace(
        "OpDecorate %gid BuiltIn GlobalInvocationId",
        "OpDecorate %gid BuiltIn GlobalInvocationId\nOpDecorate %uint_1 BuiltIn WorkDim",
    );
    refused(&text, "spv1.0", &["BuiltIn", "%"]);
    let text = module("", "", "%v = OpIAdd %uint %n %uint_1").replace("OpCapability Int64", "");
    refused(&text, "spv1.0", &["Int64"]);
    let text = module("", "", "%v = OpIAdd %uint %n %uint_1").replace(
        "OpDecorate %gid BuiltIn GlobalInvocationId",
        "OpDecorate %gid BuiltIn GlobalInvocationId\nOpDecorate %o ArrayStride 4",
    );
    refused(&text, "spv1.0", &["ArrayStride"]);
    // A built-in of the wrong type.
    let text = module("", "", "%v = OpIAdd %uint %n %uint_1")
        .replace(
            "%ptr_in = OpTypePointer Input %v3ulong",
            "%ptr_in = OpTypePointer Input %ulong",
        )
        .replace(
            "%g3 = OpLoad %v3ulong %gid\n          %i = OpCompositeExtract %ulong %g3 0",
            "%i = OpLoad %ulong %gid",
        );
    refused(&text, "spv1.0", &["GlobalInvocationId", "type"]);
    // The Private storage class needs the Shader capability (found by the mutation
    // test: a Function pointer type turned into a Private one was accepted).
    let text = module(
        "",
        "%pp = OpTypePointer Private %uint",
        "%v = OpIAdd %uint %n %uint_1",
    );
    refused(&text, "spv1.0", &["Private", "Shader"]);
}

#[test]
fn only_global_local_and_private_pointers_convert_to_generic() {
    // Found by the mutation test (seed 909090): a __constant kernel argument cast to
    // a generic pointer was accepted.
    let decls = "%pgu = OpTypePointer Generic %uint\n%pg3 = OpTypePointer Generic %v3ulong";
    let ok = module(
        "OpCapability GenericPointer",
        decls,
        "%go = OpPtrCastToGeneric %pgu %o\n%v = OpLoad %uint %go",
    );
    validate(&assemble(&ok, "spv1.0")).expect("a __global pointer converts to generic");
    let input = module(
        "OpCapability GenericPointer",
        decls,
        "%gg = OpPtrCastToGeneric %pg3 %gid\n%v = OpIAdd %uint %n %uint_1",
    );
    refused(&input, "spv1.0", &["Generic", "Input"]);
}

#[test]
fn layout_and_scopes() {
    let body = "OpDecorate %n Restrict\n%v = OpIAdd %uint %n %uint_1";
    refused(
        &module("", "", body),
        "spv1.0",
        &["OpDecorate", "inside a function"],
    );
    let body = "OpControlBarrier %n %uint_2 %uint_0\n%v = OpIAdd %uint %n %uint_1";
    refused(&module("", "", body), "spv1.0", &["scope", "constant"]);
    let body = "%seven = OpIAdd %uint %uint_2 %uint_2\n%v = OpAtomicIAdd %uint %o %uint_2 %uint_0 %float_1";
    refused(
        &module("", "", body),
        "spv1.0",
        &["OpAtomicIAdd", "has type float32, expected int32"],
    );
}

#[test]
fn kernels_return_void_and_take_kernel_arguments() {
    let text = module(
        "",
        "%bf = OpTypeFunction %void %pu %bool",
        "%v = OpIAdd %uint %n %uint_1",
    )
    .replace(
        "%k = OpFunction %void None %ft",
        "%k = OpFunction %void None %bf",
    )
    .replace(
        "%n = OpFunctionParameter %uint",
        "%n = OpFunctionParameter %bool",
    )
    .replace(
        "%v = OpIAdd %uint %n %uint_1",
        "%v = OpSelect %uint %n %uint_1 %uint_2",
    );
    refused(
        &text,
        "spv1.0",
        &["kernel k", "cannot be a kernel argument"],
    );
}

#[test]
fn ids_are_defined_once_and_below_the_bound() {
    let w = assemble(&module("", "", "%v = OpIAdd %uint %n %uint_1"), "spv1.0");
    // Shrink the bound: some ids are now out of range.
    let mut small = w.clone();
    small[3] = 10;
    let e = validate(&small).unwrap_err();
    assert_eq!(e.kind, CompileErrorKind::Malformed);
    assert!(e.message.contains("bound"), "{}", e.message);
    // Give the second OpConstant the first one's id.
    let mut dup = w.clone();
    let consts: Vec<usize> = (5..dup.len())
        .filter(|&i| dup[i] == (4 << 16) | 43)
        .collect();
    dup[consts[1] + 2] = dup[consts[0] + 2];
    let e = validate(&dup).unwrap_err();
    assert!(e.message.contains("defined twice"), "{}", e.message);
}

#[test]
fn version_words_above_1_6_are_refused() {
    let mut w = assemble(&module("", "", "%v = OpIAdd %uint %n %uint_1"), "spv1.0");
    w[1] = 0x0001_0700;
    let e = validate(&w).unwrap_err();
    assert!(e.message.contains("1.0 to 1.6"), "{}", e.message);
}

#[test]
fn bit_field_and_integer_dot_operands() {
    let caps = "OpCapability BitInstructions\n OpCapability DotProduct\n OpCapability DotProductInput4x8BitPacked\n OpExtension \"SPV_KHR_bit_instructions\"\n OpExtension \"SPV_KHR_integer_dot_product\"";
    let decls =
        "%v2uint = OpTypeVector %uint 2\n %v2 = OpConstantComposite %v2uint %uint_1 %uint_2";
    // The well-formed instructions are accepted and run: the unbroken module.
    let ok = module(
        caps,
        decls,
        "%a = OpBitFieldInsert %uint %n %uint_2 %uint_1 %uint_1\n %b = OpBitFieldUExtract %uint %a %uint_0 %uint_2\n %v = OpUDot %uint %b %n PackedVectorFormat4x8Bit",
    );
    validate(&assemble(&ok, "spv1.0")).unwrap();
    refused(
        &module(
            caps,
            decls,
            "%v = OpBitFieldInsert %uint %n %uint_2 %v2 %uint_1",
        ),
        "spv1.0",
        &["OpBitFieldInsert", "integer scalar"],
    );
    refused(
        &module(
            caps,
            decls,
            "%v = OpBitFieldSExtract %uint %v2 %uint_0 %uint_1",
        ),
        "spv1.0",
        &["OpBitFieldExtract", "expected"],
    );
    refused(
        &module(caps, decls, "%v = OpSDot %uint %v2 %v2"),
        "spv1.0",
        &["OpIntDot", "at most 16 bits"],
    );
}

/// Rules found by long mutation runs (seeds 777001 and 424242): each mutant was
/// accepted although spirv-val refuses it.
#[test]
fn rules_found_by_mutation_runs() {
    // A pointer bit-cast from a 64-bit float vector.
    refused(
        &module(
            "",
            "%v2float = OpTypeVector %float 2\n%vz = OpConstantNull %v2float",
            "%p = OpBitcast %pu %vz\n%v = OpLoad %uint %p",
        ),
        "spv1.0",
        &["bit-cast"],
    );
    // An id-taking decoration through OpDecorate, a literal one through OpDecorateId.
    let base = module("", "", "%v = OpIAdd %uint %n %uint_1");
    let text = base.replace(
        "OpDecorate %gid BuiltIn GlobalInvocationId",
        "OpDecorate %gid BuiltIn GlobalInvocationId\nOpDecorate %o AlignmentId %uint_2",
    );
    refused(&text, "spv1.4", &["AlignmentId", "OpDecorateId"]);
    let text = base.replace(
        "OpDecorate %gid BuiltIn GlobalInvocationId",
        "OpDecorate %gid BuiltIn GlobalInvocationId\nOpDecorateId %o Alignment 4",
    );
    refused(&text, "spv1.4", &["Alignment", "OpDecorateId"]);
    // An imported variable with an initializer.
    let text = module(
        "OpCapability Linkage",
        "%pcu = OpTypePointer CrossWorkgroup %uint\n%gv = OpVariable %pcu CrossWorkgroup %uint_1",
        "%v = OpIAdd %uint %n %uint_1",
    )
    .replace(
        "OpDecorate %gid BuiltIn GlobalInvocationId",
        "OpDecorate %gid BuiltIn GlobalInvocationId\nOpDecorate %gv LinkageAttributes \"gv\" Import",
    );
    refused(&text, "spv1.0", &["imported", "initializer"]);
    // A variable listed twice in a SPIR-V 1.4 interface.
    let text = base.replace(
        "OpEntryPoint Kernel %k \"k\" %gid",
        "OpEntryPoint Kernel %k \"k\" %gid %gid",
    );
    refused(&text, "spv1.4", &["twice"]);
    // Memory operands of the Vulkan memory model on a sized copy.
    refused(
        &module(
            "",
            "",
            "%pc = OpInBoundsPtrAccessChain %pu %o %uint_1\nOpCopyMemorySized %pc %o %ulong_4 Aligned|NonPrivatePointer 4\n%v = OpIAdd %uint %n %uint_1",
        )
        .replace("%ulong = OpTypeInt 64 0", "%ulong = OpTypeInt 64 0\n%ulong_4 = OpConstant %ulong 4"),
        "spv1.4",
        &["Vulkan memory model"],
    );
}
