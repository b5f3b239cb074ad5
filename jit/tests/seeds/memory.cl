// Vector loads/stores, constant memory, vload/vstore, pointer arithmetic.
constant int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
kernel void memory(global const uchar* in, global short8* o, global float* f, constant int* c) {
  uint i = get_global_id(0) & 127;
  uchar8 b = vload8(i, in);
  short8 s = convert_short8(b) + (short8)(table[i & 7]) + (short8)(c[i & 3]);
  o[i] = s.s76543210;
  float4 v = vload4(i, f + 512);
  vstore4(v * 0.5f + (float4)(s.s0), i, f);
  global const uchar* p = in + (i & 15);
  f[1024 + i] = (float)p[3] + (float)table[b.s0 & 7];
}
