//! The library calls Cranelift itself may emit (float rounding without SSE4.1, fma,
//! fmod, memcpy/memset); half conversions live in `builtins::half`. Every symbol is
//! registered with the JIT by name; [`lookup`] is the resolver of last resort and never
//! falls back to the process's own symbols.

extern "C" fn lib_floorf(x: f32) -> f32 {
    x.floor()
}
extern "C" fn lib_floor(x: f64) -> f64 {
    x.floor()
}
extern "C" fn lib_ceilf(x: f32) -> f32 {
    x.ceil()
}
extern "C" fn lib_ceil(x: f64) -> f64 {
    x.ceil()
}
extern "C" fn lib_truncf(x: f32) -> f32 {
    x.trunc()
}
extern "C" fn lib_trunc(x: f64) -> f64 {
    x.trunc()
}
extern "C" fn lib_nearbyintf(x: f32) -> f32 {
    x.round_ties_even()
}
extern "C" fn lib_nearbyint(x: f64) -> f64 {
    x.round_ties_even()
}
extern "C" fn lib_fmaf(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}
extern "C" fn lib_fma(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}
extern "C" fn lib_fmodf(a: f32, b: f32) -> f32 {
    a % b
}
extern "C" fn lib_fmod(a: f64, b: f64) -> f64 {
    a % b
}

/// # Safety
/// Same contract as C `memcpy`.
unsafe extern "C" fn lib_memcpy(d: *mut u8, s: *const u8, n: usize) -> *mut u8 {
    // SAFETY: generated code passes valid, non-overlapping ranges (C memcpy contract).
    unsafe { std::ptr::copy_nonoverlapping(s, d, n) };
    d
}

/// # Safety
/// Same contract as C `memmove`.
unsafe extern "C" fn lib_memmove(d: *mut u8, s: *const u8, n: usize) -> *mut u8 {
    // SAFETY: generated code passes valid ranges (C memmove contract).
    unsafe { std::ptr::copy(s, d, n) };
    d
}

/// # Safety
/// Same contract as C `memset`.
unsafe extern "C" fn lib_memset(d: *mut u8, c: i32, n: usize) -> *mut u8 {
    // SAFETY: generated code passes a valid range (C memset contract).
    unsafe { std::ptr::write_bytes(d, c as u8, n) };
    d
}

/// Called in place of any symbol nobody registered: a bug of ours, never a call
/// into the application.
extern "C" fn unresolved_symbol() {
    eprintln!("cranecl: generated code called an unresolved symbol");
    std::process::abort();
}

/// The helper functions of this module, by symbol name.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    let mut v = crate::pipe::symbols();
    v.extend([
        ("cranecl_fmodf", lib_fmodf as *const u8),
        ("cranecl_fmod", lib_fmod as *const u8),
        (
            crate::device_enqueue::CALL_SYMBOL,
            crate::device_enqueue::cranecl_device_call as *const u8,
        ),
        (
            "cranecl_block2d",
            crate::block2d::cranecl_block2d as *const u8,
        ),
        (
            crate::lower::async_copy::COPY_ND_SYMBOL,
            crate::lower::async_copy::copy_nd as *const u8,
        ),
    ]);
    v
}

/// Resolves the library calls Cranelift may emit; anything else resolves to a stub
/// that aborts, so a name can never bind to the application's symbols.
pub fn lookup(name: &str) -> Option<*const u8> {
    Some(match name {
        "floorf" => lib_floorf as *const u8,
        "floor" => lib_floor as *const u8,
        "ceilf" => lib_ceilf as *const u8,
        "ceil" => lib_ceil as *const u8,
        "truncf" => lib_truncf as *const u8,
        "trunc" => lib_trunc as *const u8,
        "nearbyintf" => lib_nearbyintf as *const u8,
        "nearbyint" => lib_nearbyint as *const u8,
        "fmaf" => lib_fmaf as *const u8,
        "fma" => lib_fma as *const u8,
        "memcpy" => lib_memcpy as *const u8,
        "memmove" => lib_memmove as *const u8,
        "memset" => lib_memset as *const u8,
        _ => unresolved_symbol as *const u8,
    })
}
