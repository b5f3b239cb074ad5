//! `#pragma OPENCL EXTENSION <name> : enable` for the extensions the device reports:
//! clang-22 honours the pragma of only a few (`features::quiet_pragma`); for the
//! others (extensions it does not know, or knows without a pragma) it warns
//! "unknown or does not require pragma - ignoring", an error under `-Werror`. Such a
//! pragma has no effect in clang, so the source clang reads has it as an empty line
//! (line numbers unchanged); a pragma of any other name still gets clang's warning.

use std::borrow::Cow;

use crate::features::quiet_pragma;

/// `source` with the pragma lines clang would ignore (with a warning) emptied.
pub fn quiet_extension_pragmas(source: &str) -> Cow<'_, str> {
    if !source.contains("EXTENSION") {
        return Cow::Borrowed(source);
    }
    let mut out = String::new();
    let mut changed = false;
    for line in source.split_inclusive('\n') {
        if extension_pragma(line).is_some_and(quiet_pragma) {
            let body = line.trim_end_matches(['\n', '\r']);
            out.push_str(&line[body.len()..]);
            changed = true;
        } else {
            out.push_str(line);
        }
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(source)
    }
}

/// The extension name of a line `#pragma OPENCL EXTENSION name : behaviour` (nothing
/// but a comment after it).
fn extension_pragma(line: &str) -> Option<&str> {
    let word = |s: &str, w: &str| -> Option<usize> {
        let rest = s.strip_prefix(w)?;
        let ws = rest.len() - rest.trim_start().len();
        (ws > 0 || rest.is_empty()).then_some(w.len() + ws)
    };
    let s = line.trim_start().strip_prefix('#')?.trim_start();
    let s = &s[word(s, "pragma")?..];
    let s = &s[word(s, "OPENCL")?..];
    let s = &s[word(s, "EXTENSION")?..];
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    let (name, rest) = s.split_at(end);
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let b_end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let (behaviour, tail) = rest.split_at(b_end);
    let tail = tail.trim();
    let tail_ok = tail.is_empty() || tail.starts_with("//") || tail.starts_with("/*");
    (!name.is_empty() && matches!(behaviour, "enable" | "disable") && tail_ok).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_extension_pragmas() {
        assert_eq!(
            extension_pragma("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"),
            Some("cl_khr_fp16")
        );
        assert_eq!(
            extension_pragma("  #  pragma   OPENCL EXTENSION cl_x:disable // c\r\n"),
            Some("cl_x")
        );
        assert_eq!(
            extension_pragma("#pragma OPENCL EXTENSION cl_x : begin"),
            None
        );
        assert_eq!(
            extension_pragma("#pragma OPENCL EXTENSION cl_x : enable x"),
            None
        );
        assert_eq!(extension_pragma("#pragma OPENCL FP_CONTRACT ON"), None);
        assert_eq!(
            extension_pragma("#pragmaOPENCL EXTENSION cl_x : enable"),
            None
        );
        assert_eq!(
            extension_pragma("x = 1; // #pragma OPENCL EXTENSION a : enable"),
            None
        );
    }

    #[test]
    fn empties_only_the_pragmas_clang_ignores() {
        let src = "#pragma OPENCL EXTENSION cl_khr_extended_async_copies : enable\r\n\
                   #pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
                   #pragma OPENCL EXTENSION cl_vendor_unknown : enable\n\
                   #pragma OPENCL EXTENSION cl_khr_subgroup_ballot : disable\n\
                   kernel void k() {}";
        let want = "\r\n\
                    #pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
                    #pragma OPENCL EXTENSION cl_vendor_unknown : enable\n\
                    \n\
                    kernel void k() {}";
        assert_eq!(quiet_extension_pragmas(src), want);
        let plain = "kernel void k() {}";
        assert!(matches!(quiet_extension_pragmas(plain), Cow::Borrowed(_)));
    }
}
