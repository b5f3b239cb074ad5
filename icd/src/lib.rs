//! libcranecl.so: the OpenCL C ABI.
