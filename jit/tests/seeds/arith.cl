// Straight-line integer and float arithmetic, conversions, vectors.
kernel void arith(global const float* a, global const int* b, global float4* o, global uint* u, float s) {
  uint i = get_global_id(0) & 255;
  float x = a[i];
  int y = b[i];
  float4 v = (float4)(x, x * s, (float)y, x - (float)(y >> 2));
  v = v * 2.0f + (float4)(1.0f);
  o[i] = v;
  u[i] = (uint)(y * 7) ^ (uint)y >> 3 | convert_uint_sat(x);
  u[i + 256] = rotate((uint)y, 5u) + popcount((uint)y) + clz((uint)y);
}
