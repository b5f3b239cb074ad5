//! The one writer behind every `clGet*Info`: `param_value_size`, `param_value`,
//! `param_value_size_ret`, NULL pointers, strings and arrays, handled in one place.

use std::ffi::c_void;

use cranecl_runtime::CLResult;
use opencl_sys::*;

/// The three output parameters of a `clGet*Info` call.
#[derive(Clone, Copy, Debug)]
pub struct InfoOut {
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
}

impl InfoOut {
    /// Wraps the application's parameters.
    pub fn new(size: usize, value: *mut c_void, size_ret: *mut usize) -> InfoOut {
        InfoOut {
            size,
            value,
            size_ret,
        }
    }

    /// Writes raw bytes: `CL_INVALID_VALUE` if `param_value` is given and too small.
    pub fn bytes(self, bytes: &[u8]) -> CLResult<()> {
        if !self.value.is_null() {
            if self.size < bytes.len() {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: the application gave `size` writable bytes at `value`; we write
            // at most that many.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.value.cast::<u8>(), bytes.len())
            };
        }
        if !self.size_ret.is_null() {
            // SAFETY: a non-null `param_value_size_ret` points at a size_t.
            unsafe { self.size_ret.write(bytes.len()) };
        }
        Ok(())
    }

    /// Writes one plain value (integers, bitfields, handles).
    pub fn value<T: Copy>(self, v: T) -> CLResult<()> {
        self.array(std::slice::from_ref(&v))
    }

    /// Writes an array of plain values.
    pub fn array<T: Copy>(self, v: &[T]) -> CLResult<()> {
        // SAFETY: T is Copy plain data (integers, pointers, repr(C) structs); viewing
        // it as bytes reads initialized memory of exactly that size.
        let bytes = unsafe {
            std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v))
        };
        self.bytes(bytes)
    }

    /// Writes a NUL-terminated string.
    pub fn string(self, s: &str) -> CLResult<()> {
        let mut b = Vec::with_capacity(s.len() + 1);
        b.extend_from_slice(s.as_bytes());
        b.push(0);
        self.bytes(&b)
    }

    /// Writes a `cl_bool`.
    pub fn bool(self, b: bool) -> CLResult<()> {
        self.value::<cl_bool>(if b { CL_TRUE } else { CL_FALSE })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_nulls() {
        let mut ret = 0usize;
        InfoOut::new(0, std::ptr::null_mut(), &mut ret)
            .string("abc")
            .expect("size query");
        assert_eq!(ret, 4);
        let mut buf = [0xffu8; 4];
        InfoOut::new(4, buf.as_mut_ptr().cast(), std::ptr::null_mut())
            .string("abc")
            .expect("write");
        assert_eq!(&buf, b"abc\0");
        let mut small = [0u8; 3];
        assert_eq!(
            InfoOut::new(3, small.as_mut_ptr().cast(), &mut ret).string("abc"),
            Err(CL_INVALID_VALUE)
        );
        let mut v = 0u64;
        InfoOut::new(8, (&mut v as *mut u64).cast(), &mut ret)
            .value(42u64)
            .expect("u64");
        assert_eq!((v, ret), (42, 8));
        let mut arr = [0usize; 3];
        InfoOut::new(24, arr.as_mut_ptr().cast(), &mut ret)
            .array(&[1usize, 2, 3])
            .expect("array");
        assert_eq!((arr, ret), ([1, 2, 3], 24));
        // Bigger buffers are fine; only the value's bytes are written.
        let mut big = [7u8; 8];
        InfoOut::new(8, big.as_mut_ptr().cast(), &mut ret)
            .bool(true)
            .expect("bool");
        assert_eq!(&big, &[1, 0, 0, 0, 7, 7, 7, 7]);
    }
}
