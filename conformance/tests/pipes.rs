//! OpenCL 2.0/3.0 pipes through the ICD loader: clCreatePipe and clGetPipeInfo with
//! every error code, pipes refused where buffers are expected (and the other way
//! round), kernel argument info, and producer/consumer kernels with every kind of
//! reservation (none, per work-item, work-group, sub-group) on int, float4 and struct
//! packets, compared as multisets with what the host put in; full and empty pipes,
//! inactive lanes, out-of-order commits and the packet-count queries.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;
use std::ffi::c_void;
use std::ptr;

/// `CL_PIPE_PROPERTIES` (OpenCL 3.0).
const CL_PIPE_PROPERTIES: cl_uint = 0x1122;

fn pipes_supported(ctx: &DeviceContext) -> bool {
    let s: cl_bool = device_info(
        ctx.device,
        cranecl_conformance::consts::CL_DEVICE_PIPE_SUPPORT,
    )
    .expect("CL_DEVICE_PIPE_SUPPORT");
    require(s != 0, "pipes")
}

/// clCreatePipe: the pipe (owned) or the error code.
fn try_pipe(
    ctx: &DeviceContext,
    flags: cl_mem_flags,
    packet: u32,
    max: u32,
    props: Option<&[isize]>,
) -> Result<Buffer, cl_int> {
    let mut err = 0;
    // SAFETY: valid context; `props` is NULL or zero-terminated.
    let m = unsafe {
        clCreatePipe(
            ctx.context.raw(),
            flags,
            packet,
            max,
            props.map_or(ptr::null(), |p| p.as_ptr()),
            &mut err,
        )
    };
    if err != CL_SUCCESS {
        assert!(m.is_null(), "a failed clCreatePipe returns NULL");
        return Err(err);
    }
    // SAFETY: creation succeeded; we own the reference.
    Ok(unsafe { Buffer::from_raw(m) })
}

fn pipe(ctx: &DeviceContext, packet: u32, max: u32) -> Buffer {
    try_pipe(ctx, 0, packet, max, None)
        .unwrap_or_else(|e| panic!("clCreatePipe: {}", error_name(e)))
}

fn pipe_info_bytes(m: cl_mem, param: cl_uint) -> ClResult<Vec<u8>> {
    query_bytes("clGetPipeInfo", |n, p, r| {
        // SAFETY: the pointers come from query_bytes.
        unsafe { clGetPipeInfo(m, param, n, p, r) }
    })
}

fn mem_info<T: Pod>(m: cl_mem, param: cl_uint) -> T {
    query_value("clGetMemObjectInfo", |n, p, r| {
        // SAFETY: the pointers come from query_value.
        unsafe { clGetMemObjectInfo(m, param, n, p, r) }
    })
    .expect("clGetMemObjectInfo")
}

fn set_mem_arg(k: &Kernel, index: u32, m: cl_mem) -> cl_int {
    // SAFETY: a pointer to one cl_mem handle.
    unsafe {
        clSetKernelArg(
            k.raw(),
            index,
            std::mem::size_of::<cl_mem>(),
            (&m as *const cl_mem).cast(),
        )
    }
}

#[test]
fn device_reports_pipe_limits() {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    let args: cl_uint = device_info(ctx.device, CL_DEVICE_MAX_PIPE_ARGS).unwrap();
    let packet: cl_uint = device_info(ctx.device, CL_DEVICE_PIPE_MAX_PACKET_SIZE).unwrap();
    let res: cl_uint = device_info(ctx.device, CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS).unwrap();
    // The full-profile minimums.
    assert!(args >= 16, "{args}");
    assert!(packet >= 1024, "{packet}");
    assert!(res >= 1, "{res}");
    let feats = device_info_bytes(
        ctx.device,
        cranecl_conformance::consts::CL_DEVICE_OPENCL_C_FEATURES,
    )
    .unwrap();
    let names = String::from_utf8_lossy(&feats).to_string();
    assert!(
        names.contains("__opencl_c_pipes"),
        "pipes claimed as a feature"
    );
}

#[test]
fn create_pipe_error_codes() {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    let max: cl_uint = device_info(ctx.device, CL_DEVICE_PIPE_MAX_PACKET_SIZE).unwrap();
    let code = |flags, packet, n, props: Option<&[isize]>| {
        try_pipe(&ctx, flags, packet, n, props)
            .err()
            .map(error_name)
    };
    // Valid: flags 0, READ_WRITE, HOST_NO_ACCESS, both; the largest packet; NULL or an
    // empty property list.
    for flags in [
        0,
        CL_MEM_READ_WRITE,
        CL_MEM_HOST_NO_ACCESS,
        CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS,
    ] {
        assert_eq!(code(flags, 4, 4, None), None, "flags {flags:#x}");
    }
    assert_eq!(code(0, max, 2, None), None);
    // "In all OpenCL versions, properties must be NULL": even an empty list.
    assert_eq!(code(0, 1, 1, Some(&[0])), Some("CL_INVALID_VALUE"));
    // Only READ_WRITE and HOST_NO_ACCESS may be given.
    for flags in [
        CL_MEM_READ_ONLY,
        CL_MEM_WRITE_ONLY,
        CL_MEM_HOST_READ_ONLY,
        CL_MEM_HOST_WRITE_ONLY,
        CL_MEM_ALLOC_HOST_PTR,
        CL_MEM_COPY_HOST_PTR,
        CL_MEM_USE_HOST_PTR,
        1 << 40,
    ] {
        assert_eq!(
            code(flags, 4, 4, None),
            Some("CL_INVALID_VALUE"),
            "flags {flags:#x}"
        );
    }
    // No pipe property exists.
    assert_eq!(
        code(0, 4, 4, Some(&[0x1234, 1, 0])),
        Some("CL_INVALID_VALUE")
    );
    // Sizes.
    assert_eq!(code(0, 0, 4, None), Some("CL_INVALID_PIPE_SIZE"));
    assert_eq!(code(0, max + 1, 4, None), Some("CL_INVALID_PIPE_SIZE"));
    assert_eq!(code(0, 4, 0, None), Some("CL_INVALID_PIPE_SIZE"));
    let mut err = 0;
    // SAFETY: a NULL context.
    let m = unsafe { clCreatePipe(ptr::null_mut(), 0, 4, 4, ptr::null(), &mut err) };
    assert!(m.is_null());
    assert_eq!(error_name(err), "CL_INVALID_CONTEXT");
}

#[test]
fn pipe_info_and_mem_info() {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    let p = pipe(&ctx, 12, 345);
    let u32_of = |b: Vec<u8>| from_bytes::<cl_uint>(&b)[0];
    assert_eq!(
        u32_of(pipe_info_bytes(p.raw(), CL_PIPE_PACKET_SIZE).unwrap()),
        12
    );
    assert_eq!(
        u32_of(pipe_info_bytes(p.raw(), CL_PIPE_MAX_PACKETS).unwrap()),
        345
    );
    assert!(
        pipe_info_bytes(p.raw(), CL_PIPE_PROPERTIES)
            .unwrap()
            .is_empty(),
        "NULL properties"
    );
    let q = try_pipe(&ctx, CL_MEM_HOST_NO_ACCESS, 4, 4, None).unwrap();
    assert_eq!(
        mem_info::<cl_mem_object_type>(p.raw(), CL_MEM_TYPE),
        CL_MEM_OBJECT_PIPE
    );
    assert_eq!(
        mem_info::<cl_mem_flags>(p.raw(), CL_MEM_FLAGS),
        CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS,
        "the default flags"
    );
    assert_eq!(
        mem_info::<cl_mem_flags>(q.raw(), CL_MEM_FLAGS),
        CL_MEM_HOST_NO_ACCESS
    );
    let mut v: cl_uint = 0;
    let call = |m: cl_mem, param: cl_uint, size: usize, v: &mut cl_uint| {
        // SAFETY: `v` holds `size` <= 4 bytes.
        error_name(unsafe {
            clGetPipeInfo(
                m,
                param,
                size,
                (v as *mut cl_uint).cast::<c_void>(),
                ptr::null_mut(),
            )
        })
    };
    assert_eq!(call(p.raw(), 0x1234, 4, &mut v), "CL_INVALID_VALUE");
    assert_eq!(
        call(p.raw(), CL_PIPE_PACKET_SIZE, 2, &mut v),
        "CL_INVALID_VALUE"
    );
    let buf = ctx.buffer_zeroed::<u32>(4);
    assert_eq!(
        call(buf.raw(), CL_PIPE_PACKET_SIZE, 4, &mut v),
        "CL_INVALID_MEM_OBJECT"
    );
    assert_eq!(
        call(ptr::null_mut(), CL_PIPE_PACKET_SIZE, 4, &mut v),
        "CL_INVALID_MEM_OBJECT"
    );
}

#[test]
fn host_cannot_use_a_pipe_as_a_buffer() {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    let p = pipe(&ctx, 4, 16);
    let mut host = [0u32; 4];
    // SAFETY: `host` holds 16 bytes; blocking calls.
    let read = unsafe {
        clEnqueueReadBuffer(
            ctx.queue.raw(),
            p.raw(),
            CL_TRUE,
            0,
            16,
            host.as_mut_ptr().cast(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(error_name(read), "CL_INVALID_MEM_OBJECT");
    // SAFETY: as above.
    let write = unsafe {
        clEnqueueWriteBuffer(
            ctx.queue.raw(),
            p.raw(),
            CL_TRUE,
            0,
            16,
            host.as_ptr().cast(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(error_name(write), "CL_INVALID_MEM_OBJECT");
    let mut err = 0;
    // SAFETY: blocking map of 16 bytes.
    let mapped = unsafe {
        clEnqueueMapBuffer(
            ctx.queue.raw(),
            p.raw(),
            CL_TRUE,
            CL_MAP_READ,
            0,
            16,
            0,
            ptr::null(),
            ptr::null_mut(),
            &mut err,
        )
    };
    assert!(mapped.is_null());
    assert_eq!(error_name(err), "CL_INVALID_MEM_OBJECT");
    let region = cl_buffer_region {
        origin: 0,
        size: 16,
    };
    // SAFETY: a valid region description.
    let sub = unsafe {
        clCreateSubBuffer(
            p.raw(),
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        )
    };
    assert!(sub.is_null());
    assert_eq!(error_name(err), "CL_INVALID_MEM_OBJECT");
}

const ARGS_SRC: &str = r#"
kernel void k(global int* buf, __read_only pipe int rp, __write_only pipe float4 wp) {
    int v;
    if (read_pipe(rp, &v) == 0) buf[0] = v;
}
"#;

#[test]
fn pipe_kernel_arguments() {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    let program = ctx.build(ARGS_SRC, "-cl-std=CL3.0 -cl-kernel-arg-info");
    let k = program.kernel("k");
    let p = pipe(&ctx, 4, 8);
    let buf = ctx.buffer_zeroed::<i32>(4);
    assert_eq!(
        error_name(set_mem_arg(&k, 0, p.raw())),
        "CL_INVALID_ARG_VALUE",
        "a pipe is not a buffer"
    );
    assert_eq!(
        error_name(set_mem_arg(&k, 1, buf.raw())),
        "CL_INVALID_ARG_VALUE",
        "a buffer is not a pipe"
    );
    assert_eq!(
        error_name(set_mem_arg(&k, 1, ptr::null_mut())),
        "CL_INVALID_ARG_VALUE",
        "a pipe argument cannot be NULL"
    );
    // SAFETY: a wrong size with a valid pointer.
    let wrong = unsafe { clSetKernelArg(k.raw(), 1, 4, (&p.raw() as *const cl_mem).cast()) };
    assert_eq!(error_name(wrong), "CL_INVALID_ARG_SIZE");
    assert_eq!(set_mem_arg(&k, 0, buf.raw()), CL_SUCCESS);
    assert_eq!(set_mem_arg(&k, 1, p.raw()), CL_SUCCESS);
    let arg_info = |i: u32, param: cl_uint| -> Vec<u8> {
        query_bytes("clGetKernelArgInfo", |n, v, r| {
            // SAFETY: the pointers come from query_bytes.
            unsafe { clGetKernelArgInfo(k.raw(), i, param, n, v, r) }
        })
        .unwrap()
    };
    for i in [1, 2] {
        let q = from_bytes::<u64>(&arg_info(i, CL_KERNEL_ARG_TYPE_QUALIFIER))[0];
        assert_eq!(
            q & CL_KERNEL_ARG_TYPE_PIPE,
            CL_KERNEL_ARG_TYPE_PIPE,
            "arg {i}"
        );
        let aq = from_bytes::<cl_kernel_arg_address_qualifier>(&arg_info(
            i,
            CL_KERNEL_ARG_ADDRESS_QUALIFIER,
        ))[0];
        assert_eq!(aq, CL_KERNEL_ARG_ADDRESS_GLOBAL, "arg {i}");
    }
    let acc = |i| {
        from_bytes::<cl_kernel_arg_access_qualifier>(&arg_info(i, CL_KERNEL_ARG_ACCESS_QUALIFIER))
            [0]
    };
    assert_eq!(acc(1), CL_KERNEL_ARG_ACCESS_READ_ONLY);
    assert_eq!(acc(2), CL_KERNEL_ARG_ACCESS_WRITE_ONLY);
}

/// A packet type of the round trips: its OpenCL C name, size, and the host's data.
struct PacketType {
    name: &'static str,
    decl: &'static str,
    size: usize,
}

const TYPES: &[PacketType] = &[
    PacketType {
        name: "int",
        decl: "",
        size: 4,
    },
    PacketType {
        name: "float4",
        decl: "",
        size: 16,
    },
    PacketType {
        name: "S",
        decl: "typedef struct { char a; int b; float c; short d; } S;",
        size: 16,
    },
];

/// How the kernels of a round trip reserve.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Convenience,
    WorkItem,
    WorkGroup,
    SubGroup,
}

fn round_trip_source(t: &PacketType, mode: Mode) -> String {
    let n = t.name;
    let body = |dir: &str, other: &str| -> String {
        // `dir` = write/read; `other` is the buffer expression.
        match mode {
            Mode::Convenience => format!("{dir}_pipe(p, &{other});"),
            Mode::WorkItem => format!(
                "reserve_id_t r = reserve_{dir}_pipe(p, 1);
                 if (is_valid_reserve_id(r)) {{ {dir}_pipe(p, r, 0, &{other}); commit_{dir}_pipe(p, r); }}"
            ),
            Mode::WorkGroup => format!(
                "__local reserve_id_t r;
                 r = work_group_reserve_{dir}_pipe(p, get_local_size(0));
                 if (is_valid_reserve_id(r)) {{
                     {dir}_pipe(p, r, get_local_id(0), &{other});
                     work_group_commit_{dir}_pipe(p, r);
                 }}"
            ),
            Mode::SubGroup => format!(
                "reserve_id_t r = sub_group_reserve_{dir}_pipe(p, get_sub_group_size());
                 if (is_valid_reserve_id(r)) {{
                     {dir}_pipe(p, r, get_sub_group_local_id(), &{other});
                     sub_group_commit_{dir}_pipe(p, r);
                 }}"
            ),
        }
    };
    format!(
        "{decl}
        kernel void produce(global {n}* src, __write_only pipe {n} p) {{
            size_t gid = get_global_id(0);
            {w}
        }}
        kernel void consume(__read_only pipe {n} p, global {n}* dst) {{
            size_t gid = get_global_id(0);
            {r}
        }}
        kernel void count(__write_only pipe {n} p, global uint* out) {{
            out[0] = get_pipe_num_packets(p);
            out[1] = get_pipe_max_packets(p);
        }}",
        decl = t.decl,
        w = body("write", "src[gid]"),
        r = body("read", "dst[gid]"),
    )
}

/// `count` elements of `size` bytes, every element distinct, struct padding zero.
fn packets(size: usize, count: usize, seed: u64) -> Vec<u8> {
    let mut rng = TestRng::new(seed);
    let mut out = Vec::with_capacity(size * count);
    for i in 0..count {
        let mut e = vec![0u8; size];
        for b in e.iter_mut() {
            *b = rng.next_u64() as u8;
        }
        // Distinct: the first word is the index (also for the struct: `a` is one byte,
        // so put the index in `b` at offset 4 and clear the padding).
        if size == 16 && e.len() == 16 {
            e[1..4].fill(0);
            e[14..16].copy_from_slice(&(rng.next_u64() as u16).to_le_bytes());
        }
        let at = if size == 4 { 0 } else { 4 };
        e[at..at + 4].copy_from_slice(&(i as u32 ^ 0x5a5a_0000).to_le_bytes());
        out.extend_from_slice(&e);
    }
    out
}

fn sorted_chunks(bytes: &[u8], size: usize) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = bytes.chunks(size).map(|c| c.to_vec()).collect();
    v.sort();
    v
}

fn round_trip(mode: Mode) {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    const N: usize = 1024;
    for t in TYPES {
        // The struct's padding is compared too: the float and the short are bytes to us.
        let src = round_trip_source(t, mode);
        let program = ctx.build(&src, "-cl-std=CL3.0");
        let (produce, consume, count) = (
            program.kernel("produce"),
            program.kernel("consume"),
            program.kernel("count"),
        );
        let data = packets(t.size, N, 7 + t.size as u64);
        let input = ctx.buffer_from(&data);
        let output = ctx.buffer_from(&vec![0u8; t.size * N]);
        let counts = ctx.buffer_zeroed::<u32>(2);
        // Room for exactly N packets.
        let p = pipe(&ctx, t.size as u32, N as u32);
        produce.arg_buffer(0, &input).arg_buffer(1, &p);
        consume.arg_buffer(0, &p).arg_buffer(1, &output);
        count.arg_buffer(0, &p).arg_buffer(1, &counts);
        ctx.run(&produce, &[N], Some(&[64]));
        ctx.run(&count, &[1], None);
        assert_eq!(
            ctx.read::<u32>(&counts, 2),
            vec![N as u32, N as u32],
            "{} {mode:?}: packets after producing",
            t.name
        );
        ctx.run(&consume, &[N], Some(&[64]));
        ctx.run(&count, &[1], None);
        assert_eq!(
            ctx.read::<u32>(&counts, 2)[0],
            0,
            "{} {mode:?}: drained",
            t.name
        );
        let got = ctx.read::<u8>(&output, t.size * N);
        assert!(
            sorted_chunks(&got, t.size) == sorted_chunks(&data, t.size),
            "{} {mode:?}: the consumer got another multiset of packets",
            t.name
        );
    }
}

#[test]
fn round_trip_without_reservations() {
    round_trip(Mode::Convenience);
}

#[test]
fn round_trip_with_work_item_reservations() {
    round_trip(Mode::WorkItem);
}

#[test]
fn round_trip_with_work_group_reservations() {
    round_trip(Mode::WorkGroup);
}

#[test]
fn round_trip_with_sub_group_reservations() {
    round_trip(Mode::SubGroup);
}

const LIMITS_SRC: &str = r#"
kernel void produce(global const int* src, __write_only pipe int p, global int* status) {
    size_t gid = get_global_id(0);
    // Odd work-items are inactive lanes: they must not write.
    if (gid % 2 == 0) status[gid] = write_pipe(p, &src[gid]);
    else status[gid] = 7;
}
kernel void consume(__read_only pipe int p, global int* dst, global int* status) {
    size_t gid = get_global_id(0);
    status[gid] = read_pipe(p, &dst[gid]);
}
// One work-item holds `n` reservations at once and commits them last-first.
kernel void hold(__write_only pipe int p, global const int* src, global int* out, int n) {
    reserve_id_t ids[64];
    for (int i = 0; i < n; i++) {
        ids[i] = reserve_write_pipe(p, 2);
        out[i] = is_valid_reserve_id(ids[i]);
        if (is_valid_reserve_id(ids[i])) {
            write_pipe(p, ids[i], 1, &src[2 * i + 1]);
            write_pipe(p, ids[i], 0, &src[2 * i]);
            // Out of the reservation: refused.
            out[64 + i] = write_pipe(p, ids[i], 2, &src[0]);
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        if (is_valid_reserve_id(ids[i])) commit_write_pipe(p, ids[i]);
    }
}
"#;

#[test]
fn full_and_empty_pipes_and_inactive_lanes() {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    let program = ctx.build(LIMITS_SRC, "-cl-std=CL2.0");
    let (produce, consume) = (program.kernel("produce"), program.kernel("consume"));
    const N: usize = 512;
    const CAP: usize = 100;
    let data: Vec<i32> = (0..N as i32).map(|i| i * 3 + 1).collect();
    let input = ctx.buffer_from(&data);
    let out = ctx.buffer_zeroed::<i32>(N);
    let st_w = ctx.buffer_zeroed::<i32>(N);
    let st_r = ctx.buffer_zeroed::<i32>(N);
    let p = pipe(&ctx, 4, CAP as u32);
    produce
        .arg_buffer(0, &input)
        .arg_buffer(1, &p)
        .arg_buffer(2, &st_w);
    consume
        .arg_buffer(0, &p)
        .arg_buffer(1, &out)
        .arg_buffer(2, &st_r);
    ctx.run(&produce, &[N], Some(&[32]));
    let sw = ctx.read::<i32>(&st_w, N);
    assert!(
        sw.iter().skip(1).step_by(2).all(|&s| s == 7),
        "odd lanes untouched"
    );
    let written: Vec<i32> = (0..N)
        .step_by(2)
        .filter(|&i| sw[i] == 0)
        .map(|i| data[i])
        .collect();
    assert_eq!(written.len(), CAP, "exactly the capacity fits");
    assert!(
        (0..N).step_by(2).all(|i| sw[i] <= 0),
        "a write to a full pipe returns a negative value"
    );
    ctx.run(&consume, &[N], Some(&[32]));
    let sr = ctx.read::<i32>(&st_r, N);
    let got = ctx.read::<i32>(&out, N);
    let mut read: Vec<i32> = (0..N).filter(|&i| sr[i] == 0).map(|i| got[i]).collect();
    assert_eq!(read.len(), CAP, "an empty pipe refuses the other reads");
    assert!(sr.iter().all(|&s| s <= 0));
    read.sort();
    let mut want = written;
    want.sort();
    assert_eq!(read, want);
}

#[test]
fn many_reservations_commit_out_of_order() {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    let program = ctx.build(LIMITS_SRC, "-cl-std=CL2.0");
    let (hold, consume) = (program.kernel("hold"), program.kernel("consume"));
    // 40 reservations of 2 into 64 packets: 32 succeed.
    let data: Vec<i32> = (0..128).map(|i| 1000 + i).collect();
    let input = ctx.buffer_from(&data);
    let flags = ctx.buffer_zeroed::<i32>(128);
    let p = pipe(&ctx, 4, 64);
    hold.arg_buffer(0, &p)
        .arg_buffer(1, &input)
        .arg_buffer(2, &flags)
        .arg(3, 40i32);
    ctx.run(&hold, &[1], None);
    let f = ctx.read::<i32>(&flags, 128);
    assert_eq!(&f[..32], &[1; 32], "valid reservations");
    assert_eq!(&f[32..40], &[0; 8], "the pipe is full");
    assert!(
        f[64..96].iter().all(|&s| s < 0),
        "index outside a reservation"
    );
    let out = ctx.buffer_zeroed::<i32>(80);
    let st = ctx.buffer_zeroed::<i32>(80);
    consume
        .arg_buffer(0, &p)
        .arg_buffer(1, &out)
        .arg_buffer(2, &st);
    ctx.run(&consume, &[80], None);
    let s = ctx.read::<i32>(&st, 80);
    let got = ctx.read::<i32>(&out, 80);
    let mut read: Vec<i32> = (0..80).filter(|&i| s[i] == 0).map(|i| got[i]).collect();
    read.sort();
    assert_eq!(read, data[..64].to_vec());
}

const GROUP_LOOP_SRC: &str = r#"
// Three work-group reservations per group in a loop (one collective met three times),
// with a barrier between writing and committing; groups of 50 work-items leave the
// last sub-group partial.
kernel void produce(global const int* src, __write_only pipe int p, global int* ok) {
    size_t gid = get_global_id(0);
    for (int round = 0; round < 3; round++) {
        reserve_id_t r = work_group_reserve_write_pipe(p, get_local_size(0));
        int valid = is_valid_reserve_id(r);
        if (valid) write_pipe(p, r, get_local_id(0), &src[gid * 3 + round]);
        barrier(CLK_GLOBAL_MEM_FENCE);
        if (valid) work_group_commit_write_pipe(p, r);
        ok[gid * 3 + round] = valid;
    }
}
kernel void consume(__read_only pipe int p, global int* dst, global int* status) {
    size_t gid = get_global_id(0);
    status[gid] = read_pipe(p, &dst[gid]);
}
"#;

#[test]
fn work_group_reservations_in_a_loop_with_partial_sub_groups() {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    let program = ctx.build(GROUP_LOOP_SRC, "-cl-std=CL3.0");
    let (produce, consume) = (program.kernel("produce"), program.kernel("consume"));
    const LOCAL: usize = 50;
    const GROUPS: usize = 6;
    const N: usize = LOCAL * GROUPS;
    // Room for 10 of the 18 group reservations: the others fail for the whole group.
    const CAP: usize = LOCAL * 10 + 7;
    let data: Vec<i32> = (0..3 * N as i32).map(|i| i * 7 + 3).collect();
    let input = ctx.buffer_from(&data);
    let ok = ctx.buffer_zeroed::<i32>(3 * N);
    let p = pipe(&ctx, 4, CAP as u32);
    produce
        .arg_buffer(0, &input)
        .arg_buffer(1, &p)
        .arg_buffer(2, &ok);
    ctx.run(&produce, &[N], Some(&[LOCAL]));
    let ok = ctx.read::<i32>(&ok, 3 * N);
    // The id is the same in every work-item of a group.
    for g in 0..GROUPS {
        for round in 0..3 {
            let first = ok[g * LOCAL * 3 + round];
            assert!(
                (0..LOCAL).all(|l| ok[(g * LOCAL + l) * 3 + round] == first),
                "group {g} round {round}: one reservation for the group"
            );
        }
    }
    let mut want: Vec<i32> = (0..3 * N)
        .filter(|&i| ok[i] != 0)
        .map(|i| data[i])
        .collect();
    assert_eq!(want.len(), LOCAL * 10, "10 group reservations fit");
    let out = ctx.buffer_zeroed::<i32>(CAP + 10);
    let st = ctx.buffer_zeroed::<i32>(CAP + 10);
    consume
        .arg_buffer(0, &p)
        .arg_buffer(1, &out)
        .arg_buffer(2, &st);
    ctx.run(&consume, &[CAP + 10], None);
    let s = ctx.read::<i32>(&st, CAP + 10);
    let got = ctx.read::<i32>(&out, CAP + 10);
    let mut read: Vec<i32> = (0..CAP + 10)
        .filter(|&i| s[i] == 0)
        .map(|i| got[i])
        .collect();
    read.sort();
    want.sort();
    assert_eq!(read, want);
}

const YIELDING_SRC: &str = r#"
// A compare-exchange retry loop makes the kernel one whose sub-groups may yield, so
// the work-group reservation is met in any sub-group order (two points).
kernel void produce(global const int* src, __write_only pipe int p, volatile global int* counter) {
    size_t gid = get_global_id(0);
    int old = *counter, seen;
    while ((seen = atomic_cmpxchg(counter, old, old + 1)) != old) old = seen;
    reserve_id_t r = work_group_reserve_write_pipe(p, get_local_size(0));
    if (is_valid_reserve_id(r)) {
        write_pipe(p, r, get_local_id(0), &src[gid]);
        work_group_commit_write_pipe(p, r);
    }
}
kernel void consume(__read_only pipe int p, global int* dst, global int* status) {
    size_t gid = get_global_id(0);
    status[gid] = read_pipe(p, &dst[gid]);
}
"#;

#[test]
fn work_group_reservations_in_a_kernel_that_yields() {
    let ctx = DeviceContext::new();
    if !pipes_supported(&ctx) {
        return;
    }
    let program = ctx.build(YIELDING_SRC, "-cl-std=CL2.0");
    let (produce, consume) = (program.kernel("produce"), program.kernel("consume"));
    const N: usize = 256;
    let data: Vec<i32> = (0..N as i32).map(|i| i * 5 - 100).collect();
    let input = ctx.buffer_from(&data);
    let counter = ctx.buffer_zeroed::<i32>(1);
    let p = pipe(&ctx, 4, N as u32);
    produce
        .arg_buffer(0, &input)
        .arg_buffer(1, &p)
        .arg_buffer(2, &counter);
    ctx.run(&produce, &[N], Some(&[64]));
    assert_eq!(ctx.read::<i32>(&counter, 1), vec![N as i32]);
    let out = ctx.buffer_zeroed::<i32>(N);
    let st = ctx.buffer_zeroed::<i32>(N);
    consume
        .arg_buffer(0, &p)
        .arg_buffer(1, &out)
        .arg_buffer(2, &st);
    ctx.run(&consume, &[N], None);
    assert_eq!(ctx.read::<i32>(&st, N), vec![0; N]);
    let mut got = ctx.read::<i32>(&out, N);
    got.sort();
    let mut want = data;
    want.sort();
    assert_eq!(got, want);
}
