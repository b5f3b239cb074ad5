//! SPIR-V's own device-side enqueue instructions (`OpCapability DeviceEnqueue`)
//! through clCreateProgramWithIL, in modules shaped like SPIRV-LLVM-Translator's
//! output: `OpEnqueueKernel` with a captured value, an `OpBuildNDRange` ND-range (as
//! a value and through a pointer), a returned event another enqueue waits for, an
//! invoke function that is no entry point (a hidden kernel) with a `__local`
//! argument whose size is given through a pointer; the `OpGetKernel*` queries
//! against clGetKernelWorkGroupInfo/clGetKernelSubGroupInfo; the device event
//! instructions and `OpEnqueueMarker`; and a mistyped `OpEnqueueKernel` refused with
//! a log naming it.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const FEATURE: &str = "__opencl_c_device_enqueue";
const CL_DEVICE_OPENCL_C_FEATURES: cl_uint = 0x106F;
const CL_DEVICE_SPIRV_CAPABILITIES_KHR: cl_uint = 0x12BB;
/// SPIR-V `DeviceEnqueue` capability.
const CAPABILITY_DEVICE_ENQUEUE: u32 = 19;

/// Types and constants every module here shares (after the header).
const COMMON: &str = r#"
       %void = OpTypeVoid
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %uchar = OpTypeInt 8 0
    %v3ulong = OpTypeVector %ulong 3
     %pin_v3 = OpTypePointer Input %v3ulong
    %gid_var = OpVariable %pin_v3 Input
    %lid_var = OpVariable %pin_v3 Input
    %pg_uint = OpTypePointer CrossWorkgroup %uint
   %pg_ulong = OpTypePointer CrossWorkgroup %ulong
    %pl_uint = OpTypePointer Workgroup %uint
      %queue = OpTypeQueue
      %devev = OpTypeDeviceEvent
      %pf_ev = OpTypePointer Function %devev
    %pgen_ev = OpTypePointer Generic %devev
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
     %uint_8 = OpConstant %uint 8
    %uint_16 = OpConstant %uint 16
    %uint_24 = OpConstant %uint 24
    %ulong_0 = OpConstant %ulong 0
    %ulong_1 = OpConstant %ulong 1
    %ulong_2 = OpConstant %ulong 2
    %ulong_4 = OpConstant %ulong 4
    %ulong_8 = OpConstant %ulong 8
   %ulong_16 = OpConstant %ulong 16
   %ulong_32 = OpConstant %ulong 32
   %ulong_33 = OpConstant %ulong 33
   %ulong_64 = OpConstant %ulong 64
       %arr2 = OpTypeArray %ulong %uint_2
       %arr3 = OpTypeArray %ulong %uint_3
    %ndrange = OpTypeStruct %uint %arr3 %arr3 %arr3
      %pf_nd = OpTypePointer Function %ndrange
      %block = OpTypeStruct %uint %uint %pg_uint %uint
   %pf_block = OpTypePointer Function %block
 %pgen_block = OpTypePointer Generic %block
 %pgen_uchar = OpTypePointer Generic %uchar
   %pf_uchar = OpTypePointer Function %uchar
   %pf_ulong = OpTypePointer Function %ulong
    %pf_uint = OpTypePointer Function %uint
 %pf_pg_uint = OpTypePointer Function %pg_uint
  %pgen_uint = OpTypePointer Generic %uint
%pgen_pg_uint = OpTypePointer Generic %pg_uint
    %null_ev = OpConstantNull %pgen_ev
  %fn_parent = OpTypeFunction %void %pg_uint %uint
 %fn_child_a = OpTypeFunction %void %pgen_uchar
 %fn_child_b = OpTypeFunction %void %pgen_uchar %pl_uint
"#;

/// `parent(out, cap)` fills a block literal `{24, 8, out, cap}` and enqueues
/// `child_a` over 16 work-items in groups of 4 (`out[i] = 2 * cap + i`), returning
/// an event, then the hidden `child_b` waiting for it (`out[16 + i] = out[i] + 1`,
/// through a 16-byte `__local` buffer); the two return codes go to `out[32..34]`.
/// `child_b`'s ND-range is passed through a pointer and its `__local` size through a
/// pointer to a `size_t`, as the translator does.
const PARENT: &str = r#"
     %parent = OpFunction %void None %fn_parent
        %out = OpFunctionParameter %pg_uint
        %cap = OpFunctionParameter %uint
         %pe = OpLabel
        %blk = OpVariable %pf_block Function
        %eva = OpVariable %pf_ev Function
        %lsz = OpVariable %pf_ulong Function
        %ndv = OpVariable %pf_nd Function
         %f0 = OpInBoundsAccessChain %pf_uint %blk %uint_0
               OpStore %f0 %uint_24
         %f1 = OpInBoundsAccessChain %pf_uint %blk %uint_1
               OpStore %f1 %uint_8
         %f2 = OpInBoundsAccessChain %pf_pg_uint %blk %uint_2
               OpStore %f2 %out
         %f3 = OpInBoundsAccessChain %pf_uint %blk %uint_3
               OpStore %f3 %cap
        %bi8 = OpBitcast %pf_uchar %blk
      %param = OpPtrCastToGeneric %pgen_uchar %bi8
          %q = OpGetDefaultQueue %queue
         %nd = OpBuildNDRange %ndrange %ulong_16 %ulong_4 %ulong_0
        %evg = OpPtrCastToGeneric %pgen_ev %eva
         %r1 = OpEnqueueKernel %uint %q %uint_1 %nd %uint_0 %null_ev %evg %child_a %param %uint_24 %uint_8
               OpStore %lsz %ulong_16
               OpStore %ndv %nd
         %r2 = OpEnqueueKernel %uint %q %uint_1 %ndv %uint_1 %evg %null_ev %child_b %param %uint_24 %uint_8 %lsz
         %ev = OpLoad %devev %eva
               OpReleaseEvent %ev
        %p32 = OpInBoundsPtrAccessChain %pg_uint %out %ulong_32
               OpStore %p32 %r1
        %p33 = OpInBoundsPtrAccessChain %pg_uint %out %ulong_33
               OpStore %p33 %r2
               OpReturn
               OpFunctionEnd
"#;

const CHILDREN: &str = r#"
    %child_a = OpFunction %void None %fn_child_a
         %ba = OpFunctionParameter %pgen_uchar
         %ae = OpLabel
         %bs = OpBitcast %pgen_block %ba
         %a2 = OpInBoundsAccessChain %pgen_pg_uint %bs %uint_2
       %aout = OpLoad %pg_uint %a2
         %a3 = OpInBoundsAccessChain %pgen_uint %bs %uint_3
       %acap = OpLoad %uint %a3
         %gv = OpLoad %v3ulong %gid_var
         %g0 = OpCompositeExtract %ulong %gv 0
        %g32 = OpUConvert %uint %g0
         %x2 = OpIMul %uint %acap %uint_2
        %val = OpIAdd %uint %x2 %g32
        %dst = OpInBoundsPtrAccessChain %pg_uint %aout %g0
               OpStore %dst %val
               OpReturn
               OpFunctionEnd
    %child_b = OpFunction %void None %fn_child_b
         %bb = OpFunctionParameter %pgen_uchar
        %loc = OpFunctionParameter %pl_uint
         %be = OpLabel
        %bbs = OpBitcast %pgen_block %bb
         %b2 = OpInBoundsAccessChain %pgen_pg_uint %bbs %uint_2
       %bout = OpLoad %pg_uint %b2
        %bgv = OpLoad %v3ulong %gid_var
        %bg0 = OpCompositeExtract %ulong %bgv 0
        %blv = OpLoad %v3ulong %lid_var
        %bl0 = OpCompositeExtract %ulong %blv 0
        %src = OpInBoundsPtrAccessChain %pg_uint %bout %bg0
         %sv = OpLoad %uint %src
         %lp = OpInBoundsPtrAccessChain %pl_uint %loc %bl0
               OpStore %lp %sv
         %lv = OpLoad %uint %lp
        %lv1 = OpIAdd %uint %lv %uint_1
        %i16 = OpIAdd %ulong %bg0 %ulong_16
       %bdst = OpInBoundsPtrAccessChain %pg_uint %bout %i16
               OpStore %bdst %lv1
               OpReturn
               OpFunctionEnd
"#;

/// `queries(out, times)`: the six `OpGetKernel*` queries on `child_a` into
/// `out[0..6]`; a user event's validity across set-status/retain/release into
/// `out[6..9]`; an `OpEnqueueMarker` waiting for it into `out[9]`, whose event's
/// profiling information is captured into `times[0..2]`.
const QUERIES: &str = r#"
    %queries = OpFunction %void None %fn_queries
         %qo = OpFunctionParameter %pg_uint
      %times = OpFunctionParameter %pg_ulong
         %qe = OpLabel
       %qblk = OpVariable %pf_block Function
         %wl = OpVariable %pf_ev Function
        %mev = OpVariable %pf_ev Function
        %qb8 = OpBitcast %pf_uchar %qblk
         %qp = OpPtrCastToGeneric %pgen_uchar %qb8
       %nd64 = OpBuildNDRange %ndrange %ulong_64 %ulong_64 %ulong_0
       %nd2d = OpBuildNDRange %ndrange %g2 %l2 %o2
         %q0 = OpGetKernelWorkGroupSize %uint %child_a %qp %uint_24 %uint_8
         %q1 = OpGetKernelPreferredWorkGroupSizeMultiple %uint %child_a %qp %uint_24 %uint_8
         %q2 = OpGetKernelNDrangeSubGroupCount %uint %nd2d %child_a %qp %uint_24 %uint_8
         %q3 = OpGetKernelNDrangeMaxSubGroupSize %uint %nd64 %child_a %qp %uint_24 %uint_8
         %q4 = OpGetKernelLocalSizeForSubgroupCount %uint %uint_2 %child_a %qp %uint_24 %uint_8
         %q5 = OpGetKernelMaxNumSubgroups %uint %child_a %qp %uint_24 %uint_8
        %o_0 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_0
               OpStore %o_0 %q0
        %o_1 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_1
               OpStore %o_1 %q1
        %o_2 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_2
               OpStore %o_2 %q2
        %o_3 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_3
               OpStore %o_3 %q3
        %o_4 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_4
               OpStore %o_4 %q4
        %o_5 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_5
               OpStore %o_5 %q5
         %ue = OpCreateUserEvent %devev
         %v1 = OpIsValidEvent %bool %ue
               OpSetUserEventStatus %ue %uint_0
               OpStore %wl %ue
         %dq = OpGetDefaultQueue %queue
        %wlg = OpPtrCastToGeneric %pgen_ev %wl
       %mevg = OpPtrCastToGeneric %pgen_ev %mev
          %m = OpEnqueueMarker %uint %dq %uint_1 %wlg %mevg
         %me = OpLoad %devev %mev
               OpCaptureEventProfilingInfo %me %uint_1 %times
               OpReleaseEvent %me
               OpRetainEvent %ue
               OpReleaseEvent %ue
         %v2 = OpIsValidEvent %bool %ue
               OpReleaseEvent %ue
         %v3 = OpIsValidEvent %bool %ue
        %s1 = OpSelect %uint %v1 %uint_1 %uint_0
        %s2 = OpSelect %uint %v2 %uint_1 %uint_0
        %s3 = OpSelect %uint %v3 %uint_1 %uint_0
        %o_6 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_6
               OpStore %o_6 %s1
        %o_7 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_7
               OpStore %o_7 %s2
        %o_8 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_8
               OpStore %o_8 %s3
        %o_9 = OpInBoundsPtrAccessChain %pg_uint %qo %ulong_9
               OpStore %o_9 %m
               OpReturn
               OpFunctionEnd
"#;

/// `fanout(out)`: every work-item `i` with `i % 3 != 1` (a divergent branch)
/// enqueues the hidden `child_c` over `i + 1` work-items (its own ND-range and block
/// literal, so varying operands), which writes `out[8 * i + j] = 100 * i + j`; the
/// return codes go to `out[64 + i]`.
const FANOUT: &str = r#"
     %fanout = OpFunction %void None %fn_fanout
        %fo = OpFunctionParameter %pg_uint
        %fe = OpLabel
      %fblk = OpVariable %pf_block Function
       %fgv = OpLoad %v3ulong %gid_var
       %fg0 = OpCompositeExtract %ulong %fgv 0
      %fg32 = OpUConvert %uint %fg0
       %ff0 = OpInBoundsAccessChain %pf_uint %fblk %uint_0
              OpStore %ff0 %uint_24
       %ff1 = OpInBoundsAccessChain %pf_uint %fblk %uint_1
              OpStore %ff1 %uint_8
       %ff2 = OpInBoundsAccessChain %pf_pg_uint %fblk %uint_2
              OpStore %ff2 %fo
       %ff3 = OpInBoundsAccessChain %pf_uint %fblk %uint_3
              OpStore %ff3 %fg32
       %fb8 = OpBitcast %pf_uchar %fblk
       %fpa = OpPtrCastToGeneric %pgen_uchar %fb8
       %fq = OpGetDefaultQueue %queue
      %fgs = OpIAdd %ulong %fg0 %ulong_1
      %fnd = OpBuildNDRange %ndrange %fgs %ulong_1 %ulong_0
      %fri = OpIAdd %ulong %fg0 %ulong_64
      %frp = OpInBoundsPtrAccessChain %pg_uint %fo %fri
      %fm3 = OpUMod %uint %fg32 %uint_3
     %fskip = OpIEqual %bool %fm3 %uint_1
              OpSelectionMerge %fjoin None
              OpBranchConditional %fskip %fjoin %fdo
       %fdo = OpLabel
       %fr = OpEnqueueKernel %uint %fq %uint_0 %fnd %uint_0 %null_ev %null_ev %child_c %fpa %uint_24 %uint_8
              OpStore %frp %fr
              OpBranch %fjoin
     %fjoin = OpLabel
              OpReturn
              OpFunctionEnd
    %child_c = OpFunction %void None %fn_child_a
        %cb = OpFunctionParameter %pgen_uchar
        %ce = OpLabel
       %cbs = OpBitcast %pgen_block %cb
        %c2 = OpInBoundsAccessChain %pgen_pg_uint %cbs %uint_2
      %cout = OpLoad %pg_uint %c2
        %c3 = OpInBoundsAccessChain %pgen_uint %cbs %uint_3
       %ci = OpLoad %uint %c3
       %cgv = OpLoad %v3ulong %gid_var
       %cg0 = OpCompositeExtract %ulong %cgv 0
      %cg32 = OpUConvert %uint %cg0
      %c100 = OpIMul %uint %ci %uint_100
      %cval = OpIAdd %uint %c100 %cg32
      %ci64 = OpUConvert %ulong %ci
       %ci8 = OpIMul %ulong %ci64 %ulong_8
      %cidx = OpIAdd %ulong %ci8 %cg0
      %cdst = OpInBoundsPtrAccessChain %pg_uint %cout %cidx
              OpStore %cdst %cval
              OpReturn
              OpFunctionEnd
"#;

/// Constants only `QUERIES` needs (module-scope, so before the functions).
const QUERY_CONSTANTS: &str = r#"
  %uint_100 = OpConstant %uint 100
 %fn_fanout = OpTypeFunction %void %pg_uint
    %ulong_3 = OpConstant %ulong 3
    %ulong_5 = OpConstant %ulong 5
    %ulong_6 = OpConstant %ulong 6
    %ulong_7 = OpConstant %ulong 7
    %ulong_9 = OpConstant %ulong 9
         %g2 = OpConstantComposite %arr2 %ulong_64 %ulong_2
         %l2 = OpConstantComposite %arr2 %ulong_8 %ulong_2
         %o2 = OpConstantComposite %arr2 %ulong_0 %ulong_0
 %fn_queries = OpTypeFunction %void %pg_uint %pg_ulong
"#;

const HEADER: &str = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability Int8
               OpCapability GenericPointer
               OpCapability DeviceEnqueue
               OpCapability SubgroupDispatch
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %parent "parent" %gid_var %lid_var
               OpEntryPoint Kernel %child_a "child_a" %gid_var
               OpEntryPoint Kernel %queries "queries"
               OpEntryPoint Kernel %fanout "fanout" %gid_var
               OpDecorate %gid_var BuiltIn GlobalInvocationId
               OpDecorate %gid_var Constant
               OpDecorate %lid_var BuiltIn LocalInvocationId
               OpDecorate %lid_var Constant
"#;

fn module() -> String {
    format!("{HEADER}{COMMON}{QUERY_CONSTANTS}{PARENT}{CHILDREN}{QUERIES}{FANOUT}")
}

/// The test context, or `None` (skipped) without device enqueue or SPIR-V.
fn setup() -> Option<DeviceContext> {
    if testing_cranecl() && std::env::var("CRANECL_DEVICE_ENQUEUE").as_deref() == Ok("0") {
        return None;
    }
    let dc = DeviceContext::new();
    let features = device_info_bytes(dc.device, CL_DEVICE_OPENCL_C_FEATURES).unwrap_or_default();
    let ok = String::from_utf8_lossy(&features).contains(FEATURE) && dc.supports_spirv();
    require(ok, "device-side enqueue with SPIR-V").then_some(dc)
}

/// A default on-device queue for `dc` (kept alive by the caller).
fn default_device_queue(dc: &DeviceContext) -> Queue {
    let bits =
        CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_ON_DEVICE_DEFAULT;
    let props = [CL_QUEUE_PROPERTIES as cl_ulong, bits, 0];
    let mut err = 0;
    // SAFETY: valid context and device, 0-terminated property list.
    let q = unsafe {
        clCreateCommandQueueWithProperties(dc.context.raw(), dc.device, props.as_ptr(), &mut err)
    };
    check(err, "clCreateCommandQueueWithProperties").unwrap();
    // SAFETY: creation succeeded; we own the reference.
    unsafe { Queue::from_raw(q) }
}

fn built(dc: &DeviceContext) -> Option<Program> {
    let il = spirv::assemble_for_test(&module(), "spv1.2")?;
    let program = dc.try_program_from_il(&il).expect("clCreateProgramWithIL");
    Some(
        dc.try_build_program(program, "")
            .unwrap_or_else(|f| panic!("{f}")),
    )
}

#[test]
fn device_reports_the_device_enqueue_capability() {
    let Some(dc) = setup() else { return };
    let bytes = device_info_bytes(dc.device, CL_DEVICE_SPIRV_CAPABILITIES_KHR).unwrap();
    let caps: Vec<u32> = from_bytes(&bytes);
    assert!(caps.contains(&CAPABILITY_DEVICE_ENQUEUE), "{caps:?}");
}

#[test]
fn enqueue_kernel_runs_children_with_captures_events_and_local_memory() {
    let Some(dc) = setup() else { return };
    let _dq = default_device_queue(&dc);
    let Some(program) = built(&dc) else { return };
    // The hidden invoke kernel of child_b is no kernel of the API.
    let names = String::from_utf8(program.info_bytes(CL_PROGRAM_KERNEL_NAMES).unwrap())
        .unwrap()
        .trim_end_matches('\0')
        .to_string();
    assert_eq!(names, "parent;child_a;queries;fanout");
    if testing_cranecl() {
        // Nor can clCreateKernel name it (`__cranecl.invoke.<result id>`).
        for id in 1..400 {
            let e = program.try_kernel(&format!("__cranecl.invoke.{id}"));
            assert_eq!(e.err().map(|e| e.code), Some(CL_INVALID_KERNEL_NAME));
        }
    }
    let parent = program.kernel("parent");
    let out = dc.buffer_from(&[-1i32; 40]);
    let cap = 21i32;
    parent.arg_buffer(0, &out).arg(1, cap);
    dc.run(&parent, &[1], None);
    let got: Vec<i32> = dc.read(&out, 40);
    let mut want = vec![-1i32; 40];
    for i in 0..16 {
        want[i] = 2 * cap + i as i32;
        want[16 + i] = want[i] + 1;
    }
    want[32] = 0;
    want[33] = 0;
    assert_eq!(got, want);
}

#[test]
fn work_items_of_a_divergent_branch_enqueue_their_own_children() {
    let Some(dc) = setup() else { return };
    let _dq = default_device_queue(&dc);
    let Some(program) = built(&dc) else { return };
    let fanout = program.kernel("fanout");
    let out = dc.buffer_from(&[-1i32; 72]);
    fanout.arg_buffer(0, &out);
    dc.run(&fanout, &[8], Some(&[8]));
    let got: Vec<i32> = dc.read(&out, 72);
    let mut want = vec![-1i32; 72];
    for i in (0..8).filter(|i| i % 3 != 1) {
        for j in 0..=i {
            want[8 * i + j] = 100 * i as i32 + j as i32;
        }
        want[64 + i] = 0;
    }
    assert_eq!(got, want);
}

#[test]
fn kernel_queries_match_the_api_and_device_events_work() {
    let Some(dc) = setup() else { return };
    let _dq = default_device_queue(&dc);
    let Some(program) = built(&dc) else { return };
    let queries = program.kernel("queries");
    let out = dc.buffer_from(&[-1i32; 10]);
    let times = dc.buffer_from(&[u64::MAX; 2]);
    queries.arg_buffer(0, &out).arg_buffer(1, &times);
    dc.run(&queries, &[1], None);
    let got: Vec<i32> = dc.read(&out, 10);
    let child = program.kernel("child_a");
    let d = dc.device;
    let wg: usize = child.work_group_info(d, CL_KERNEL_WORK_GROUP_SIZE).unwrap();
    let multiple: usize = child
        .work_group_info(d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)
        .unwrap();
    let count: usize = child
        .sub_group_info(d, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, &[8, 2])
        .unwrap();
    let max_size: usize = child
        .sub_group_info(d, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[64])
        .unwrap();
    let local: [usize; 3] = child
        .sub_group_info(d, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, &[2])
        .unwrap();
    let local = local[0];
    let max_num: usize = child
        .sub_group_info(d, CL_KERNEL_MAX_NUM_SUB_GROUPS, &[])
        .unwrap();
    let want = [wg, multiple, count, max_size, local, max_num];
    let want: Vec<i32> = want.iter().map(|&v| v as i32).collect();
    assert_eq!(&got[..6], &want[..], "OpGetKernel* against the API");
    // Valid when created, still after a retain and a release, not after the last
    // release; the marker succeeded (CLK_SUCCESS).
    assert_eq!(&got[6..], &[1, 1, 0, 0]);
    // The marker's execution time (both values): written, and under a second.
    let t: Vec<u64> = dc.read(&times, 2);
    assert!(t.iter().all(|&v| v < 1_000_000_000), "{t:?}");
}

#[test]
fn a_mistyped_enqueue_kernel_is_refused_with_a_log_naming_it() {
    let Some(dc) = setup() else { return };
    // The Queue operand is a uint.
    let text = module().replace(
        "%r1 = OpEnqueueKernel %uint %q %uint_1",
        "%r1 = OpEnqueueKernel %uint %uint_1 %uint_1",
    );
    let Some(il) = spirv::assemble_for_test(&text, "spv1.2") else {
        return;
    };
    let err = dc.try_program_from_il(&il).expect_err("refused");
    assert_eq!(err.code, CL_INVALID_VALUE);
    if !testing_cranecl() {
        return;
    }
    // Through a program binary the words reach the build, which fails with a log.
    let program = dc.try_program_from_binary(&cranecl_binary(&il)).unwrap();
    let f = dc
        .try_build_program(program, "")
        .expect_err("the mistyped OpEnqueueKernel built");
    assert_eq!(f.code, CL_BUILD_PROGRAM_FAILURE);
    let log = f.log;
    assert!(
        log.contains("OpEnqueueKernel") && log.contains("Queue"),
        "{log}"
    );
}

/// SPIRV-LLVM-Translator's output for `data/translator_enqueue.cl` (how to regenerate
/// it is there): its invoke kernels are entry-point wrappers around the functions
/// `OpEnqueueKernel` names, its `ND Range` operands are pointers and its `Local Size`
/// a pointer to the size.
const TRANSLATOR_MODULE: &[u8] = include_bytes!("data/translator_enqueue.spv");

#[test]
fn translator_output_enqueues_and_queries() {
    let Some(dc) = setup() else { return };
    let _dq = default_device_queue(&dc);
    let program = dc
        .try_program_from_il(TRANSLATOR_MODULE)
        .expect("clCreateProgramWithIL");
    let program = dc
        .try_build_program(program, "")
        .unwrap_or_else(|f| panic!("{f}"));
    let parent = program.kernel("parent");
    let out = dc.buffer_from(&[-1i32; 48]);
    let rc = dc.buffer_from(&[-7i32; 9]);
    let cap = 5i32;
    parent.arg_buffer(0, &out).arg(1, cap).arg_buffer(2, &rc);
    dc.run(&parent, &[1], None);
    let got: Vec<i32> = dc.read(&out, 48);
    let mut want = vec![-1i32; 48];
    for i in 0..16 {
        want[i] = 2 * cap + i as i32;
        want[16 + i] = want[i] + 1;
    }
    assert_eq!(got, want);
    let rc: Vec<i32> = dc.read(&rc, 9);
    let block = program.kernel("__parent_block_invoke_3_kernel");
    let d = dc.device;
    let wg: usize = block.work_group_info(d, CL_KERNEL_WORK_GROUP_SIZE).unwrap();
    let multiple: usize = block
        .work_group_info(d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)
        .unwrap();
    let count: usize = block
        .sub_group_info(d, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, &[32])
        .unwrap();
    let max_size: usize = block
        .sub_group_info(d, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[32])
        .unwrap();
    let want = [0, 0, wg, multiple, count, max_size, 1, 0, 0];
    let want: Vec<i32> = want.iter().map(|&v| v as i32).collect();
    assert_eq!(rc, want);
}
