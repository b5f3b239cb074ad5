// Source of translator_enqueue.spv (SPIRV-LLVM-Translator output with OpEnqueueKernel
// and its family, for conformance/tests/device_enqueue_spirv.rs). Regenerate with:
//   clang-15 -cc1 -no-opaque-pointers -triple spir64-unknown-unknown -cl-std=CL2.0 \
//     -finclude-default-header -emit-llvm-bc -O0 -o t.bc translator_enqueue.cl
//   llvm-spirv-15 t.bc -o translator_enqueue.spv
kernel void parent(global int *out, int cap, global int *rc) {
  queue_t q = get_default_queue();
  size_t gs[2] = {4, 4};
  size_t ls[2] = {2, 2};
  clk_event_t ev;
  rc[0] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(16, 4), 0, NULL, &ev,
                         ^{
                           size_t i = get_global_id(0);
                           out[i] = 2 * cap + (int)i;
                         });
  rc[1] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_2D(gs, ls), 1, &ev, NULL,
                         ^(local void *lv) {
                           local int *l = (local int *)lv;
                           size_t i = get_global_id(1) * 4 + get_global_id(0);
                           size_t j = get_local_id(1) * 2 + get_local_id(0);
                           l[j] = out[i];
                           out[16 + i] = l[j] + 1;
                         },
                         16u);
  release_event(ev);
  void (^b)(void) = ^{ out[40] = cap; };
  rc[2] = get_kernel_work_group_size(b);
  rc[3] = get_kernel_preferred_work_group_size_multiple(b);
  rc[4] = get_kernel_sub_group_count_for_ndrange(ndrange_1D(64, 32), b);
  rc[5] = get_kernel_max_sub_group_size_for_ndrange(ndrange_1D(64, 32), b);
  clk_event_t ue = create_user_event();
  rc[6] = is_valid_event(ue);
  set_user_event_status(ue, CL_COMPLETE);
  clk_event_t me;
  rc[7] = enqueue_marker(q, 1, &ue, &me);
  release_event(me);
  release_event(ue);
  rc[8] = is_valid_event(ue);
}
