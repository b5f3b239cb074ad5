// Atomics on global and local memory.
kernel void atomics(global int* c, global uint* h, global const uint* v) {
  local uint lh[16];
  uint l = get_local_id(0);
  if (l < 16) lh[l] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint x = v[get_global_id(0) & 255];
  atomic_inc(&lh[x & 15]);
  atomic_add(&c[0], (int)x);
  atomic_max(&c[1], (int)x);
  atomic_cmpxchg(&c[2], 0, 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l < 16) atomic_add(&h[l], lh[l]);
}
