//! OpenCL 2.0 device-side enqueue (`__opencl_c_device_enqueue`): on-device queues
//! (creation errors, sizes, the replaceable default queue, `queue_t` kernel
//! arguments), and kernels that enqueue blocks: captured values, 1D/2D ND-ranges,
//! `__local` block arguments, event dependencies and user events, nested enqueues,
//! the `get_kernel_*` queries and enqueue errors, each checked against a host
//! reference.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const FEATURE: &str = "__opencl_c_device_enqueue";
const CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES: cl_uint = 0x1070;
const CL_DEVICE_QUEUE_SUPPORTED: u64 = 1;
const CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT: u64 = 2;
const CL_DEVICE_OPENCL_C_FEATURES: cl_uint = 0x106F;
const CL_QUEUE_DEVICE_DEFAULT: cl_uint = 0x1095;
const CL_INVALID_DEVICE_QUEUE: cl_int = -70;

extern "C" {
    fn clSetDefaultDeviceCommandQueue(
        context: cl_context,
        device: cl_device_id,
        command_queue: cl_command_queue,
    ) -> cl_int;
}

/// The test context, or `None` (skipped) when the device has no device-side enqueue.
/// On cranecl the feature is on unless `CRANECL_DEVICE_ENQUEUE=0`
/// (`device_enqueue_is_claimed_exactly_when_enabled` checks the opt-out).
fn setup() -> Option<DeviceContext> {
    if testing_cranecl() && std::env::var("CRANECL_DEVICE_ENQUEUE").as_deref() == Ok("0") {
        return None;
    }
    let dc = DeviceContext::new();
    let features = device_info_bytes(dc.device, CL_DEVICE_OPENCL_C_FEATURES).unwrap_or_default();
    let names = String::from_utf8_lossy(&features);
    require(names.contains(FEATURE), FEATURE).then_some(dc)
}

/// `clCreateCommandQueueWithProperties` with `props` (0-terminated by this function).
fn try_queue(dc: &DeviceContext, props: &[cl_ulong]) -> ClResult<Queue> {
    let mut list = props.to_vec();
    list.push(0);
    let mut err = 0;
    // SAFETY: valid context and device, 0-terminated property list.
    let q = unsafe {
        clCreateCommandQueueWithProperties(dc.context.raw(), dc.device, list.as_ptr(), &mut err)
    };
    check(err, "clCreateCommandQueueWithProperties")?;
    // SAFETY: creation succeeded; we own the reference.
    Ok(unsafe { Queue::from_raw(q) })
}

fn device_queue(dc: &DeviceContext, default: bool) -> Queue {
    let mut bits = CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    if default {
        bits |= CL_QUEUE_ON_DEVICE_DEFAULT;
    }
    try_queue(dc, &[CL_QUEUE_PROPERTIES as cl_ulong, bits]).expect("device queue")
}

fn queue_info<T: Pod>(q: &Queue, param: cl_uint) -> ClResult<T> {
    query_value("clGetCommandQueueInfo", |n, p, r| {
        // SAFETY: pointers from query_value.
        unsafe { clGetCommandQueueInfo(q.raw(), param, n, p, r) }
    })
}

fn code(r: ClResult<Queue>) -> cl_int {
    match r {
        Ok(_) => CL_SUCCESS,
        Err(e) => e.code,
    }
}

#[test]
fn device_reports_on_device_queues() {
    let Some(dc) = setup() else { return };
    let caps: u64 = device_info(dc.device, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES).unwrap();
    assert_eq!(
        caps,
        CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT
    );
    let preferred: cl_uint =
        device_info(dc.device, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE).unwrap();
    let max: cl_uint = device_info(dc.device, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE).unwrap();
    assert!(preferred >= 16 * 1024 && max >= 256 * 1024 && preferred <= max);
    let queues: cl_uint = device_info(dc.device, CL_DEVICE_MAX_ON_DEVICE_QUEUES).unwrap();
    let events: cl_uint = device_info(dc.device, CL_DEVICE_MAX_ON_DEVICE_EVENTS).unwrap();
    assert!(queues >= 1 && events >= 1024);
    let props: cl_command_queue_properties =
        device_info(dc.device, CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES).unwrap();
    assert_eq!(
        props,
        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE
    );
}

#[test]
fn queue_creation_errors_and_info() {
    let Some(dc) = setup() else { return };
    let max: cl_uint = device_info(dc.device, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE).unwrap();
    let preferred: cl_uint =
        device_info(dc.device, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE).unwrap();
    let p = CL_QUEUE_PROPERTIES as cl_ulong;
    let s = CL_QUEUE_SIZE as cl_ulong;
    // On-device queues must be out-of-order.
    assert_eq!(
        code(try_queue(&dc, &[p, CL_QUEUE_ON_DEVICE])),
        CL_INVALID_VALUE
    );
    let ooo_dev = CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    assert_eq!(
        code(try_queue(&dc, &[p, ooo_dev, s, u64::from(max) + 1])),
        CL_INVALID_VALUE
    );
    // A size without CL_QUEUE_ON_DEVICE, a default without it.
    assert_eq!(code(try_queue(&dc, &[p, 0, s, 1024])), CL_INVALID_VALUE);
    assert_eq!(
        code(try_queue(
            &dc,
            &[
                p,
                CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
            ]
        )),
        CL_INVALID_VALUE
    );
    let sized = try_queue(&dc, &[p, ooo_dev, s, 64 * 1024]).unwrap();
    assert_eq!(
        queue_info::<cl_uint>(&sized, CL_QUEUE_SIZE).unwrap(),
        64 * 1024
    );
    let plain = device_queue(&dc, false);
    assert_eq!(
        queue_info::<cl_uint>(&plain, CL_QUEUE_SIZE).unwrap(),
        preferred
    );
    // A host queue has no size.
    assert_eq!(
        queue_info::<cl_uint>(&dc.queue, CL_QUEUE_SIZE)
            .unwrap_err()
            .code,
        CL_INVALID_COMMAND_QUEUE
    );
    // The default: the queue created with ON_DEVICE_DEFAULT, replaceable.
    let default = device_queue(&dc, true);
    let current: usize = queue_info(&plain, CL_QUEUE_DEVICE_DEFAULT).unwrap();
    assert_eq!(current, default.raw() as usize);
    // Asking for the default again returns it (one more reference).
    let again = device_queue(&dc, true);
    assert_eq!(again.raw(), default.raw());
    drop(again);
    // SAFETY: valid handles.
    let rc = unsafe { clSetDefaultDeviceCommandQueue(dc.context.raw(), dc.device, plain.raw()) };
    assert_eq!(rc, CL_SUCCESS);
    let current: usize = queue_info(&default, CL_QUEUE_DEVICE_DEFAULT).unwrap();
    assert_eq!(current, plain.raw() as usize);
    // A host queue cannot be the default device queue.
    // SAFETY: valid handles.
    let rc = unsafe { clSetDefaultDeviceCommandQueue(dc.context.raw(), dc.device, dc.queue.raw()) };
    assert_eq!(rc, CL_INVALID_COMMAND_QUEUE);
}

const QUEUE_ARG: &str = r#"
kernel void take_queue(queue_t q, global int* out) {
    size_t i = get_global_id(0);
    out[i] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                            ^{ out[8 + i] = 7 + (int)get_global_id(0); });
}
"#;

#[test]
fn queue_arguments_must_be_device_queues() {
    let Some(dc) = setup() else { return };
    let program = dc.build(QUEUE_ARG, "-cl-std=CL2.0");
    let k = program.kernel("take_queue");
    let null = 0usize;
    let size = std::mem::size_of::<cl_command_queue>();
    assert_eq!(
        k.try_set_arg_bytes(0, Some(as_bytes(&[null])), size)
            .unwrap_err()
            .code,
        CL_INVALID_DEVICE_QUEUE
    );
    assert_eq!(
        k.try_set_arg_bytes(0, Some(as_bytes(&[dc.queue.raw() as usize])), size)
            .unwrap_err()
            .code,
        CL_INVALID_DEVICE_QUEUE
    );
    let dq = device_queue(&dc, true);
    assert_eq!(
        k.try_set_arg_bytes(0, Some(as_bytes(&[dq.raw() as usize])), 4)
            .unwrap_err()
            .code,
        CL_INVALID_ARG_SIZE
    );
    k.try_set_arg_bytes(0, Some(as_bytes(&[dq.raw() as usize])), size)
        .expect("device queue argument");
    let out = dc.buffer_zeroed::<i32>(16);
    k.arg_buffer(1, &out);
    dc.run(&k, &[4], Some(&[4]));
    let got: Vec<i32> = dc.read(&out, 16);
    let mut want = vec![0; 16];
    want[8..12].copy_from_slice(&[7; 4]);
    assert_eq!(got, want);
}

const BLOCKS: &str = r#"
kernel void captured(global int* out, int base) {
    size_t i = get_global_id(0);
    int mine = base + (int)i * 100;
    global int* dst = out + i * 4;
    int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(4),
                           ^{ dst[get_global_id(0)] = mine + (int)get_global_id(0); });
    out[64 + i] = r;
}

kernel void two_d(global int* out) {
    size_t g[2] = {6, 4};
    size_t l[2] = {3, 2};
    size_t o[2] = {1, 2};
    int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP,
                           ndrange_2D(o, g, l), ^{
        size_t x = get_global_id(0) - 1, y = get_global_id(1) - 2;
        out[y * 6 + x] = (int)(get_local_id(0) + 10 * get_local_id(1)
                               + 100 * get_group_id(0) + 1000 * get_group_id(1)
                               + 10000 * get_work_dim());
    });
    out[24] = r;
}

kernel void local_args(global int* in, global int* out) {
    int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(32, 8),
        ^(local void* a, local void* b) {
            local int* la = (local int*)a;
            local int* lb = (local int*)b;
            size_t lid = get_local_id(0);
            la[lid] = in[get_global_id(0)];
            lb[7 - lid] = 2 * in[get_global_id(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0) {
                int s = 0;
                for (int j = 0; j < 8; j++) s += la[j] + lb[j];
                out[get_group_id(0)] = s;
            }
        }, 8u * sizeof(int), 8u * sizeof(int));
    out[4] = r;
}

kernel void chained(global int* out) {
    queue_t q = get_default_queue();
    clk_event_t first, second, user = create_user_event();
    out[10] = is_valid_event(user);
    int r0 = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &user, &first,
                            ^{ out[0] = 5; });
    int r1 = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &first, &second,
                            ^{ out[1] = out[0] * 3; });
    clk_event_t both[2] = {first, second};
    int r2 = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 2, both, NULL,
                            ^{ out[2] = out[1] + out[0]; });
    set_user_event_status(user, CL_COMPLETE);
    out[11] = is_valid_event(first);
    release_event(user);
    release_event(first);
    release_event(second);
    out[3] = r0 * 100 + r1 * 10 + r2;
}

void nest(global int* counter, int level) {
    atomic_inc(counter);
    if (level > 0) {
        enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(2),
                       ^{ nest(counter, level - 1); });
    }
}

kernel void nested(global int* counter, int levels) {
    nest(counter, levels);
}

kernel void sub_group_queries(global int* out) {
    void (^b)(void) = ^{
        if (get_global_id(0) == 0) {
            out[4] = (int)get_max_sub_group_size();
            out[5] = (int)get_num_sub_groups();
        }
    };
    out[0] = (int)get_kernel_max_sub_group_size_for_ndrange(ndrange_1D(3, 3), b);
    out[1] = (int)get_kernel_sub_group_count_for_ndrange(ndrange_1D(3, 3), b);
    out[2] = (int)get_kernel_max_sub_group_size_for_ndrange(ndrange_1D(64, 64), b);
    out[3] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(3, 3), b);
}

kernel void queries(global int* out) {
    void (^b)(void) = ^{ out[9] = 1; };
    out[0] = (int)get_kernel_work_group_size(b);
    out[1] = (int)get_kernel_preferred_work_group_size_multiple(b);
    size_t g[1] = {64};
    size_t l[1] = {16};
    // A local size above the device's limit, and a wait list without events.
    out[2] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT,
                            ndrange_1D(4096, 4096), b);
    out[3] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT,
                            ndrange_1D(1), 1, NULL, NULL, b);
    out[4] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT,
                            ndrange_1D(0), b);
}
"#;

fn blocks(dc: &DeviceContext, std: &str) -> Program {
    dc.build(BLOCKS, &format!("-cl-std={std}"))
}

#[test]
fn blocks_see_captured_values_in_1d_and_2d() {
    let Some(dc) = setup() else { return };
    let _dq = device_queue(&dc, true);
    for std in ["CL2.0", "CL3.0"] {
        let program = blocks(&dc, std);
        let k = program.kernel("captured");
        let out = dc.buffer_zeroed::<i32>(80);
        k.arg_buffer(0, &out).arg(1, 1000i32);
        dc.run(&k, &[16], Some(&[8]));
        let got: Vec<i32> = dc.read(&out, 80);
        let mut want = vec![0i32; 80];
        for i in 0..16 {
            for j in 0..4 {
                want[i * 4 + j] = 1000 + i as i32 * 100 + j as i32;
            }
        }
        assert_eq!(got, want, "{std}");

        let k = program.kernel("two_d");
        let out = dc.buffer_zeroed::<i32>(25);
        k.arg_buffer(0, &out);
        dc.run(&k, &[1], None);
        let got: Vec<i32> = dc.read(&out, 25);
        let mut want = vec![0i32; 25];
        for y in 0..4 {
            for x in 0..6 {
                want[y * 6 + x] =
                    (x % 3 + 10 * (y % 2) + 100 * (x / 3) + 1000 * (y / 2) + 20000) as i32;
            }
        }
        assert_eq!(got, want, "{std}");
    }
}

#[test]
fn blocks_with_local_arguments() {
    let Some(dc) = setup() else { return };
    let _dq = device_queue(&dc, true);
    let program = blocks(&dc, "CL2.0");
    let k = program.kernel("local_args");
    let input: Vec<i32> = (0..32).map(|i| i * 7 - 40).collect();
    let inb = dc.buffer_from(&input);
    let out = dc.buffer_zeroed::<i32>(5);
    k.arg_buffer(0, &inb).arg_buffer(1, &out);
    dc.run(&k, &[1], None);
    let got: Vec<i32> = dc.read(&out, 5);
    let mut want: Vec<i32> = input.chunks(8).map(|c| 3 * c.iter().sum::<i32>()).collect();
    want.push(0);
    assert_eq!(got, want);
}

#[test]
fn events_order_children_and_user_events_release_them() {
    let Some(dc) = setup() else { return };
    let _dq = device_queue(&dc, true);
    let program = blocks(&dc, "CL2.0");
    let k = program.kernel("chained");
    let out = dc.buffer_zeroed::<i32>(12);
    k.arg_buffer(0, &out);
    dc.run(&k, &[1], None);
    let got: Vec<i32> = dc.read(&out, 12);
    assert_eq!(&got[..4], &[5, 15, 20, 0]);
    assert_eq!(&got[10..], &[1, 1]);
}

#[test]
fn nested_enqueues_run_every_level() {
    let Some(dc) = setup() else { return };
    let _dq = device_queue(&dc, true);
    let program = blocks(&dc, "CL2.0");
    let k = program.kernel("nested");
    for levels in [0i32, 1, 4] {
        let counter = dc.buffer_zeroed::<i32>(1);
        k.arg_buffer(0, &counter).arg(1, levels);
        dc.run(&k, &[1], None);
        // Level 0 runs once; each level below runs twice as often.
        let want: i32 = (0..=levels).map(|l| 1 << l).sum();
        assert_eq!(dc.read::<i32>(&counter, 1), vec![want], "levels {levels}");
    }
}

#[test]
fn kernel_queries_and_enqueue_errors() {
    let Some(dc) = setup() else { return };
    let _dq = device_queue(&dc, true);
    let program = blocks(&dc, "CL2.0");
    let k = program.kernel("queries");
    let out = dc.buffer_zeroed::<i32>(10);
    k.arg_buffer(0, &out);
    dc.run(&k, &[1], None);
    let got: Vec<i32> = dc.read(&out, 10);
    let max: usize = device_info(dc.device, CL_DEVICE_MAX_WORK_GROUP_SIZE).unwrap();
    assert_eq!(got[0] as usize, max);
    assert!(
        got[1] >= 1 && max.is_multiple_of(got[1] as usize),
        "{got:?}"
    );
    // CLK_INVALID_NDRANGE, CLK_INVALID_EVENT_WAIT_LIST, CLK_INVALID_NDRANGE.
    assert_eq!(&got[2..5], &[-160, -57, -160]);
    // None of the failed enqueues ran its block.
    assert_eq!(got[9], 0);
}

#[test]
fn sub_group_queries_agree_with_what_the_block_sees() {
    let Some(dc) = setup() else { return };
    let _dq = device_queue(&dc, true);
    let program = blocks(&dc, "CL2.0");
    let k = program.kernel("sub_group_queries");
    let out = dc.buffer_from(&[-1i32; 6]);
    k.arg_buffer(0, &out);
    dc.run(&k, &[1], None);
    let got: Vec<i32> = dc.read(&out, 6);
    assert_eq!(got[3], 0, "enqueue of a 3-item work-group: {got:?}");
    // The block, run with 3 work-items, reports the same maximum size and count as
    // the queries; the maximum size does not depend on the local size.
    assert_eq!(got[0], got[4], "max sub-group size: {got:?}");
    assert_eq!(got[1], got[5], "sub-group count: {got:?}");
    assert_eq!(got[1], 1, "{got:?}");
    assert_eq!(got[0], got[2], "{got:?}");
    assert!([4, 8, 16, 32].contains(&got[0]), "{got:?}");
}

const GLOBAL_BLOCK: &str = r#"
constant int (^triple_plus_one)(int) = ^(int x) { return x * 3 + 1; };
kernel void global_block(global int* a) {
    int (^local_block)(int) = ^(int x) { return triple_plus_one(x) - 2; };
    a[get_global_id(0)] = local_block((int)get_global_id(0));
}
"#;

#[test]
fn program_scope_blocks_are_called() {
    let Some(dc) = setup() else { return };
    let k = dc.kernel(GLOBAL_BLOCK, "-cl-std=CL2.0", "global_block");
    let out = dc.buffer_zeroed::<i32>(32);
    k.arg_buffer(0, &out);
    dc.run(&k, &[32], None);
    let want: Vec<i32> = (0..32).map(|x| x * 3 - 1).collect();
    assert_eq!(dc.read::<i32>(&out, 32), want);
}

#[test]
fn no_default_queue_fails_the_enqueue() {
    let Some(dc) = setup() else { return };
    // A fresh context has no default device queue.
    let dc2 = DeviceContext::new();
    let program = dc2.build(BLOCKS, "-cl-std=CL2.0");
    let k = program.kernel("captured");
    let out = dc2.buffer_zeroed::<i32>(80);
    k.arg_buffer(0, &out).arg(1, 1i32);
    dc2.run(&k, &[1], None);
    let got: Vec<i32> = dc2.read(&out, 80);
    // CLK_INVALID_QUEUE; no child ran.
    assert_eq!(got[64], -102);
    assert!(got[..4].iter().all(|&v| v == 0));
    drop(dc);
}

/// cranecl claims device-side enqueue unless `CRANECL_DEVICE_ENQUEUE=0`; with the
/// opt-out the device reports no on-device queues, refuses them, and a kernel calling
/// `enqueue_kernel` fails to build with a log.
#[test]
fn device_enqueue_is_claimed_exactly_when_enabled() {
    let dc = DeviceContext::new();
    if !testing_cranecl() {
        return;
    }
    let on = std::env::var("CRANECL_DEVICE_ENQUEUE").as_deref() != Ok("0");
    let caps: u64 = device_info(dc.device, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES).unwrap();
    assert_eq!(
        caps != 0,
        on,
        "CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES {caps:#x}"
    );
    let features = device_info_bytes(dc.device, CL_DEVICE_OPENCL_C_FEATURES).unwrap();
    assert_eq!(String::from_utf8_lossy(&features).contains(FEATURE), on);
    if on {
        return;
    }
    let bits = CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    assert_eq!(
        code(try_queue(&dc, &[CL_QUEUE_PROPERTIES as cl_ulong, bits])),
        CL_INVALID_QUEUE_PROPERTIES
    );
    let src = "kernel void p(global int *a) {\n\
               enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL,\n\
               ndrange_1D(1), ^{ a[0] = 1; });\n}\n";
    let failure = dc.try_build(src, "-cl-std=CL3.0").map(|_| ()).unwrap_err();
    assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(failure.log.contains("enqueue_kernel"), "{}", failure.log);
}
