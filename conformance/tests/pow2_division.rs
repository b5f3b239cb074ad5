//! Integer division and remainder by constant powers of two on values that differ
//! between work-items (lowered to vector shifts and masks rather than one division
//! per lane): signed dividends of both signs round toward zero, remainders take the
//! dividend's sign, unsigned ones are plain shifts; dividends in affine form
//! (`i * 37 + off`, as `offset / K` in pyopencl's scan) and loaded from memory.

use cranecl_conformance::*;

/// Divisors used by the kernel, for a type of `bits` bits.
fn divisors(bits: u32) -> [i64; 4] {
    [2, 8, 256, 1i64 << (bits - 2)]
}

/// The kernel for type `t`: for each divisor d, out[i*16 + 4j..] = a/d, a%d, v/d, v%d.
fn source(t: &str, bits: u32) -> String {
    let mut body = String::new();
    for (j, d) in divisors(bits).iter().enumerate() {
        let suffix = if bits == 64 { "L" } else { "" };
        let d = format!("(({t}){d}{suffix})");
        body += &format!(
            "    out[i * 16 + {0}] = a / {d};\n    out[i * 16 + {1}] = a % {d};\n    \
             out[i * 16 + {2}] = v / {d};\n    out[i * 16 + {3}] = v % {d};\n",
            4 * j,
            4 * j + 1,
            4 * j + 2,
            4 * j + 3
        );
    }
    format!(
        "kernel void k(global const {t}* in, global {t}* out, long off) {{\n    \
         int i = (int)get_global_id(0);\n    {t} a = ({t})(i * 37 + off);\n    \
         {t} v = in[i];\n{body}}}\n"
    )
}

/// Runs the kernel for type `t` and checks it against `div`/`rem` on the host, with
/// values converted through `wrap` (the type's wrapping to i64).
fn check_type(
    t: &str,
    bits: u32,
    wrap: fn(i64) -> i64,
    div: fn(i64, i64) -> i64,
    rem: fn(i64, i64) -> i64,
) {
    let ctx = DeviceContext::new();
    let n = 203usize; // not a multiple of any sub-group width: a partial sub-group
    let off = -3000i64;
    let big = 1i64 << (bits - 2);
    let input: Vec<i64> = (0..n as i64)
        .map(|i| wrap((i - 100) * 7919 + if i % 3 == 0 { big + i } else { -big - i }))
        .collect();
    let kernel = ctx.kernel(&source(t, bits), "", "k");
    let bytes = (bits / 8) as usize;
    let encode = |v: &[i64]| -> Vec<u8> {
        v.iter()
            .flat_map(|x| x.to_le_bytes()[..bytes].to_vec())
            .collect()
    };
    let decode = |b: &[u8]| -> Vec<i64> {
        b.chunks(bytes)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..bytes].copy_from_slice(c);
                wrap(i64::from_le_bytes(w))
            })
            .collect()
    };
    let inbuf = ctx.buffer_from(&encode(&input));
    let out = ctx.buffer_zeroed::<u8>(n * 16 * bytes);
    kernel.arg_buffer(0, &inbuf).arg_buffer(1, &out).arg(2, off);
    // Any local size (a partial last sub-group), then whole groups of 16.
    for (ran, local) in [(n, None), (n / 16 * 16, Some(16usize))] {
        ctx.run(&kernel, &[ran], local.as_ref().map(std::slice::from_ref));
        let got = decode(&ctx.read::<u8>(&out, n * 16 * bytes));
        for i in 0..ran {
            let a = wrap(i as i64 * 37 + off);
            let v = input[i];
            for (j, d) in divisors(bits).iter().enumerate() {
                let want = [div(a, *d), rem(a, *d), div(v, *d), rem(v, *d)].map(wrap);
                let have = &got[i * 16 + 4 * j..i * 16 + 4 * j + 4];
                assert_eq!(
                    have, &want,
                    "{t} item {i}: a = {a}, v = {v}, d = {d} (a/d, a%d, v/d, v%d)"
                );
            }
        }
    }
}

#[test]
fn signed_int_division_by_powers_of_two() {
    check_type("int", 32, |x| x as i32 as i64, |a, d| a / d, |a, d| a % d);
}

#[test]
fn unsigned_int_division_by_powers_of_two() {
    check_type("uint", 32, |x| x as u32 as i64, |a, d| a / d, |a, d| a % d);
}

#[test]
fn signed_long_division_by_powers_of_two() {
    check_type("long", 64, |x| x, |a, d| a / d, |a, d| a % d);
}

#[test]
fn unsigned_long_division_by_powers_of_two() {
    check_type(
        "ulong",
        64,
        |x| x,
        |a, d| ((a as u64) / (d as u64)) as i64,
        |a, d| ((a as u64) % (d as u64)) as i64,
    );
}
