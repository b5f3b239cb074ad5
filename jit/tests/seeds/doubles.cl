// Doubles, math built-ins, conversions with rounding.
kernel void doubles(global const double* a, global double* o, global long* q, global float* f) {
  uint i = get_global_id(0) & 255;
  double x = a[i];
  o[i] = sqrt(fabs(x)) + exp(x * 0.01) - fma(x, 2.0, 1.0) + floor(x);
  q[i] = convert_long_rte(x * 3.3) + (long)(x > 1.5);
  f[i] = convert_float_rtz(x) + sin((float)x) + pow(1.5f, (float)(i & 3));
}
