// Divergent branches, loops with early exit, switch.
kernel void control(global const int* a, global int* o, int n) {
  uint i = get_global_id(0) & 255;
  int x = a[i];
  int acc = 0;
  for (int k = 0; k < (n & 15) + (int)(i & 7); k++) {
    if ((x + k) % 3 == 0) continue;
    acc += x * k;
    if (acc > 1000) break;
  }
  switch (x & 7) {
    case 0: acc += 1; break;
    case 1: acc *= 3; break;
    case 5: acc -= 7;
    case 6: acc ^= 0x55; break;
    default: acc = -acc;
  }
  if (i & 1) o[i] = acc; else o[i + 256] = acc + 1;
}
