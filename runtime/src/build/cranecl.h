/*
 * cranecl driver header: force-included into every OpenCL C compile (and built into
 * the precompiled header with opencl-c.h). It declares built-ins that clang's
 * opencl-c.h lacks but the cranecl compiler implements; calls to them reach the jit
 * as imported functions with their Itanium-mangled names.
 *
 * Keep it independent of user macros: it is precompiled once per language setting.
 */
#ifndef CRANECL_DRIVER_H
#define CRANECL_DRIVER_H

#endif /* CRANECL_DRIVER_H */
