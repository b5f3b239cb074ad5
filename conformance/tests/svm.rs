//! Shared virtual memory through the ICD loader: fine-grained system SVM (ordinary
//! host memory as kernel arguments and SVM command operands, pointers inside it
//! followed by kernels and by the host), and buffers created over SVM allocations.

use std::ffi::c_void;
use std::ptr;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// One list node: the value and the address of the next node (host layout = kernel layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    value: i64,
    next: u64,
}

/// The device claims fine-grained system SVM (cranecl does; other drivers may not).
fn system_svm(ctx: &DeviceContext) -> bool {
    let caps: cl_ulong = device_info(ctx.device, CL_DEVICE_SVM_CAPABILITIES).unwrap();
    require(
        caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM != 0,
        "fine-grained system SVM",
    )
}

#[test]
fn kernels_follow_and_build_lists_in_plain_host_memory() {
    let ctx = DeviceContext::new();
    if !system_svm(&ctx) {
        return;
    }
    let src = r#"
typedef struct { long value; global void* next; } Node;
// Each work-item links its list of `len` nodes (node k of list i at i*len + k).
kernel void build(global Node* nodes, int len, global atomic_int* built) {
  int i = get_global_id(0);
  for (int k = 0; k < len; k++) {
    global Node* n = &nodes[i * len + k];
    n->value = i * 1000 + k;
    n->next = k + 1 < len ? (global void*)&nodes[i * len + k + 1] : 0;
  }
  atomic_fetch_add_explicit(built, 1, memory_order_relaxed, memory_scope_all_svm_devices);
}
// Each work-item walks list i from its head by the stored pointers and sums it.
kernel void walk(global Node* nodes, int len, global long* sums) {
  int i = get_global_id(0);
  long s = 0;
  for (global Node* n = &nodes[i * len]; n; n = (global Node*)n->next) s += n->value;
  sums[i] = s;
}
"#;
    let program = ctx.build(src, "-cl-std=CL3.0");
    let (lists, len) = (64usize, 9i32);
    // Plain heap memory, never registered with the driver.
    let mut nodes = vec![Node::default(); lists * len as usize];
    let mut built = Box::new(0i32);
    let mut sums = vec![0i64; lists];
    let expected_sum = |i: usize| {
        (0..i64::from(len))
            .map(|k| i as i64 * 1000 + k)
            .sum::<i64>()
    };

    // Built by the kernel, checked on the host.
    let build = program.kernel("build");
    // SAFETY: every pointer addresses live host memory that outlives the runs below.
    unsafe {
        assert_eq!(
            clSetKernelArgSVMPointer(build.raw(), 0, nodes.as_mut_ptr().cast()),
            CL_SUCCESS
        );
        assert_eq!(
            clSetKernelArgSVMPointer(build.raw(), 2, ptr::from_mut(&mut *built).cast()),
            CL_SUCCESS
        );
    }
    build.arg(1, len);
    let yes: cl_bool = CL_TRUE;
    // SAFETY: a cl_bool value of the size given.
    let rc = unsafe {
        clSetKernelExecInfo(
            build.raw(),
            CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM,
            std::mem::size_of::<cl_bool>(),
            ptr::from_ref(&yes).cast(),
        )
    };
    assert_eq!(rc, CL_SUCCESS);
    ctx.run(&build, &[lists], Some(&[16]));
    assert_eq!(*built, lists as i32);
    for i in 0..lists {
        let mut n: *const Node = &nodes[i * len as usize];
        let mut k = 0;
        while !n.is_null() {
            // SAFETY: the kernel linked every node to the next one of `nodes` or null.
            let node = unsafe { *n };
            assert_eq!(node.value, i as i64 * 1000 + k, "list {i} node {k}");
            n = node.next as *const Node;
            k += 1;
        }
        assert_eq!(k, i64::from(len), "length of list {i}");
    }

    // Built by the host (reversed links, other values), walked by the kernel.
    let base = nodes.as_mut_ptr();
    for i in 0..lists {
        for k in 0..len as usize {
            let next = if k + 1 < len as usize {
                base.wrapping_add(i * len as usize + k + 1) as u64
            } else {
                0
            };
            nodes[i * len as usize + k] = Node {
                value: i as i64 * 1000 + k as i64,
                next,
            };
        }
    }
    let walk = program.kernel("walk");
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            clSetKernelArgSVMPointer(walk.raw(), 0, nodes.as_mut_ptr().cast()),
            CL_SUCCESS
        );
        assert_eq!(
            clSetKernelArgSVMPointer(walk.raw(), 2, sums.as_mut_ptr().cast()),
            CL_SUCCESS
        );
    }
    walk.arg(1, len);
    ctx.run(&walk, &[lists], None);
    for (i, s) in sums.iter().enumerate() {
        assert_eq!(*s, expected_sum(i), "sum of list {i}");
    }
}

#[test]
fn svm_commands_take_plain_host_memory() {
    let ctx = DeviceContext::new();
    if !system_svm(&ctx) {
        return;
    }
    let src: Vec<u32> = (0..1024u32)
        .map(|v| v.wrapping_mul(2_654_435_761))
        .collect();
    let mut dst = vec![0u32; 1024];
    // SAFETY: both ranges are live host memory of the given size and do not overlap.
    let rc = unsafe {
        clEnqueueSVMMemcpy(
            ctx.queue.raw(),
            CL_TRUE,
            dst.as_mut_ptr().cast(),
            src.as_ptr().cast(),
            4 * src.len(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(rc, CL_SUCCESS);
    assert_eq!(dst, src);
    let pattern = 0xdead_beefu32;
    // SAFETY: 4-byte pattern, 1000 bytes from element 6 stay inside `dst`.
    let rc = unsafe {
        clEnqueueSVMMemFill(
            ctx.queue.raw(),
            dst.as_mut_ptr().wrapping_add(6).cast(),
            ptr::from_ref(&pattern).cast(),
            4,
            1000,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    assert_eq!(rc, CL_SUCCESS);
    ctx.finish();
    for (i, v) in dst.iter().enumerate() {
        let want = if (6..256).contains(&i) {
            pattern
        } else {
            src[i]
        };
        assert_eq!(*v, want, "element {i}");
    }
}

#[test]
fn buffers_over_svm_allocations_stay_inside_them() {
    let ctx = DeviceContext::new();
    let size = 1024usize;
    // SAFETY: valid context and flags, non-zero size, default alignment.
    let svm = unsafe { clSVMAlloc(ctx.context.raw(), CL_MEM_READ_WRITE, size, 0) };
    assert!(!svm.is_null());
    let create = |offset: usize, bytes: usize| -> cl_int {
        let mut err = 0;
        // SAFETY: `svm + offset` is inside the allocation; the driver checks `bytes`.
        let buf = unsafe {
            clCreateBuffer(
                ctx.context.raw(),
                CL_MEM_USE_HOST_PTR,
                bytes,
                svm.cast::<u8>().wrapping_add(offset).cast::<c_void>(),
                &mut err,
            )
        };
        if !buf.is_null() {
            // SAFETY: created above, released once.
            unsafe { clReleaseMemObject(buf) };
        }
        err
    };
    assert_eq!(create(0, size), CL_SUCCESS);
    assert_eq!(create(256, size - 256), CL_SUCCESS);
    assert_eq!(create(0, 2 * size), CL_INVALID_BUFFER_SIZE);
    assert_eq!(create(256, size - 255), CL_INVALID_BUFFER_SIZE);
    // SAFETY: allocated above from this context.
    unsafe { clSVMFree(ctx.context.raw(), svm) };
}
