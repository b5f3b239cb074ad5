// 64-bit ids, 2D ND-range, integer built-ins, mixed widths, bools.
kernel void grid(global uint* o, ulong seed, uchar flag) {
  size_t x = get_global_id(0) & 15, y = get_global_id(1) & 15;
  ulong h = seed ^ (x * 0x9e3779b97f4a7c15UL) ^ (y << 32);
  h ^= h >> 29;
  uint r = (uint)h + mul_hi((uint)h, 0x85ebca6bu) + add_sat((uint)x, 0xfffffff0u);
  bool odd = (x + y) & 1;
  o[y * 16 + x] = odd && flag ? r : ~r + (uint)abs_diff((int)x, (int)y);
}
kernel void chars(global char* c, global ushort* s) {
  uint i = get_global_id(0) & 255;
  char v = c[i];
  c[i] = (char)(v * 3 - 1);
  s[i] = (ushort)(s[i] + (ushort)v) >> 1;
  c[i + 256] = max(v, (char)-5) + hadd(v, (char)7);
}
