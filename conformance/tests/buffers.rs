//! Buffers: every host-pointer flag, zero-copy `CL_MEM_USE_HOST_PTR`, read / write /
//! copy / fill / map / unmap with offsets, sub-buffers, memory-object queries, and
//! in-order queue + event behaviour around transfers.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::c_void;
use std::ptr;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// Page-aligned host memory that outlives the buffers made over it.
struct HostMem {
    ptr: *mut u8,
    layout: Layout,
}

impl HostMem {
    fn new(bytes: usize) -> Self {
        let layout = Layout::from_size_align(bytes, 4096).expect("valid layout");
        // SAFETY: non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        HostMem { ptr, layout }
    }

    fn as_u32(&mut self) -> &mut [u32] {
        // SAFETY: aligned, zero-initialised, size is a multiple of 4 in these tests; the
        // device only writes while no host slice is alive in these tests.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast(), self.layout.size() / 4) }
    }
}

impl Drop for HostMem {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

fn create(
    ctx: &DeviceContext,
    flags: cl_mem_flags,
    size: usize,
    host: *mut c_void,
) -> ClResult<Buffer> {
    let mut err = 0;
    // SAFETY: `host` is NULL or valid for `size` bytes (and outlives the buffer for
    // USE_HOST_PTR, which the callers guarantee).
    let mem = unsafe { clCreateBuffer(ctx.context.raw(), flags, size, host, &mut err) };
    check(
        err,
        format!("clCreateBuffer(flags {flags:#x}, {size} bytes)"),
    )?;
    // SAFETY: creation succeeded.
    Ok(unsafe { Buffer::from_raw(mem) })
}

fn mem_info<T: Pod>(buffer: &Buffer, param: cl_uint) -> T {
    query_value(&format!("clGetMemObjectInfo({param:#x})"), |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetMemObjectInfo(buffer.raw(), param, n, p, r) }
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

fn map(
    ctx: &DeviceContext,
    buffer: &Buffer,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
) -> ClResult<*mut c_void> {
    let mut err = 0;
    // SAFETY: valid queue and buffer; blocking map.
    let p = unsafe {
        clEnqueueMapBuffer(
            ctx.queue.raw(),
            buffer.raw(),
            CL_TRUE,
            flags,
            offset,
            size,
            0,
            ptr::null(),
            ptr::null_mut(),
            &mut err,
        )
    };
    check(
        err,
        format!("clEnqueueMapBuffer(offset {offset}, {size} bytes)"),
    )?;
    assert!(!p.is_null(), "map returned NULL with CL_SUCCESS");
    Ok(p)
}

fn unmap(ctx: &DeviceContext, buffer: &Buffer, p: *mut c_void) {
    // SAFETY: `p` was returned by a map of this buffer.
    let code = unsafe {
        clEnqueueUnmapMemObject(
            ctx.queue.raw(),
            buffer.raw(),
            p,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    check(code, "clEnqueueUnmapMemObject").unwrap();
    ctx.finish();
}

const ADD_ONE: &str =
    "kernel void add_one(global uint* p) { size_t i = get_global_id(0); p[i] = p[i] + 1u; }";

#[test]
fn host_pointer_flags() {
    let ctx = DeviceContext::new();
    let program = ctx.build(ADD_ONE, "");
    let data: Vec<u32> = (0..1024).collect();
    let bytes = data.len() * 4;
    for flags in [
        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR,
        CL_MEM_COPY_HOST_PTR,
        CL_MEM_READ_WRITE | CL_MEM_HOST_READ_ONLY | CL_MEM_COPY_HOST_PTR,
    ] {
        let buf = create(&ctx, flags, bytes, data.as_ptr() as *mut c_void).unwrap();
        let kernel = program.kernel("add_one");
        kernel.arg_buffer(0, &buf);
        ctx.run(&kernel, &[data.len()], None);
        let got: Vec<u32> = ctx.read(&buf, data.len());
        let want: Vec<u32> = data.iter().map(|x| x + 1).collect();
        assert_eq!(got, want, "flags {flags:#x}");
        assert_eq!(
            mem_info::<cl_ulong>(&buf, CL_MEM_FLAGS),
            flags,
            "CL_MEM_FLAGS echoes the flags"
        );
        assert_eq!(mem_info::<usize>(&buf, CL_MEM_SIZE), bytes);
    }
    for flags in [
        CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
        CL_MEM_READ_ONLY,
        CL_MEM_WRITE_ONLY,
        CL_MEM_HOST_WRITE_ONLY,
    ] {
        let buf = create(&ctx, flags, bytes, ptr::null_mut()).unwrap();
        ctx.write_at(&buf, 0, &data);
        if flags & CL_MEM_HOST_WRITE_ONLY == 0 {
            assert_eq!(ctx.read::<u32>(&buf, data.len()), data, "flags {flags:#x}");
        }
    }
}

#[test]
fn host_access_flags_are_enforced() {
    let ctx = DeviceContext::new();
    let buf = create(&ctx, CL_MEM_HOST_WRITE_ONLY, 64, ptr::null_mut()).unwrap();
    let err = ctx.try_read_at::<u32>(&buf, 0, 16).unwrap_err();
    assert_eq!(
        err.code, CL_INVALID_OPERATION,
        "read of a HOST_WRITE_ONLY buffer"
    );
    let buf = create(&ctx, CL_MEM_HOST_NO_ACCESS, 64, ptr::null_mut()).unwrap();
    let err = ctx.try_read_at::<u32>(&buf, 0, 16).unwrap_err();
    assert_eq!(
        err.code, CL_INVALID_OPERATION,
        "read of a HOST_NO_ACCESS buffer"
    );
    let buf = create(&ctx, CL_MEM_HOST_READ_ONLY, 64, ptr::null_mut()).unwrap();
    let data = [7u32; 16];
    // SAFETY: data valid for 64 bytes; blocking.
    let code = unsafe {
        clEnqueueWriteBuffer(
            ctx.queue.raw(),
            buf.raw(),
            CL_TRUE,
            0,
            64,
            data.as_ptr().cast(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(
        code, CL_INVALID_OPERATION,
        "write to a HOST_READ_ONLY buffer"
    );
}

#[test]
fn invalid_buffer_creation() {
    let ctx = DeviceContext::new();
    let mut host = [0u8; 64];
    let hp = host.as_mut_ptr().cast::<c_void>();
    let cases: [(cl_mem_flags, usize, *mut c_void, cl_int, &str); 7] = [
        (
            CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
            64,
            ptr::null_mut(),
            CL_INVALID_VALUE,
            "READ_ONLY|WRITE_ONLY",
        ),
        (
            CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR,
            64,
            hp,
            CL_INVALID_VALUE,
            "USE|COPY",
        ),
        (
            CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,
            64,
            hp,
            CL_INVALID_VALUE,
            "USE|ALLOC",
        ),
        (
            CL_MEM_COPY_HOST_PTR,
            64,
            ptr::null_mut(),
            CL_INVALID_HOST_PTR,
            "COPY without pointer",
        ),
        (
            CL_MEM_READ_WRITE,
            64,
            hp,
            CL_INVALID_HOST_PTR,
            "pointer without USE/COPY",
        ),
        (
            CL_MEM_READ_WRITE,
            0,
            ptr::null_mut(),
            CL_INVALID_BUFFER_SIZE,
            "size 0",
        ),
        (
            1 << 40,
            64,
            ptr::null_mut(),
            CL_INVALID_VALUE,
            "unknown flag bit",
        ),
    ];
    for (flags, size, host_ptr, want, what) in cases {
        let err = create(&ctx, flags, size, host_ptr).map(|_| ()).unwrap_err();
        assert_eq!(err.code, want, "{what}: got {}", error_name(err.code));
    }
    let max: cl_ulong = device_info(ctx.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE).unwrap();
    let err = create(
        &ctx,
        CL_MEM_READ_WRITE,
        (max as usize).saturating_add(1),
        ptr::null_mut(),
    )
    .map(|_| ())
    .unwrap_err();
    assert_eq!(
        err.code, CL_INVALID_BUFFER_SIZE,
        "size above CL_DEVICE_MAX_MEM_ALLOC_SIZE"
    );
}

#[test]
fn use_host_ptr_maps_to_the_host_memory() {
    let ctx = DeviceContext::new();
    let mut host = HostMem::new(4096);
    for (i, v) in host.as_u32().iter_mut().enumerate() {
        *v = i as u32 * 3;
    }
    let buf = create(
        &ctx,
        CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
        4096,
        host.ptr.cast(),
    )
    .unwrap();
    assert_eq!(
        mem_info::<usize>(&buf, CL_MEM_HOST_PTR),
        host.ptr as usize,
        "CL_MEM_HOST_PTR"
    );
    let kernel = ctx.kernel(ADD_ONE, "", "add_one");
    kernel.arg_buffer(0, &buf);
    ctx.run(&kernel, &[1024], None);
    let mapped = map(&ctx, &buf, CL_MAP_READ | CL_MAP_WRITE, 256, 1024).unwrap();
    assert_eq!(
        mapped as usize,
        host.ptr as usize + 256,
        "a USE_HOST_PTR map returns host_ptr + offset"
    );
    // SAFETY: the mapped region is 1024 bytes = 256 u32 starting at element 64.
    let view = unsafe { std::slice::from_raw_parts_mut(mapped.cast::<u32>(), 256) };
    for (k, v) in view.iter().enumerate() {
        assert_eq!(*v, (64 + k as u32) * 3 + 1);
    }
    view[0] = 0xdead_beef;
    assert_eq!(mem_info::<cl_uint>(&buf, CL_MEM_MAP_COUNT), 1);
    unmap(&ctx, &buf, mapped);
    assert_eq!(ctx.read::<u32>(&buf, 1024)[64], 0xdead_beef);
    if testing_cranecl() {
        // Zero-copy: kernel results are in the application's memory without a map.
        ctx.run(&kernel, &[1024], None);
        assert_eq!(host.as_u32()[5], 5 * 3 + 2);
        assert_eq!(host.as_u32()[64], 0xdead_beef + 1);
    }
    drop(kernel);
    drop(buf);
}

#[test]
fn read_write_with_offsets_and_events() {
    let ctx = DeviceContext::new();
    let buf = ctx.buffer_zeroed::<u32>(256);
    let data: Vec<u32> = (100..164).collect();
    let mut write_event: cl_event = ptr::null_mut();
    // SAFETY: data outlives the command (we wait before returning), 64 u32 = 256 bytes.
    let code = unsafe {
        clEnqueueWriteBuffer(
            ctx.queue.raw(),
            buf.raw(),
            CL_FALSE,
            400,
            256,
            data.as_ptr().cast(),
            0,
            ptr::null(),
            &mut write_event,
        )
    };
    check(code, "clEnqueueWriteBuffer (non-blocking)").unwrap();
    // SAFETY: the enqueue returned an event we own.
    let write_event = unsafe { Event::from_raw(write_event) };
    let mut out = vec![0u32; 80];
    let mut read_event: cl_event = ptr::null_mut();
    let wait = [write_event.raw()];
    // SAFETY: out outlives the command (waited below); wait list of one event.
    let code = unsafe {
        clEnqueueReadBuffer(
            ctx.queue.raw(),
            buf.raw(),
            CL_FALSE,
            368,
            320,
            out.as_mut_ptr().cast(),
            1,
            wait.as_ptr(),
            &mut read_event,
        )
    };
    check(code, "clEnqueueReadBuffer (non-blocking)").unwrap();
    // SAFETY: the enqueue returned an event we own.
    let read_event = unsafe { Event::from_raw(read_event) };
    let events = [write_event.raw(), read_event.raw()];
    // SAFETY: two valid events.
    check(
        unsafe { clWaitForEvents(2, events.as_ptr()) },
        "clWaitForEvents",
    )
    .unwrap();
    assert_eq!(read_event.status().unwrap(), CL_COMPLETE as cl_int);
    assert_eq!(write_event.status().unwrap(), CL_COMPLETE as cl_int);
    let mut want = vec![0u32; 8];
    want.extend(100..164);
    want.extend([0u32; 8]);
    assert_eq!(out, want);
    let ty: cl_uint = query_value("clGetEventInfo(CL_EVENT_COMMAND_TYPE)", |n, p, r| {
        // SAFETY: pointers from query_bytes.
        unsafe { clGetEventInfo(read_event.raw(), CL_EVENT_COMMAND_TYPE, n, p, r) }
    })
    .unwrap();
    assert_eq!(ty, CL_COMMAND_READ_BUFFER);
    // Out of range: offset + size beyond the buffer.
    let err = ctx.try_read_at::<u32>(&buf, 1020, 2).unwrap_err();
    assert_eq!(err.code, CL_INVALID_VALUE);
}

#[test]
fn copy_buffer() {
    let ctx = DeviceContext::new();
    let src_data: Vec<u32> = (0..512).map(|i| i * 7 + 1).collect();
    let src = ctx.buffer_from(&src_data);
    let dst = ctx.buffer_zeroed::<u32>(512);
    // SAFETY: valid queue and buffers; ranges checked by the driver.
    let code = unsafe {
        clEnqueueCopyBuffer(
            ctx.queue.raw(),
            src.raw(),
            dst.raw(),
            40,
            1000,
            800,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    check(code, "clEnqueueCopyBuffer").unwrap();
    ctx.finish();
    let got: Vec<u32> = ctx.read(&dst, 512);
    for (i, v) in got.iter().enumerate() {
        let want = if (250..450).contains(&i) {
            src_data[i - 250 + 10]
        } else {
            0
        };
        assert_eq!(*v, want, "element {i}");
    }
    // Non-overlapping copy inside one buffer is allowed; overlapping is CL_MEM_COPY_OVERLAP.
    // SAFETY: as above.
    let code = unsafe {
        clEnqueueCopyBuffer(
            ctx.queue.raw(),
            src.raw(),
            src.raw(),
            0,
            1024,
            512,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    check(code, "clEnqueueCopyBuffer within one buffer").unwrap();
    ctx.finish();
    let got: Vec<u32> = ctx.read(&src, 512);
    assert_eq!(&got[256..384], &src_data[0..128]);
    // SAFETY: as above.
    let code = unsafe {
        clEnqueueCopyBuffer(
            ctx.queue.raw(),
            src.raw(),
            src.raw(),
            0,
            100,
            200,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(code, CL_MEM_COPY_OVERLAP);
    // SAFETY: as above.
    let code = unsafe {
        clEnqueueCopyBuffer(
            ctx.queue.raw(),
            src.raw(),
            dst.raw(),
            2000,
            0,
            100,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(code, CL_INVALID_VALUE, "source range beyond the buffer");
}

#[test]
fn fill_buffer_with_every_pattern_size() {
    let ctx = DeviceContext::new();
    for pattern_size in [1usize, 2, 4, 8, 16, 32, 64, 128] {
        let buf = ctx.buffer_from(&vec![0xffu8; 1024]);
        let pattern: Vec<u8> = (0..pattern_size).map(|i| (i * 13 + 5) as u8).collect();
        let offset = pattern_size * 3;
        let size = pattern_size * 5;
        // SAFETY: pattern valid for pattern_size bytes (copied during the call).
        let code = unsafe {
            clEnqueueFillBuffer(
                ctx.queue.raw(),
                buf.raw(),
                pattern.as_ptr().cast(),
                pattern_size,
                offset,
                size,
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        check(code, format!("clEnqueueFillBuffer(pattern {pattern_size})")).unwrap();
        ctx.finish();
        let got: Vec<u8> = ctx.read(&buf, 1024);
        for (i, b) in got.iter().enumerate() {
            let want = if (offset..offset + size).contains(&i) {
                pattern[(i - offset) % pattern_size]
            } else {
                0xff
            };
            assert_eq!(*b, want, "pattern size {pattern_size}, byte {i}");
        }
    }
    let buf = ctx.buffer_zeroed::<u8>(64);
    let pattern = [0u8; 3];
    // SAFETY: pattern valid for 3 bytes.
    let code = unsafe {
        clEnqueueFillBuffer(
            ctx.queue.raw(),
            buf.raw(),
            pattern.as_ptr().cast(),
            3,
            0,
            12,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(
        code, CL_INVALID_VALUE,
        "pattern size 3 is not a power of two"
    );
    let pattern = [0u8; 4];
    // SAFETY: pattern valid for 4 bytes.
    let code = unsafe {
        clEnqueueFillBuffer(
            ctx.queue.raw(),
            buf.raw(),
            pattern.as_ptr().cast(),
            4,
            2,
            8,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(
        code, CL_INVALID_VALUE,
        "offset not a multiple of the pattern size"
    );
}

#[test]
fn map_for_write_then_kernel_reads() {
    let ctx = DeviceContext::new();
    let buf = ctx.buffer_zeroed::<u32>(1024);
    let p = map(&ctx, &buf, CL_MAP_WRITE_INVALIDATE_REGION, 0, 4096).unwrap();
    // SAFETY: 4096 mapped bytes.
    let view = unsafe { std::slice::from_raw_parts_mut(p.cast::<u32>(), 1024) };
    for (i, v) in view.iter_mut().enumerate() {
        *v = i as u32 ^ 0x55;
    }
    unmap(&ctx, &buf, p);
    let kernel = ctx.kernel(ADD_ONE, "", "add_one");
    kernel.arg_buffer(0, &buf);
    ctx.run(&kernel, &[1024], None);
    let p = map(&ctx, &buf, CL_MAP_READ, 2048, 2048).unwrap();
    // SAFETY: 2048 mapped bytes.
    let view = unsafe { std::slice::from_raw_parts(p.cast::<u32>(), 512) };
    for (k, v) in view.iter().enumerate() {
        assert_eq!(*v, ((512 + k) as u32 ^ 0x55) + 1);
    }
    unmap(&ctx, &buf, p);
    let err = map(&ctx, &buf, CL_MAP_READ, 4000, 200).unwrap_err();
    assert_eq!(err.code, CL_INVALID_VALUE, "map beyond the buffer");
}

#[test]
fn sub_buffers() {
    let ctx = DeviceContext::new();
    let align_bits: cl_uint = device_info(ctx.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN).unwrap();
    let align = (align_bits / 8) as usize;
    let n = (align * 4 / 4).max(256);
    let parent = ctx.buffer_from(&(0..n as u32 * 2).collect::<Vec<u32>>());
    let region = cl_buffer_region {
        origin: align,
        size: 4 * 64,
    };
    let mut err = 0;
    // SAFETY: region struct valid for the call.
    let sub = unsafe {
        clCreateSubBuffer(
            parent.raw(),
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        )
    };
    check(err, "clCreateSubBuffer").unwrap();
    // SAFETY: creation succeeded.
    let sub = unsafe { Buffer::from_raw(sub) };
    assert_eq!(mem_info::<usize>(&sub, CL_MEM_OFFSET), align);
    assert_eq!(mem_info::<usize>(&sub, CL_MEM_SIZE), 256);
    assert_eq!(
        mem_info::<usize>(&sub, CL_MEM_ASSOCIATED_MEMOBJECT),
        parent.raw() as usize
    );
    let kernel = ctx.kernel(ADD_ONE, "", "add_one");
    kernel.arg_buffer(0, &sub);
    ctx.run(&kernel, &[64], None);
    let whole: Vec<u32> = ctx.read(&parent, n * 2);
    let first = align / 4;
    for (i, v) in whole.iter().enumerate() {
        let want = if (first..first + 64).contains(&i) {
            i as u32 + 1
        } else {
            i as u32
        };
        assert_eq!(*v, want, "element {i}");
    }
    assert_eq!(
        ctx.read::<u32>(&sub, 64)[0],
        first as u32 + 1,
        "reading the sub-buffer starts at its origin"
    );

    if align > 4 {
        let bad = cl_buffer_region {
            origin: 4,
            size: 64,
        };
        // SAFETY: region struct valid for the call.
        let mem = unsafe {
            clCreateSubBuffer(
                parent.raw(),
                0,
                CL_BUFFER_CREATE_TYPE_REGION,
                (&bad as *const cl_buffer_region).cast(),
                &mut err,
            )
        };
        assert!(mem.is_null());
        assert_eq!(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
    }
    let outside = cl_buffer_region {
        origin: 0,
        size: n * 8 + 4,
    };
    // SAFETY: region struct valid for the call.
    let mem = unsafe {
        clCreateSubBuffer(
            parent.raw(),
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&outside as *const cl_buffer_region).cast(),
            &mut err,
        )
    };
    assert!(mem.is_null());
    assert_eq!(err, CL_INVALID_VALUE, "region beyond the parent");
    // Sub-buffer of a sub-buffer is CL_INVALID_MEM_OBJECT.
    let inner = cl_buffer_region {
        origin: 0,
        size: 16,
    };
    // SAFETY: region struct valid for the call.
    let mem = unsafe {
        clCreateSubBuffer(
            sub.raw(),
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&inner as *const cl_buffer_region).cast(),
            &mut err,
        )
    };
    assert!(mem.is_null());
    assert_eq!(err, CL_INVALID_MEM_OBJECT);
}

#[test]
fn release_order_is_free() {
    // A buffer used by a kernel can be released before the kernel and the queue; the
    // runtime keeps what is still needed alive.
    let ctx = DeviceContext::new();
    let kernel = ctx.kernel(ADD_ONE, "", "add_one");
    let buf = ctx.buffer_from(&[1u32; 64]);
    kernel.arg_buffer(0, &buf);
    let event = ctx.try_enqueue(&kernel, None, &[64], None).unwrap();
    let keep = buf.clone();
    drop(buf);
    event.wait().unwrap();
    assert_eq!(ctx.read::<u32>(&keep, 64), vec![2u32; 64]);
    let refs: cl_uint = mem_info(&keep, CL_MEM_REFERENCE_COUNT);
    assert!(refs >= 1);
}

#[test]
fn in_order_queue_orders_kernels_and_transfers() {
    // Nothing waits between the commands: the in-order queue alone must order them.
    let ctx = DeviceContext::new();
    let kernel = ctx.kernel(ADD_ONE, "", "add_one");
    let n = 1 << 16;
    let buf = ctx.buffer_zeroed::<u32>(n);
    kernel.arg_buffer(0, &buf);
    let data: Vec<u32> = (0..n as u32).collect();
    // SAFETY: data outlives the queue drain below (blocking read at the end).
    let code = unsafe {
        clEnqueueWriteBuffer(
            ctx.queue.raw(),
            buf.raw(),
            CL_FALSE,
            0,
            n * 4,
            data.as_ptr().cast(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    check(code, "clEnqueueWriteBuffer").unwrap();
    for _ in 0..3 {
        drop(ctx.try_enqueue(&kernel, None, &[n], None).unwrap());
    }
    let pattern = 1000u32;
    // SAFETY: pattern copied during the call.
    let code = unsafe {
        clEnqueueFillBuffer(
            ctx.queue.raw(),
            buf.raw(),
            (&pattern as *const u32).cast(),
            4,
            0,
            64,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    check(code, "clEnqueueFillBuffer").unwrap();
    drop(ctx.try_enqueue(&kernel, None, &[n], None).unwrap());
    let got: Vec<u32> = ctx.read(&buf, n);
    for (i, v) in got.iter().enumerate() {
        let want = if i < 16 { 1001 } else { i as u32 + 4 };
        assert_eq!(*v, want, "element {i}");
    }
}

#[test]
fn use_host_ptr_with_unaligned_pointer() {
    let ctx = DeviceContext::new();
    let mut host = HostMem::new(8192);
    let words = host.as_u32();
    for (i, w) in words.iter_mut().enumerate() {
        *w = i as u32;
    }
    // One word past a page boundary: legal, and must still behave.
    let ptr = host.ptr.wrapping_add(4).cast::<c_void>();
    let buf = create(&ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 4096, ptr).unwrap();
    let kernel = ctx.kernel(ADD_ONE, "", "add_one");
    kernel.arg_buffer(0, &buf);
    ctx.run(&kernel, &[1024], None);
    let mapped = map(&ctx, &buf, CL_MAP_READ, 0, 4096).unwrap();
    assert_eq!(
        mapped as usize, ptr as usize,
        "map of a USE_HOST_PTR buffer returns host_ptr"
    );
    // SAFETY: 4096 mapped bytes.
    let view = unsafe { std::slice::from_raw_parts(mapped.cast::<u32>(), 1024) };
    for (k, v) in view.iter().enumerate() {
        assert_eq!(*v, k as u32 + 2, "element {k}");
    }
    unmap(&ctx, &buf, mapped);
    drop(kernel);
    drop(buf);
    assert_eq!(
        host.as_u32()[0],
        0,
        "the word before the buffer is untouched"
    );
    assert_eq!(
        host.as_u32()[1025],
        1025,
        "the word after the buffer is untouched"
    );
}
