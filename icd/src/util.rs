//! Checked views of application memory: slices and strings from raw pointers.
//!
//! These are the C boundary's reading helpers: NULL (with a non-zero count),
//! misalignment and size overflow become `CL_INVALID_VALUE`. The pointers' validity
//! beyond that is the application's contract.

use std::ffi::{c_char, CStr};

use cranecl_runtime::CLResult;
use opencl_sys::*;

/// `n` elements at `ptr` (empty for `n == 0`, whatever `ptr` is).
pub fn slice<'a, T>(ptr: *const T, n: usize) -> CLResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if ptr.is_null()
        || !ptr.is_aligned()
        || n.checked_mul(std::mem::size_of::<T>())
            .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: non-null, aligned, size in range; the application guarantees `n` readable
    // elements.
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
}

/// A NUL-terminated string (`CL_INVALID_VALUE` for NULL or invalid UTF-8).
pub fn c_str<'a>(ptr: *const c_char) -> CLResult<&'a str> {
    if ptr.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: the application passes a NUL-terminated string.
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| CL_INVALID_VALUE)
}

/// A zero-terminated property list (`[]` for NULL), without the terminator.
pub fn property_list<'a, T: Copy + PartialEq + Default>(ptr: *const T) -> CLResult<&'a [T]> {
    if ptr.is_null() {
        return Ok(&[]);
    }
    if !ptr.is_aligned() {
        return Err(CL_INVALID_VALUE);
    }
    let mut n = 0usize;
    // SAFETY: the application passes a list terminated by 0; we stop at it.
    while unsafe { *ptr.add(n) } != T::default() {
        n += 2;
        if n > 4096 {
            return Err(CL_INVALID_PROPERTY);
        }
    }
    slice(ptr, n)
}

/// `len` bytes of application memory at `ptr` that a command will read or write:
/// non-NULL, and not wrapping around the address space (`CL_INVALID_VALUE`).
pub fn host_range(ptr: *const std::ffi::c_void, len: usize) -> CLResult<()> {
    if ptr.is_null() || (ptr as usize).checked_add(len).is_none() {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

/// Writes `value` to an optional out-parameter.
pub fn write_out<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: a non-null out-parameter points at writable storage for a T.
        unsafe { ptr.write(value) };
    }
}
