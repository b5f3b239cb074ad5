// Sub-group and work-group collectives, Intel shuffles.
kernel void groups(global const int* a, global int* o) {
  uint g = get_global_id(0) & 255;
  int x = a[g];
  int s = sub_group_reduce_add(x);
  int m = sub_group_scan_inclusive_max(x);
  int b = sub_group_broadcast(x, 1);
  int w = work_group_reduce_min(x);
  int sh = intel_sub_group_shuffle(x, (get_sub_group_local_id() + 1) % get_max_sub_group_size());
  o[g] = s + m + b + w + sh + (int)sub_group_any(x > 3) + (int)get_sub_group_id();
}
