//! printf from kernels, end to end: the output a child process writes to its
//! standard output is compared exactly with a reference the host's C library formats
//! (`snprintf`), conversion by conversion. Also: one line per work-item in work-item
//! order, nothing from inactive work-items, output in enqueue order and in order with
//! the host's own stdio output, return values (0, and -1 once the buffer of
//! `CL_DEVICE_PRINTF_BUFFER_SIZE` is full), and formats OpenCL C refuses.
//!
//! Each `*_child` test runs only inside a re-executed copy of this binary
//! ([`child_stdout`]); it prints `BEGIN`/`END` lines around what it checks.

// Reference values repeat the kernel source's literals digit for digit.
#![allow(clippy::excessive_precision, clippy::approx_constant)]

use std::ffi::{c_char, c_int, c_void, CString};

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

extern "C" {
    fn snprintf(buf: *mut c_char, n: usize, format: *const c_char, ...) -> c_int;
    fn printf(format: *const c_char, ...) -> c_int;
    fn fflush(stream: *mut c_void) -> c_int;
}

/// Writes `text` with C's printf and flushes every stream, as a C host program would.
fn host_print(text: &str) {
    let text = CString::new(text).unwrap();
    // SAFETY: "%s" with a NUL-terminated string; fflush(NULL) flushes all streams.
    unsafe {
        printf(c"%s".as_ptr(), text.as_ptr());
        fflush(std::ptr::null_mut());
    }
}

/// One value as C's variadic promotion passes it.
#[derive(Clone, Copy, Debug)]
enum C {
    Int(i32),
    Long(i64),
    Double(f64),
    Str(&'static str),
}

/// `snprintf(format, value)` by the host's C library.
fn c_format(format: &str, value: C) -> String {
    let f = CString::new(format).unwrap();
    let mut buf = vec![0u8; 256];
    let (b, n) = (buf.as_mut_ptr().cast::<c_char>(), buf.len());
    // SAFETY: a 256-byte buffer, a NUL-terminated format with one conversion whose
    // type matches the argument passed.
    let len = unsafe {
        match value {
            C::Int(v) => snprintf(b, n, f.as_ptr(), v),
            C::Long(v) => snprintf(b, n, f.as_ptr(), v),
            C::Double(v) => snprintf(b, n, f.as_ptr(), v),
            C::Str(s) => {
                let s = CString::new(s).unwrap();
                snprintf(b, n, f.as_ptr(), s.as_ptr())
            }
        }
    };
    assert!(len >= 0 && (len as usize) < buf.len(), "{format}");
    buf.truncate(len as usize);
    String::from_utf8(buf).unwrap()
}

/// A printf call of the test kernel: its format (one conversion), its argument as
/// OpenCL C source, and the reference: the C format for one component and the
/// component values.
struct Case {
    format: &'static str,
    arg: &'static str,
    c_format: &'static str,
    values: Vec<C>,
    /// Checked on other drivers too (PoCL 3.1 prints double arguments at float
    /// precision, drops the padding of `%-5.1s` and knows no `z`/`t`: those cases
    /// are cranecl-only).
    portable: bool,
}

fn case(format: &'static str, arg: &'static str, c_format: &'static str, values: Vec<C>) -> Case {
    Case {
        format,
        arg,
        c_format,
        values,
        portable: true,
    }
}

/// A [`case`] checked on cranecl only.
fn cranecl_case(
    format: &'static str,
    arg: &'static str,
    c_format: &'static str,
    values: Vec<C>,
) -> Case {
    Case {
        portable: false,
        ..case(format, arg, c_format, values)
    }
}

fn f(x: f32) -> C {
    C::Double(f64::from(x))
}

fn cases() -> Vec<Case> {
    use C::*;
    vec![
        // Integers: flags, widths, precisions, length modifiers.
        case("%5d", "10", "%5d", vec![Int(10)]),
        case("%-5d", "10", "%-5d", vec![Int(10)]),
        case("%05d", "-10", "%05d", vec![Int(-10)]),
        case("%+5d", "10", "%+5d", vec![Int(10)]),
        case("% 10d", "42", "% 10d", vec![Int(42)]),
        case("%-+6.5i", "100", "%-+6.5i", vec![Int(100)]),
        case("%.0u", "0", "%.0u", vec![Int(0)]),
        case("%u", "-1", "%u", vec![Int(-1)]),
        case("%#o", "8", "%#o", vec![Int(8)]),
        case("%04.5o", "10", "%04.5o", vec![Int(10)]),
        case("%#x", "0xABCDEF", "%#x", vec![Int(0xABCDEF)]),
        case("%#X", "0", "%#X", vec![Int(0)]),
        case("%08X", "399", "%08X", vec![Int(399)]),
        case("%hd", "70000", "%hd", vec![Int(70000)]),
        case("%hx", "-32767", "%hx", vec![Int(-32767)]),
        case("%hhd", "-129", "%hhd", vec![Int(-129)]),
        case("%hhu", "300", "%hhu", vec![Int(300)]),
        case(
            "%ld",
            "-9000000000000000L",
            "%ld",
            vec![Long(-9_000_000_000_000_000)],
        ),
        case("%lu", "(ulong)-1", "%lu", vec![Long(-1)]),
        case(
            "%#lx",
            "0x123456789abcdef0L",
            "%#lx",
            vec![Long(0x1234_5678_9abc_def0)],
        ),
        case(
            "%-20lo",
            "01234567012345670L",
            "%-20lo",
            vec![Long(0o1234567012345670)],
        ),
        // size_t and ptrdiff_t (OpenCL C 3.1; 64-bit on this device).
        cranecl_case(
            "%-15zd",
            "(size_t)-10000000000L",
            "%-15zd",
            vec![Long(-10_000_000_000)],
        ),
        cranecl_case("%#zX", "(size_t)11259375", "%#zX", vec![Long(11259375)]),
        cranecl_case(
            "%.15tu",
            "(ptrdiff_t)10000000000L",
            "%.15tu",
            vec![Long(10_000_000_000)],
        ),
        cranecl_case("%+5td", "(ptrdiff_t)10", "%+5td", vec![Long(10)]),
        // Floating point: float arguments are promoted to double.
        case("%f", "10.3456f", "%f", vec![f(10.3456)]),
        case("%8.3f", "-10.3456f", "%8.3f", vec![f(-10.3456)]),
        case("%.0f", "0.5f", "%.0f", vec![f(0.5)]),
        case("%#.0f", "3.0f", "%#.0f", vec![f(3.0)]),
        case("%e", "789456128.f", "%e", vec![f(789456128.0)]),
        case(
            "%+#21.15E",
            "789456128.f",
            "%+#21.15E",
            vec![f(789456128.0)],
        ),
        case("%g", "12345.6789f", "%g", vec![f(12345.6789)]),
        case("%4.2g", "12345.6789f", "%4.2g", vec![f(12345.6789)]),
        case("%G", "0.0000023f", "%G", vec![f(0.0000023)]),
        case("%#g", "1.0f", "%#g", vec![f(1.0)]),
        case("%a", "0.1f", "%a", vec![f(0.1)]),
        case("%.13A", "-14611.3125f", "%.13A", vec![f(-14611.3125)]),
        case("%10.2a", "1.5f", "%10.2a", vec![f(1.5)]),
        case("%.0a", "1.5f", "%.0a", vec![f(1.5)]),
        case("%f", "INFINITY", "%f", vec![Double(f64::INFINITY)]),
        case("%-6E", "-INFINITY", "%-6E", vec![Double(f64::NEG_INFINITY)]),
        cranecl_case("%.17g", "0.1", "%.17g", vec![Double(0.1)]),
        cranecl_case("%a", "1.0/3.0", "%a", vec![Double(1.0 / 3.0)]),
        cranecl_case("%e", "4.9406564584124654e-324", "%e", vec![Double(5e-324)]),
        cranecl_case("%a", "2.5e-310", "%a", vec![Double(2.5e-310)]),
        case("%lf", "2.5", "%lf", vec![Double(2.5)]),
        // Characters and strings.
        case("%c", "'A'", "%c", vec![Int(65)]),
        case("%-4c", "'1'", "%-4c", vec![Int(49)]),
        case("%4c", "66", "%4c", vec![Int(66)]),
        case("%s", "\"foo\"", "%s", vec![Str("foo")]),
        case("%s", "\"\"", "%s", vec![Str("")]),
        case("%5s", "\"ab\"", "%5s", vec![Str("ab")]),
        cranecl_case("%-5.1s|", "\"ab\"", "%-5.1s|", vec![Str("ab")]),
        case("%s", "\"a%%b\\tc\"", "%s", vec![Str("a%%b\tc")]),
        case("%s", "\"foo\\0bar\"", "%s", vec![Str("foo")]),
        case("%%%s%%", "\"x\"", "%%%s%%", vec![Str("x")]),
        // Vectors: every component with the same specification, comma-separated.
        case(
            "%2.2v4hlf",
            "(float4)(1.0f, 2.0f, 3.0f, 4.0f)",
            "%2.2f",
            vec![f(1.0), f(2.0), f(3.0), f(4.0)],
        ),
        case(
            "%.2v3hle",
            "(float3)(1234.25f, 987654.5f, 0.0005f)",
            "%.2e",
            vec![f(1234.25), f(987654.5), f(0.0005)],
        ),
        case(
            "%.1v4hla",
            "(float4)(0.25f, 0.5f, 1.f, 1.5f)",
            "%.1a",
            vec![f(0.25), f(0.5), f(1.0), f(1.5)],
        ),
        case(
            "%v2hlg",
            "(float2)(3.14f, -2.5f)",
            "%g",
            vec![f(3.14), f(-2.5)],
        ),
        case(
            "%v2lf",
            "(double2)(0.125, -1e10)",
            "%f",
            vec![Double(0.125), Double(-1e10)],
        ),
        case(
            "%#v8hhx",
            "(uchar8)(0xFA, 0xFB, 0, 1, 2, 0x10, 0x7F, 0x80)",
            "%#hhx",
            [0xFA, 0xFB, 0, 1, 2, 0x10, 0x7F, 0x80].map(Int).to_vec(),
        ),
        case(
            "%v2hhd",
            "(char2)(-128, 127)",
            "%hhd",
            vec![Int(-128), Int(127)],
        ),
        case(
            "%#v2hx",
            "(ushort2)(0x1234, 0x8765)",
            "%#hx",
            vec![Int(0x1234), Int(0x8765)],
        ),
        case(
            "%+v3hli",
            "(int3)(1, -2, 3)",
            "%+d",
            vec![Int(1), Int(-2), Int(3)],
        ),
        case(
            "%05v4hlu",
            "(uint4)(512, 1024, 262144, 1048576)",
            "%05u",
            [512, 1024, 262144, 1048576].map(Int).to_vec(),
        ),
        case(
            "%v2ld",
            "(long2)(12345678, -98765432109L)",
            "%ld",
            vec![Long(12345678), Long(-98765432109)],
        ),
        case(
            "%v16hd",
            "(short16)(0, 1, -1, 2, -2, 300, -300, 32767, -32768, 5, 6, 7, 8, 9, 10, 11)",
            "%hd",
            [
                0, 1, -1, 2, -2, 300, -300, 32767, -32768, 5, 6, 7, 8, 9, 10, 11,
            ]
            .map(Int)
            .to_vec(),
        ),
        case(
            "%v16hlo",
            "(uint16)(1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 32, 64, 128, 256, 512, 1024)",
            "%o",
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 32, 64, 128, 256, 512, 1024]
                .map(Int)
                .to_vec(),
        ),
    ]
}

/// The kernel: one printf per case, each on its own line, then `%p` of its argument.
fn conversions_source() -> String {
    let mut src = String::from("kernel void k(global ulong *p) {\n");
    for c in cases() {
        src.push_str(&format!("  printf(\"[{}]\\n\", {});\n", c.format, c.arg));
    }
    src.push_str("  printf(\"[%p]\\n\", p);\n  p[0] = (ulong)p;\n}\n");
    src
}

fn conversions_reference() -> String {
    let mut want = String::new();
    for c in cases() {
        let parts: Vec<String> = c.values.iter().map(|v| c_format(c.c_format, *v)).collect();
        want.push_str(&format!("[{}]\n", parts.join(",")));
    }
    want
}

/// The text between the child's BEGIN and END lines.
fn between_markers(stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(stdout);
    let begin = text.find("BEGIN\n").expect("BEGIN line") + "BEGIN\n".len();
    let end = text[begin..].find("END\n").expect("END line") + begin;
    text[begin..end].to_string()
}

#[test]
fn conversions_child() {
    if !is_child_for("conversions_child") {
        return;
    }
    let ctx = DeviceContext::new();
    // The build options the parent chose (the OpenCL C version).
    let options = std::env::var(OPTIONS_VAR).unwrap_or_default();
    let kernel = ctx.kernel(&conversions_source(), &options, "k");
    let out = ctx.buffer_zeroed::<u64>(1);
    kernel.arg_buffer(0, &out);
    host_print("BEGIN\n");
    ctx.run(&kernel, &[1], None);
    let address: Vec<u64> = ctx.read(&out, 1);
    // The %p reference: the C library's %p of the same address.
    let mut buf = vec![0u8; 64];
    // SAFETY: a 64-byte buffer, "%p" with a pointer-sized argument never dereferenced.
    let n = unsafe {
        snprintf(
            buf.as_mut_ptr().cast(),
            buf.len(),
            c"%p".as_ptr(),
            address[0] as usize as *const c_void,
        )
    };
    buf.truncate(n as usize);
    host_print(&format!(
        "host: [{}]\nEND\n",
        String::from_utf8(buf).unwrap()
    ));
    println!("CHILD-OK");
}

/// The environment variable that passes [`conversions_child`] its build options.
const OPTIONS_VAR: &str = "CRANECL_TEST_PRINTF_OPTIONS";

#[test]
fn every_conversion_matches_the_c_library() {
    if is_child() {
        return;
    }
    // OpenCL C 1.2 (no -cl-std) and, where the device has it, OpenCL C 3.1, the
    // version that defines the z and t length modifiers.
    check_conversions("");
    let ctx = DeviceContext::new();
    if testing_cranecl() {
        assert!(ctx.supports_opencl_c(3, 1), "cranecl claims OpenCL C 3.1");
    }
    if ctx.supports_opencl_c(3, 1) {
        check_conversions("-cl-std=CL3.1");
    }
}

/// Runs [`conversions_child`] with build `options` and compares its output with the
/// C library's.
fn check_conversions(options: &str) {
    let got = between_markers(&child_stdout(
        "conversions_child",
        &[(OPTIONS_VAR, options)],
    ));
    let mut lines: Vec<&str> = got.lines().collect();
    let host_p = lines.pop().expect("host %p line");
    let kernel_p = lines.pop().expect("kernel %p line");
    // %p is implementation-defined: it must name the same address. cranecl prints
    // it as the C library does.
    let addr = |s: &str| {
        let hex = s
            .trim_matches(|c| c == '[' || c == ']')
            .trim_start_matches("host: [");
        let hex = hex.trim_start_matches("0x").trim_end_matches(']');
        u64::from_str_radix(hex, 16).unwrap_or_else(|_| panic!("not an address: {s}"))
    };
    assert_eq!(addr(kernel_p), addr(host_p), "{kernel_p} vs {host_p}");
    if testing_cranecl() {
        assert_eq!(format!("host: {kernel_p}"), host_p);
    }
    let want = conversions_reference();
    let want: Vec<&str> = want.lines().collect();
    assert_eq!(lines.len(), want.len(), "output:\n{got}");
    let src = conversions_source();
    let calls: Vec<&str> = src.lines().skip(1).collect();
    let portable: Vec<bool> = cases().iter().map(|c| c.portable).collect();
    let wrong: Vec<String> = lines
        .iter()
        .zip(&want)
        .zip(calls)
        .zip(portable)
        .filter(|(((g, w), _), portable)| g != w && (*portable || testing_cranecl()))
        .map(|(line, _)| line)
        .map(|((g, w), call)| format!("{}: got {g:?}, C: {w:?}", call.trim()))
        .collect();
    assert!(
        wrong.is_empty(),
        "options {options:?}:\n{}",
        wrong.join("\n")
    );
}

const PER_ITEM: &str = r#"
kernel void k(global int *ret, int sub) {
  int i = get_global_id(0);
  ret[i] = 7;
  if (i % 3 != 1)
    ret[i] = printf("item %d of %d: %v2hld\n", i, (int)get_global_size(0), (int2)(i, -i));
  if (sub)
    printf("%s %d\n", i & 1 ? "odd" : "even", i);
}
"#;

#[test]
fn work_items_child() {
    if !is_child_for("work_items_child") {
        return;
    }
    let ctx = DeviceContext::new();
    let kernel = ctx.kernel(PER_ITEM, "", "k");
    let n = 100;
    let ret = ctx.buffer_zeroed::<i32>(n);
    kernel.arg_buffer(0, &ret).arg(1, 0i32);
    host_print("BEGIN\nhost before\n");
    ctx.run(&kernel, &[n], Some(&[20]));
    host_print("host between\n");
    // Two enqueues print in enqueue order (the second prints only its `%s` lines
    // after its own `item` lines); the host's text stays where it was printed.
    kernel.arg(1, 1i32);
    let first = ctx.try_enqueue(&kernel, None, &[6], Some(&[6])).unwrap();
    kernel.arg(1, 0i32);
    let second = ctx.try_enqueue(&kernel, None, &[2], Some(&[2])).unwrap();
    ctx.finish();
    drop((first, second));
    let got: Vec<i32> = ctx.read(&ret, n);
    for (i, r) in got.iter().enumerate() {
        let want = if i % 3 == 1 { 7 } else { 0 };
        // Intel's CPU runtime returns the number of characters printed (C99), not
        // the 0 OpenCL C specifies: only the untouched values are checked there.
        if testing_cranecl() || want == 7 {
            assert_eq!(*r, want, "printf's return value for work-item {i}");
        }
    }
    host_print("host after\nEND\n");
    println!("CHILD-OK");
}

#[test]
fn work_items_print_in_order_and_inactive_ones_not_at_all() {
    if is_child() {
        return;
    }
    // One worker thread: work-groups then run one after the other, so the whole
    // output has one order (within a sub-group it always has: work-item order).
    let got = between_markers(&child_stdout(
        "work_items_child",
        &[("CRANECL_NUM_THREADS", "1")],
    ));
    let items = |n: usize| -> String {
        (0..n)
            .filter(|i| i % 3 != 1)
            .map(|i| format!("item {i} of {n}: {i},{}\n", -(i as i64)))
            .collect()
    };
    let mut want = String::from("host before\n");
    want += &items(100);
    want += "host between\n";
    let mut first = items(6);
    if testing_cranecl() {
        // Within the sub-group, the second call's lines follow the first call's.
        for i in 0..6 {
            first += &format!("{} {i}\n", if i & 1 == 1 { "odd" } else { "even" });
        }
    } else {
        first = got[want.len()..]
            .lines()
            .take(10)
            .map(|l| format!("{l}\n"))
            .collect();
    }
    want += &first;
    want += &items(2);
    want += "host after\n";
    assert_eq!(got, want);
}

#[test]
fn full_buffer_child() {
    if !is_child_for("full_buffer_child") {
        return;
    }
    let ctx = DeviceContext::new();
    let size: usize = device_info(ctx.device, CL_DEVICE_PRINTF_BUFFER_SIZE).unwrap();
    assert_eq!(size, 1 << 20, "CL_DEVICE_PRINTF_BUFFER_SIZE");
    let src = "kernel void k(global int *ret) { int i = get_global_id(0); ret[i] = printf(\"%d\\n\", i); }";
    let kernel = ctx.kernel(src, "", "k");
    // More calls than bytes in the buffer: some of them cannot fit.
    let n = size;
    let ret = ctx.buffer_zeroed::<i32>(n);
    kernel.arg_buffer(0, &ret);
    host_print("BEGIN\n");
    ctx.run(&kernel, &[n], None);
    host_print("END\n");
    let got: Vec<i32> = ctx.read(&ret, n);
    let ok = got.iter().filter(|r| **r == 0).count();
    let failed = got.iter().filter(|r| **r == -1).count();
    assert_eq!(ok + failed, n, "printf returns 0 or -1");
    println!("CHILD-OK {ok} {failed}");
}

#[test]
fn a_full_buffer_drops_whole_calls_and_returns_minus_one() {
    if is_child() || !testing_cranecl() {
        return;
    }
    let stdout = child_stdout("full_buffer_child", &[]);
    let text = String::from_utf8_lossy(&stdout);
    let counts: Vec<usize> = text
        .lines()
        .find_map(|l| l.strip_prefix("CHILD-OK "))
        .expect("counts")
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    let (ok, failed) = (counts[0], counts[1]);
    assert!(failed > 0, "{ok} calls fit in 1 MiB, none failed");
    assert!(ok >= (1 << 20) / 16, "only {ok} calls fit in 1 MiB");
    // Exactly the calls that returned 0 printed, each a whole line.
    let got = between_markers(&stdout);
    let mut printed: Vec<usize> = got.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(printed.len(), ok);
    printed.sort_unstable();
    printed.dedup();
    assert_eq!(printed.len(), ok, "no line printed twice");
}

#[test]
fn formats_opencl_c_does_not_allow_fail_the_build() {
    if is_child() || !testing_cranecl() {
        return;
    }
    let ctx = DeviceContext::new();
    for (body, why) in [
        (r#"printf("%v4hld\n", (int2)(1, 2));"#, "4-component vector"),
        (r#"printf("%d %d\n", 1);"#, "has no argument"),
        (r#"printf("%5.3Lf\n", 1.0);"#, "'L' length modifier"),
    ] {
        let src = format!("kernel void k() {{ {body} }}");
        let failure = ctx.try_build(&src, "-w").expect_err(body);
        assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE, "{body}");
        assert!(
            failure.log.contains(why) && failure.log.contains("printf"),
            "{body}: {}",
            failure.log
        );
    }
}
