//! Small host functions generated code calls that are not OpenCL.std built-ins: half
//! conversions (vload_half/vstore_half) and the library calls Cranelift itself may emit
//! (float rounding without SSE4.1, memcpy/memset). Every symbol is registered with the
//! JIT by name; [`lookup`] is the resolver of last resort and never falls back to the
//! process's own symbols.

/// `half` bits -> f32 (exact).
pub extern "C" fn cranecl_half_to_float(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = i32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let bits = if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else if exp == 0 {
        if man == 0 {
            sign
        } else {
            // Subnormal half: value = man * 2^-24, exact in f32.
            let v = man as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
    } else {
        sign | (((exp - 15 + 127) as u32) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

/// `half` bits -> f64 (exact).
pub extern "C" fn cranecl_half_to_double(h: u16) -> f64 {
    f64::from(cranecl_half_to_float(h))
}

/// Rounding modes of float -> half.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Round {
    Even,
    Zero,
    Up,
    Down,
}

/// f64 -> half bits with rounding `r` (exact for every f32 and f64 input).
fn to_half(x: f64, r: Round) -> u16 {
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        return sign | 0x7e00;
    }
    let a = x.abs();
    let neg = sign != 0;
    // Rounding away from zero happens for Up on positives and Down on negatives.
    let away = match r {
        Round::Up => !neg,
        Round::Down => neg,
        _ => false,
    };
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    const MAX: f64 = 65504.0;
    if a > MAX {
        // Overflow: infinity unless rounding towards zero (or away from this sign).
        let inf = match r {
            Round::Even => a >= 65520.0,
            Round::Zero => false,
            _ => away,
        };
        return sign | if inf { 0x7c00 } else { 0x7bff };
    }
    // Quantum: subnormals 2^-24, normals 2^(e-10).
    let e = if a < f64::from_bits(0x3f10_0000_0000_0000) {
        -14
    } else {
        a.log2().floor() as i32
    };
    let e = e.max(-14);
    let q = 2f64.powi(e - 10);
    let m = a / q; // exact: power-of-two scaling
    let fl = m.floor();
    let frac = m - fl;
    let mut n = fl as u32;
    let up = match r {
        Round::Even => frac > 0.5 || (frac == 0.5 && n & 1 == 1),
        Round::Zero => false,
        _ => away && frac > 0.0,
    };
    if up {
        n += 1;
    }
    // Assemble: n in [0, 2048] times 2^(e-10).
    let bits = if e == -14 && n < 1024 {
        n as u16
    } else {
        let (mut n, mut e) = (n, e);
        if n == 2048 {
            n = 1024;
            e += 1;
        }
        if e > 15 {
            return sign | 0x7c00;
        }
        (((e + 15) as u16) << 10) | ((n - 1024) as u16)
    };
    sign | bits
}

pub extern "C" fn cranecl_float_to_half_rte(x: f32) -> u16 {
    to_half(f64::from(x), Round::Even)
}
pub extern "C" fn cranecl_float_to_half_rtz(x: f32) -> u16 {
    to_half(f64::from(x), Round::Zero)
}
pub extern "C" fn cranecl_float_to_half_rtp(x: f32) -> u16 {
    to_half(f64::from(x), Round::Up)
}
pub extern "C" fn cranecl_float_to_half_rtn(x: f32) -> u16 {
    to_half(f64::from(x), Round::Down)
}
pub extern "C" fn cranecl_double_to_half_rte(x: f64) -> u16 {
    to_half(x, Round::Even)
}
pub extern "C" fn cranecl_double_to_half_rtz(x: f64) -> u16 {
    to_half(x, Round::Zero)
}
pub extern "C" fn cranecl_double_to_half_rtp(x: f64) -> u16 {
    to_half(x, Round::Up)
}
pub extern "C" fn cranecl_double_to_half_rtn(x: f64) -> u16 {
    to_half(x, Round::Down)
}

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
    vec![
        ("cranecl_half_to_float", cranecl_half_to_float as *const u8),
        (
            "cranecl_half_to_double",
            cranecl_half_to_double as *const u8,
        ),
        (
            "cranecl_float_to_half_rte",
            cranecl_float_to_half_rte as *const u8,
        ),
        (
            "cranecl_float_to_half_rtz",
            cranecl_float_to_half_rtz as *const u8,
        ),
        (
            "cranecl_float_to_half_rtp",
            cranecl_float_to_half_rtp as *const u8,
        ),
        (
            "cranecl_float_to_half_rtn",
            cranecl_float_to_half_rtn as *const u8,
        ),
        (
            "cranecl_double_to_half_rte",
            cranecl_double_to_half_rte as *const u8,
        ),
        (
            "cranecl_double_to_half_rtz",
            cranecl_double_to_half_rtz as *const u8,
        ),
        (
            "cranecl_double_to_half_rtp",
            cranecl_double_to_half_rtp as *const u8,
        ),
        (
            "cranecl_double_to_half_rtn",
            cranecl_double_to_half_rtn as *const u8,
        ),
        ("cranecl_fmodf", lib_fmodf as *const u8),
        ("cranecl_fmod", lib_fmod as *const u8),
    ]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_round_trip() {
        for h in 0u16..=0xffff {
            let f = cranecl_half_to_float(h);
            if f.is_nan() {
                continue;
            }
            assert_eq!(cranecl_float_to_half_rte(f), h, "half {h:#06x} -> {f}");
            assert_eq!(cranecl_float_to_half_rtz(f), h);
            assert_eq!(cranecl_float_to_half_rtp(f), h);
            assert_eq!(cranecl_float_to_half_rtn(f), h);
        }
    }

    #[test]
    fn half_rounding_modes() {
        // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10).
        let x = 1.0f32 + 2f32.powi(-11);
        assert_eq!(cranecl_float_to_half_rte(x), 0x3c00);
        assert_eq!(cranecl_float_to_half_rtp(x), 0x3c01);
        assert_eq!(cranecl_float_to_half_rtz(x), 0x3c00);
        assert_eq!(cranecl_float_to_half_rtn(-x), 0xbc01);
        assert_eq!(cranecl_float_to_half_rte(1e6), 0x7c00);
        assert_eq!(cranecl_float_to_half_rtz(1e6), 0x7bff);
        assert_eq!(cranecl_float_to_half_rte(f32::from_bits(1)), 0);
        assert_eq!(cranecl_float_to_half_rtp(f32::from_bits(1)), 1);
    }
}
