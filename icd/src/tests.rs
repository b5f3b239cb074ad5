//! In-process tests of the C entry points: handle checks, reference counts, argument
//! validation of the object and transfer calls (no kernels: those need the jit and are
//! covered by the conformance suites).

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use crate::api::prelude::*;
use crate::api::*;

fn context() -> cl_context {
    let mut err = 0;
    let ctx = clCreateContextFromType(null(), CL_DEVICE_TYPE_CPU, None, null_mut(), &mut err);
    assert_eq!(err, CL_SUCCESS);
    ctx
}

fn device() -> cl_device_id {
    let mut d = null_mut();
    assert_eq!(
        clGetDeviceIDs(null_mut(), CL_DEVICE_TYPE_ALL, 1, &mut d, null_mut()),
        CL_SUCCESS
    );
    d
}

fn ref_count(mem: cl_mem) -> cl_uint {
    let mut n: cl_uint = 0;
    let size = std::mem::size_of::<cl_uint>();
    assert_eq!(
        clGetMemObjectInfo(
            mem,
            CL_MEM_REFERENCE_COUNT,
            size,
            (&mut n as *mut cl_uint).cast(),
            null_mut()
        ),
        CL_SUCCESS
    );
    n
}

#[test]
fn wrong_type_forged_and_released_handles() {
    let ctx = context();
    let mut err = 0;
    let buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 256, null_mut(), &mut err);
    assert_eq!(err, CL_SUCCESS);
    // A buffer is not a context, a context is not a queue.
    assert_eq!(clRetainContext(buf), CL_INVALID_CONTEXT);
    assert_eq!(clReleaseCommandQueue(ctx), CL_INVALID_COMMAND_QUEUE);
    assert_eq!(clRetainMemObject(null_mut()), CL_INVALID_MEM_OBJECT);
    // Forged: zeroed memory shaped like a header.
    let mut fake = [0usize; 8];
    assert_eq!(
        clRetainMemObject(fake.as_mut_ptr().cast()),
        CL_INVALID_MEM_OBJECT
    );

    assert_eq!(clRetainMemObject(buf), CL_SUCCESS);
    assert_eq!(ref_count(buf), 2);
    assert_eq!(clReleaseMemObject(buf), CL_SUCCESS);
    assert_eq!(ref_count(buf), 1);

    // The buffer keeps its context alive after the application released it: the
    // handle is invalid for the application, the object still answers through the buffer.
    assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
    assert_eq!(clRetainContext(ctx), CL_INVALID_CONTEXT);
    let mut owner: cl_context = null_mut();
    let size = std::mem::size_of::<cl_context>();
    assert_eq!(
        clGetMemObjectInfo(
            buf,
            CL_MEM_CONTEXT,
            size,
            (&mut owner as *mut cl_context).cast(),
            null_mut()
        ),
        CL_SUCCESS
    );
    assert_eq!(owner, ctx);
    assert_eq!(clReleaseMemObject(buf), CL_SUCCESS);
}

#[test]
fn buffer_and_sub_buffer_validation() {
    let ctx = context();
    let mut err = 0;
    assert!(clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, null_mut(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_BUFFER_SIZE);
    assert!(clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, 16, null_mut(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_HOST_PTR);
    let mut host = [0u8; 16];
    assert!(clCreateBuffer(
        ctx,
        CL_MEM_READ_WRITE,
        16,
        host.as_mut_ptr().cast(),
        &mut err
    )
    .is_null());
    assert_eq!(err, CL_INVALID_HOST_PTR);
    assert!(clCreateBuffer(
        ctx,
        CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
        16,
        null_mut(),
        &mut err
    )
    .is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    let props: [cl_mem_properties; 3] = [0x1234, 1, 0];
    assert!(
        clCreateBufferWithProperties(ctx, props.as_ptr(), 0, 16, null_mut(), &mut err).is_null()
    );
    assert_eq!(err, CL_INVALID_PROPERTY);

    let buf = clCreateBuffer(ctx, CL_MEM_READ_ONLY, 1024, null_mut(), &mut err);
    assert_eq!(err, CL_SUCCESS);
    let region = cl_buffer_region {
        origin: 64,
        size: 64,
    };
    let info = (&region as *const cl_buffer_region).cast::<c_void>();
    assert!(clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, info, &mut err).is_null());
    assert_eq!(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
    assert!(clCreateSubBuffer(
        buf,
        CL_MEM_WRITE_ONLY,
        CL_BUFFER_CREATE_TYPE_REGION,
        info,
        &mut err
    )
    .is_null());
    assert_eq!(err, CL_INVALID_VALUE, "a sub-buffer cannot widen access");
    let region = cl_buffer_region {
        origin: 128,
        size: 2000,
    };
    let info = (&region as *const cl_buffer_region).cast::<c_void>();
    assert!(clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, info, &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    let region = cl_buffer_region {
        origin: 128,
        size: 256,
    };
    let info = (&region as *const cl_buffer_region).cast::<c_void>();
    let sub = clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, info, &mut err);
    assert_eq!(err, CL_SUCCESS);
    let mut flags: cl_mem_flags = 0;
    let size = std::mem::size_of::<cl_mem_flags>();
    assert_eq!(
        clGetMemObjectInfo(
            sub,
            CL_MEM_FLAGS,
            size,
            (&mut flags as *mut cl_mem_flags).cast(),
            null_mut()
        ),
        CL_SUCCESS
    );
    assert_eq!(
        flags & CL_MEM_READ_ONLY,
        CL_MEM_READ_ONLY,
        "inherited access flags"
    );
    assert_eq!(clReleaseMemObject(buf), CL_SUCCESS);
    assert_eq!(clReleaseMemObject(sub), CL_SUCCESS);
    assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
}

#[test]
fn transfer_and_wait_list_validation() {
    let ctx = context();
    let dev = device();
    let mut err = 0;
    let q = clCreateCommandQueue(
        ctx,
        dev,
        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_ON_DEVICE,
        &mut err,
    );
    assert!(q.is_null());
    assert_eq!(err, CL_INVALID_QUEUE_PROPERTIES);
    let q = clCreateCommandQueue(ctx, dev, 0, &mut err);
    assert_eq!(err, CL_SUCCESS);
    let buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, null_mut(), &mut err);
    let mut host = [1u8; 64];
    let p = host.as_mut_ptr().cast::<c_void>();
    assert_eq!(
        clEnqueueReadBuffer(q, buf, CL_TRUE, 32, 64, p, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 64, null_mut(), 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 64, p, 1, null(), null_mut()),
        CL_INVALID_EVENT_WAIT_LIST
    );
    let bogus: cl_event = ctx;
    assert_eq!(
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 64, p, 1, &bogus, null_mut()),
        CL_INVALID_EVENT_WAIT_LIST
    );
    assert_eq!(
        clEnqueueCopyBuffer(q, buf, buf, 0, 16, 32, 0, null(), null_mut()),
        CL_MEM_COPY_OVERLAP
    );
    let pattern = [1u8, 2, 3];
    assert_eq!(
        clEnqueueFillBuffer(
            q,
            buf,
            pattern.as_ptr().cast(),
            3,
            0,
            63,
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );

    // A user event gates the read; its failure propagates to the blocking call.
    let user = clCreateUserEvent(ctx, &mut err);
    assert_eq!(err, CL_SUCCESS);
    let mut ev: cl_event = null_mut();
    assert_eq!(
        clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, 64, p, 1, &user, &mut ev),
        CL_SUCCESS
    );
    let mut status: cl_int = 0;
    let size = std::mem::size_of::<cl_int>();
    assert_eq!(
        clGetEventInfo(
            ev,
            CL_EVENT_COMMAND_EXECUTION_STATUS,
            size,
            (&mut status as *mut cl_int).cast(),
            null_mut()
        ),
        CL_SUCCESS
    );
    assert_eq!(status, CL_QUEUED);
    assert_eq!(clSetUserEventStatus(user, 1), CL_INVALID_VALUE);
    assert_eq!(clSetUserEventStatus(ev, CL_COMPLETE), CL_INVALID_EVENT);
    assert_eq!(clSetUserEventStatus(user, -7), CL_SUCCESS);
    assert_eq!(
        clSetUserEventStatus(user, CL_COMPLETE),
        CL_INVALID_OPERATION
    );
    assert_eq!(
        clWaitForEvents(1, &ev),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    assert_eq!(
        clGetEventProfilingInfo(
            ev,
            CL_PROFILING_COMMAND_START,
            8,
            (&mut status as *mut cl_int).cast(),
            null_mut()
        ),
        CL_PROFILING_INFO_NOT_AVAILABLE
    );
    assert_eq!(clFinish(q), CL_SUCCESS);
    for e in [ev, user] {
        assert_eq!(clReleaseEvent(e), CL_SUCCESS);
    }
    assert_eq!(clReleaseMemObject(buf), CL_SUCCESS);
    assert_eq!(clReleaseCommandQueue(q), CL_SUCCESS);
    assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
}

#[test]
fn platform_queries_and_lookup() {
    let mut n: cl_uint = 0;
    assert_eq!(clIcdGetPlatformIDsKHR(0, null_mut(), &mut n), CL_SUCCESS);
    assert_eq!(n, 1);
    assert_eq!(
        clIcdGetPlatformIDsKHR(0, null_mut(), null_mut()),
        CL_INVALID_VALUE
    );
    let mut p: cl_platform_id = null_mut();
    assert_eq!(clIcdGetPlatformIDsKHR(1, &mut p, null_mut()), CL_SUCCESS);
    let mut size = 0usize;
    assert_eq!(
        clGetPlatformInfo(p, CL_PLATFORM_ICD_SUFFIX_KHR, 0, null_mut(), &mut size),
        CL_SUCCESS
    );
    assert_eq!(size, "cranecl".len() + 1);
    let mut small = [0u8; 3];
    assert_eq!(
        clGetPlatformInfo(
            p,
            CL_PLATFORM_NAME,
            3,
            small.as_mut_ptr().cast(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    assert_eq!(
        clGetPlatformInfo(p, 0xdead, 0, null_mut(), &mut size),
        CL_INVALID_VALUE
    );
    let name = c"clIcdSetPlatformDispatchDataKHR";
    assert!(!clGetExtensionFunctionAddressForPlatform(p, name.as_ptr()).is_null());
    assert!(clGetExtensionFunctionAddress(c"clNoSuch".as_ptr()).is_null());
    let mut d: cl_device_id = null_mut();
    assert_eq!(
        clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 1, &mut d, null_mut()),
        CL_DEVICE_NOT_FOUND
    );
    assert_eq!(
        clGetDeviceIDs(p, 1 << 40, 1, &mut d, null_mut()),
        CL_INVALID_DEVICE_TYPE
    );
    let mut widths = [0usize; 8];
    assert_eq!(
        clGetDeviceInfo(
            device(),
            CL_DEVICE_SUB_GROUP_SIZES_INTEL,
            64,
            widths.as_mut_ptr().cast(),
            &mut size
        ),
        CL_SUCCESS
    );
    assert_eq!(&widths[..size / 8], &[4, 8, 16, 32]);
}

#[test]
fn icd2_dispatch_data_reaches_every_new_object() {
    let mut p: cl_platform_id = null_mut();
    assert_eq!(clIcdGetPlatformIDsKHR(1, &mut p, null_mut()), CL_SUCCESS);
    // The loader's own table: any address; objects must carry it in their second word.
    static LOADER_DATA: [usize; 4] = [0; 4];
    let data = LOADER_DATA.as_ptr().cast_mut().cast::<c_void>();
    assert_eq!(clIcdSetPlatformDispatchDataKHR(p, data), CL_SUCCESS);
    let second_word = |h: *mut c_void| unsafe { *h.cast::<*mut c_void>().add(1) };
    assert_eq!(second_word(p), data);
    assert_eq!(second_word(device()), data);
    let ctx = context();
    assert_eq!(second_word(ctx), data);
    // The first word is our dispatch table, whose slots 0 and 31 hold the ICD2 tag.
    let table = unsafe { *ctx.cast::<*const usize>() };
    assert_eq!(unsafe { *table }, crate::dispatch::ICD2_TAG);
    assert_eq!(unsafe { *table.add(31) }, crate::dispatch::ICD2_TAG);
    assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
    assert_eq!(
        clIcdSetPlatformDispatchDataKHR(null_mut(), data),
        CL_INVALID_PLATFORM
    );
}

#[test]
fn svm_alloc_copy_fill_free() {
    let ctx = context();
    let mut err = 0;
    let q = clCreateCommandQueue(ctx, device(), 0, &mut err);
    assert_eq!(err, CL_SUCCESS);
    assert!(clSVMAlloc(ctx, CL_MEM_READ_WRITE, 0, 0).is_null());
    // SVM atomics need a fine-grain buffer.
    assert!(clSVMAlloc(ctx, CL_MEM_SVM_ATOMICS, 64, 0).is_null());
    let atomic = clSVMAlloc(
        ctx,
        CL_MEM_SVM_ATOMICS | CL_MEM_SVM_FINE_GRAIN_BUFFER,
        64,
        0,
    );
    assert!(!atomic.is_null());
    clSVMFree(ctx, atomic);
    assert!(clSVMAlloc(ctx, CL_MEM_READ_WRITE, 64, 3).is_null());
    let a = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 256, 64).cast::<u8>();
    let b = clSVMAlloc(ctx, CL_MEM_SVM_FINE_GRAIN_BUFFER, 256, 0).cast::<u8>();
    assert!(!a.is_null() && !b.is_null());
    assert_eq!(a as usize % 64, 0);
    let pattern = 0x0102_0304u32;
    let p = (&pattern as *const u32).cast::<c_void>();
    assert_eq!(
        clEnqueueSVMMemFill(q, a.cast(), p, 4, 256, 0, null(), null_mut()),
        CL_SUCCESS
    );
    assert_eq!(
        clEnqueueSVMMemFill(q, a.cast(), p, 3, 255, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(
        clEnqueueSVMMemcpy(q, CL_TRUE, b.cast(), a.cast(), 256, 0, null(), null_mut()),
        CL_SUCCESS
    );
    // SAFETY: b is a 256-byte allocation the copy above completed into.
    let got = unsafe { std::slice::from_raw_parts(b.cast::<u32>(), 64) };
    assert!(got.iter().all(|v| *v == pattern));
    assert_eq!(
        clEnqueueSVMMemcpy(
            q,
            CL_TRUE,
            a.wrapping_add(8).cast(),
            a.cast(),
            16,
            0,
            null(),
            null_mut()
        ),
        CL_MEM_COPY_OVERLAP
    );
    let mut ptrs = [a.cast::<c_void>()];
    assert_eq!(
        clEnqueueSVMFree(
            q,
            1,
            ptrs.as_mut_ptr(),
            None,
            null_mut(),
            0,
            null(),
            null_mut()
        ),
        CL_SUCCESS
    );
    assert_eq!(clFinish(q), CL_SUCCESS);
    clSVMFree(ctx, b.cast());
    assert_eq!(clReleaseCommandQueue(q), CL_SUCCESS);
    assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
}

#[test]
fn intel_usm_allocations_and_queries() {
    assert!(!clGetExtensionFunctionAddress(c"clSharedMemAllocINTEL".as_ptr()).is_null());
    let ctx = context();
    let dev = device();
    let mut err = 0;
    let q = clCreateCommandQueue(ctx, dev, 0, &mut err);
    let h = clHostMemAllocINTEL(ctx, null(), 256, 0, &mut err).cast::<u8>();
    assert_eq!(err, CL_SUCCESS);
    let d = clDeviceMemAllocINTEL(ctx, dev, null(), 256, 64, &mut err).cast::<u8>();
    assert_eq!(err, CL_SUCCESS);
    let bad_props: [cl_mem_properties_intel; 3] = [0x1234, 0, 0];
    assert!(clSharedMemAllocINTEL(ctx, dev, bad_props.as_ptr(), 256, 0, &mut err).is_null());
    assert_eq!(err, CL_INVALID_PROPERTY);
    let mut kind: cl_unified_shared_memory_type_intel = 0;
    let ksize = std::mem::size_of_val(&kind);
    let kp = (&mut kind as *mut cl_unified_shared_memory_type_intel).cast();
    assert_eq!(
        clGetMemAllocInfoINTEL(
            ctx,
            d.wrapping_add(10).cast(),
            CL_MEM_ALLOC_TYPE_INTEL,
            ksize,
            kp,
            null_mut()
        ),
        CL_SUCCESS
    );
    assert_eq!(kind, CL_MEM_TYPE_DEVICE_INTEL);
    let mut base: *mut c_void = null_mut();
    let bp = (&mut base as *mut *mut c_void).cast();
    assert_eq!(
        clGetMemAllocInfoINTEL(
            ctx,
            d.wrapping_add(10).cast(),
            CL_MEM_ALLOC_BASE_PTR_INTEL,
            8,
            bp,
            null_mut()
        ),
        CL_SUCCESS
    );
    assert_eq!(base, d.cast());
    let local = [7u8; 16];
    assert_eq!(
        clGetMemAllocInfoINTEL(
            ctx,
            local.as_ptr().cast(),
            CL_MEM_ALLOC_TYPE_INTEL,
            ksize,
            kp,
            null_mut()
        ),
        CL_SUCCESS
    );
    assert_eq!(kind, CL_MEM_TYPE_UNKNOWN_INTEL);
    assert_eq!(
        clEnqueueMemsetINTEL(q, d.cast(), 0x5a, 256, 0, null(), null_mut()),
        CL_SUCCESS
    );
    assert_eq!(
        clEnqueueMemcpyINTEL(q, CL_TRUE, h.cast(), d.cast(), 256, 0, null(), null_mut()),
        CL_SUCCESS
    );
    // SAFETY: h is a 256-byte allocation the blocking copy completed into.
    assert!(unsafe { std::slice::from_raw_parts(h, 256) }
        .iter()
        .all(|b| *b == 0x5a));
    assert_eq!(clMemFreeINTEL(ctx, d.cast()), CL_SUCCESS);
    assert_eq!(clMemFreeINTEL(ctx, d.cast()), CL_INVALID_VALUE);
    assert_eq!(clMemBlockingFreeINTEL(ctx, h.cast()), CL_SUCCESS);
    assert_eq!(clReleaseCommandQueue(q), CL_SUCCESS);
    assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
}

#[test]
fn buffer_over_svm_allocation_stays_inside_it() {
    let ctx = context();
    let mut err = 0;
    for flags in [
        CL_MEM_READ_WRITE,
        CL_MEM_READ_ONLY | CL_MEM_SVM_FINE_GRAIN_BUFFER,
        CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS,
    ] {
        let svm = clSVMAlloc(ctx, flags, 1024, 0).cast::<u8>();
        assert!(!svm.is_null());
        // The whole allocation and a tail of it are fine.
        for (offset, size) in [(0usize, 1024usize), (512, 512)] {
            let host = svm.wrapping_add(offset).cast::<c_void>();
            let buf = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, size, host, &mut err);
            assert_eq!(err, CL_SUCCESS);
            assert_eq!(clReleaseMemObject(buf), CL_SUCCESS);
        }
        // Past its end: CL_INVALID_BUFFER_SIZE, from the start or from inside it.
        for (offset, size) in [(0usize, 2048usize), (512, 513)] {
            let host = svm.wrapping_add(offset).cast::<c_void>();
            let buf = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, size, host, &mut err);
            assert!(buf.is_null());
            assert_eq!(
                err, CL_INVALID_BUFFER_SIZE,
                "flags {flags:#x} offset {offset} size {size}"
            );
        }
        clSVMFree(ctx, svm.cast());
    }
    assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
}
