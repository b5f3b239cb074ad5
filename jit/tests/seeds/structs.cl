// Structs, private arrays, function calls, select.
typedef struct { int a; float b; short c[3]; } item;
__attribute__((noinline)) float weigh(item it, float w) { return it.a * w + it.b + it.c[1]; }
kernel void structs(global const item* in, global float* o, global item* out) {
  uint i = get_global_id(0) & 127;
  item it = in[i];
  float arr[8];
  for (int k = 0; k < 8; k++) arr[k] = weigh(it, (float)k);
  float m = arr[0];
  for (int k = 1; k < 8; k++) m = arr[k] > m ? arr[k] : m;
  o[i] = m;
  it.c[2] = (short)(it.a + 1);
  it.b = select(it.b, m, (int)(m > 0.0f));
  out[i] = it;
}
