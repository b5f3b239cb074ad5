// __local memory, barriers, a tree reduction.
kernel void reduce(global const float* a, global float* o, local float* tmp) {
  uint l = get_local_id(0);
  uint g = get_global_id(0) & 255;
  tmp[l] = a[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) o[get_group_id(0) & 255] = tmp[0];
}
kernel void scan_local(global int* o) {
  local int buf[64];
  uint l = get_local_id(0) & 63;
  buf[l] = (int)l * 3;
  barrier(CLK_LOCAL_MEM_FENCE);
  int s = 0;
  for (uint k = 0; k <= l; k++) s += buf[k];
  o[get_global_id(0) & 255] = s;
}
