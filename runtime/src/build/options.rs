//! Parsing of the build options an application passes to `clBuildProgram` /
//! `clCompileProgram`: tokenising (with shell-like quoting), checking every option
//! against the OpenCL list, and splitting the result into what clang gets and what
//! the jit gets. Nothing here runs clang.

use cranecl_jit::{CompileOptions, SUPPORTED_SUB_GROUP_WIDTHS};

use super::BuildOptions;

/// An OpenCL C language version given with `-cl-std=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClStd {
    pub major: u32,
    pub minor: u32,
}

impl ClStd {
    /// What clang compiles when the application gives no `-cl-std`: the highest
    /// OpenCL C 1.x version (OpenCL 3.0 API spec, "Preprocessor options" /
    /// "-cl-std": without it, programs are compiled as OpenCL C 1.2 for devices that
    /// support it). Kernels that need OpenCL C 3.0 features ask for `-cl-std=CL3.0`.
    pub const DEFAULT: ClStd = ClStd { major: 1, minor: 2 };

    /// OpenCL C 3.1, which clang-22 does not know (`-cl-std=CL3.1` is refused).
    pub const CL3_1: ClStd = ClStd { major: 3, minor: 1 };

    /// The clang arguments that select this version (language options: they are
    /// part of the PCH's key). OpenCL C 3.1 is compiled as 3.0 with
    /// `__OPENCL_C_VERSION__` = 310: 3.1 adds no syntax and no semantics a 3.0
    /// compile lacks here. Its additions are the built-ins of six promoted extensions
    /// (all reported by the device, so clang declares them for 3.0 already), printf's
    /// `z`/`t` length modifiers (clang passes the format through; `jit::printf` reads
    /// them as 64-bit) and `CL_VERSION_3_1`, which `cranecl.h` defines in every
    /// version as clang does the older version macros. See ARCHITECTURE.md,
    /// "OpenCL 3.1".
    pub fn clang_args(self) -> Vec<String> {
        if self == ClStd::CL3_1 {
            return vec![
                "-cl-std=CL3.0".into(),
                "-U__OPENCL_C_VERSION__".into(),
                "-D__OPENCL_C_VERSION__=310".into(),
            ];
        }
        vec![format!("-cl-std=CL{}.{}", self.major, self.minor)]
    }
}

/// Intel GPU tuning options that code written for Intel GPUs passes; they only steer
/// the GPU compiler's register allocation and addressing, so on a CPU they are
/// accepted and ignored.
const IGNORED_INTEL_OPTIONS: &[&str] = &[
    "-cl-intel-greater-than-4GB-buffer-required",
    "-cl-intel-256-GRF-per-thread",
    "-cl-intel-128-GRF-per-thread",
    "-cl-intel-enable-auto-large-GRF-mode",
    "-cl-intel-no-prera-scheduling",
    "-cl-intel-force-global-mem-allocation",
    "-cl-intel-disable-a64WA",
];

/// Splits an option string into words: whitespace separates words; single quotes
/// keep everything literally; double quotes keep whitespace and honour `\"` and `\\`;
/// outside quotes a backslash escapes the next character.
pub fn tokenize(options: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => {
                            return Err(format!(
                                "unterminated single quote in build options {options:?}"
                            ))
                        }
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => {
                                return Err(format!(
                                    "unterminated double quote in build options {options:?}"
                                ))
                            }
                        },
                        Some(c) => word.push(c),
                        None => {
                            return Err(format!(
                                "unterminated double quote in build options {options:?}"
                            ))
                        }
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => word.push('\\'),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Parses `options`; `sub_group_width_env` is the value of `CRANECL_SUBGROUP_WIDTH`
/// (passed in so tests need not touch the process environment).
pub fn parse_with_env(
    options: &str,
    sub_group_width_env: Option<&str>,
) -> Result<BuildOptions, String> {
    let words = tokenize(options)?;
    let mut out = BuildOptions {
        jit: CompileOptions::default(),
        ..BuildOptions::default()
    };
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-D" => {
                let def = words
                    .next()
                    .ok_or("build option -D is missing a macro name")?;
                out.clang_args.push(define_arg(&def)?);
            }
            "-I" => {
                let dir = words
                    .next()
                    .ok_or("build option -I is missing a directory")?;
                out.clang_args.push(format!("-I{dir}"));
            }
            w if w.starts_with("-D") => out.clang_args.push(define_arg(&w[2..])?),
            w if w.starts_with("-I") => out.clang_args.push(w.to_string()),
            w if w.starts_with("-cl-std=") => {
                let std = match &w["-cl-std=".len()..] {
                    "CL1.0" => ClStd { major: 1, minor: 0 },
                    "CL1.1" => ClStd { major: 1, minor: 1 },
                    "CL1.2" => ClStd { major: 1, minor: 2 },
                    "CL2.0" => ClStd { major: 2, minor: 0 },
                    "CL3.0" => ClStd { major: 3, minor: 0 },
                    "CL3.1" => ClStd::CL3_1,
                    other => {
                        return Err(format!(
                            "unsupported OpenCL C version in build option {w:?}: {other:?} (accepted: CL1.0, CL1.1, CL1.2, CL2.0, CL3.0, CL3.1)"
                        ))
                    }
                };
                out.cl_std = Some(std);
            }
            "-w" | "-Werror" => out.clang_args.push(word.clone()),
            "-cl-single-precision-constant"
            | "-cl-fp32-correctly-rounded-divide-sqrt"
            | "-cl-no-signed-zeros"
            | "-cl-finite-math-only" => out.clang_args.push(word.clone()),
            "-cl-mad-enable" => {
                out.jit.mad_enable = true;
                out.clang_args.push(word.clone());
            }
            "-cl-unsafe-math-optimizations" | "-cl-fast-relaxed-math" => {
                // Both imply -cl-mad-enable and -cl-no-signed-zeros (OpenCL 3.0 §5.8.4.4).
                out.jit.fast_relaxed_math = true;
                out.jit.mad_enable = true;
                out.clang_args.push(word.clone());
            }
            "-cl-denorms-are-zero" => {
                // clang's SPIR-V target ignores it; the jit flushes.
                out.jit.denorms_are_zero = true;
            }
            "-cl-opt-disable" => {
                out.jit.opt_disable = true;
                out.clang_args.push(word.clone());
            }
            "-cl-kernel-arg-info" => {
                out.kernel_arg_info = true;
                out.clang_args.push(word.clone());
            }
            "-cl-uniform-work-group-size" => {
                out.uniform_work_group_size = true;
                out.clang_args.push(word.clone());
            }
            // Sub-groups of a CPU device always make independent forward progress.
            "-cl-no-subgroup-ifp" => {}
            // Deprecated since OpenCL 1.1 but still accepted by conformant devices.
            "-cl-strict-aliasing" => {}
            // Debug info is not carried into native code yet; accepted and ignored.
            "-g" => {}
            w if IGNORED_INTEL_OPTIONS.contains(&w) => {}
            "" => {}
            _ => return Err(format!("unknown build option {word:?}")),
        }
    }
    if let Some(text) = sub_group_width_env {
        match text.trim().parse::<u32>() {
            Ok(w) if SUPPORTED_SUB_GROUP_WIDTHS.contains(&w) => {
                out.jit.default_sub_group_width = Some(w)
            }
            _ => {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| {
                    eprintln!(
                        "cranecl: ignoring CRANECL_SUBGROUP_WIDTH={text:?}: not one of the supported widths {SUPPORTED_SUB_GROUP_WIDTHS:?}"
                    )
                });
            }
        }
    }
    Ok(out)
}

/// `-D` argument text for a definition `name[=value]`, checking the name.
fn define_arg(def: &str) -> Result<String, String> {
    let name = def.split_once('=').map_or(def, |(n, _)| n);
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "build option -D{def}: {name:?} is not a valid macro name"
        ));
    }
    Ok(format!("-D{def}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<BuildOptions, String> {
        parse_with_env(s, None)
    }

    #[test]
    fn tokenizer_quotes() {
        assert_eq!(tokenize("  a  b\tc\n").unwrap(), ["a", "b", "c"]);
        assert_eq!(
            tokenize(r#"-DX="a b" 'c d' e\ f"#).unwrap(),
            ["-DX=a b", "c d", "e f"]
        );
        assert_eq!(tokenize(r#"-DS="\"q\"""#).unwrap(), [r#"-DS="q""#]);
        assert_eq!(tokenize("''").unwrap(), [""]);
        assert!(tokenize("'open").is_err());
        assert!(tokenize("\"open").is_err());
        assert!(tokenize("").unwrap().is_empty());
    }

    #[test]
    fn defines_and_includes() {
        let o = parse("-D A -DB=2 -D C=x -I /tmp/inc -I/usr/include -D 'S=\"a b\"'").unwrap();
        assert_eq!(
            o.clang_args,
            [
                "-DA",
                "-DB=2",
                "-DC=x",
                "-I/tmp/inc",
                "-I/usr/include",
                "-DS=\"a b\""
            ]
        );
        assert!(parse("-D").unwrap_err().contains("-D"));
        assert!(parse("-I").unwrap_err().contains("-I"));
        assert!(parse("-D 1X").unwrap_err().contains("macro name"));
        assert!(parse("-D=3").is_err());
    }

    #[test]
    fn language_versions() {
        for (text, major, minor) in [
            ("CL1.0", 1, 0),
            ("CL1.1", 1, 1),
            ("CL1.2", 1, 2),
            ("CL2.0", 2, 0),
            ("CL3.0", 3, 0),
        ] {
            let o = parse(&format!("-cl-std={text}")).unwrap();
            assert_eq!(o.cl_std, Some(ClStd { major, minor }));
            assert_eq!(
                o.effective_cl_std().clang_args(),
                [format!("-cl-std={text}")]
            );
        }
        // clang-22 knows no CL3.1: 3.0 with the 3.1 version macro.
        let o = parse("-cl-std=CL3.1").unwrap();
        assert_eq!(o.cl_std, Some(ClStd::CL3_1));
        assert!(o.cl_std > Some(ClStd { major: 3, minor: 0 }));
        assert_eq!(
            o.effective_cl_std().clang_args(),
            [
                "-cl-std=CL3.0",
                "-U__OPENCL_C_VERSION__",
                "-D__OPENCL_C_VERSION__=310"
            ]
        );
        assert!(o.non_uniform_work_groups());
        assert_eq!(parse("").unwrap().cl_std, None);
        assert_eq!(parse("").unwrap().effective_cl_std(), ClStd::DEFAULT);
        assert_eq!(ClStd::DEFAULT.clang_args(), ["-cl-std=CL1.2"]);
        assert!(parse("-cl-std=CL3.2").is_err());
        let err = parse("-cl-std=CL4.0").unwrap_err();
        assert!(err.contains("CL4.0"), "{err}");
    }

    #[test]
    fn math_options_reach_jit_and_clang() {
        let o = parse("-cl-fast-relaxed-math").unwrap();
        assert!(o.jit.fast_relaxed_math && o.jit.mad_enable);
        assert_eq!(o.clang_args, ["-cl-fast-relaxed-math"]);
        let o = parse("-cl-unsafe-math-optimizations").unwrap();
        assert!(o.jit.fast_relaxed_math && o.jit.mad_enable);
        let o = parse("-cl-mad-enable -cl-denorms-are-zero -cl-opt-disable").unwrap();
        assert!(o.jit.mad_enable && o.jit.denorms_are_zero && o.jit.opt_disable);
        assert!(!o.jit.fast_relaxed_math);
        assert_eq!(o.clang_args, ["-cl-mad-enable", "-cl-opt-disable"]);
        let o = parse(
            "-cl-single-precision-constant -cl-fp32-correctly-rounded-divide-sqrt -cl-no-signed-zeros -cl-finite-math-only",
        )
        .unwrap();
        assert_eq!(o.clang_args.len(), 4);
        assert!(!o.jit.fast_relaxed_math);
    }

    #[test]
    fn flags() {
        let o = parse(
            "-w -Werror -cl-kernel-arg-info -cl-uniform-work-group-size -cl-no-subgroup-ifp -g",
        )
        .unwrap();
        assert!(o.kernel_arg_info && o.uniform_work_group_size);
        assert_eq!(
            o.clang_args,
            [
                "-w",
                "-Werror",
                "-cl-kernel-arg-info",
                "-cl-uniform-work-group-size"
            ]
        );
        assert!(parse("-cl-intel-greater-than-4GB-buffer-required")
            .unwrap()
            .clang_args
            .is_empty());
    }

    #[test]
    fn unknown_options_are_named() {
        for bad in ["-O3", "-cl-fast-math", "--foo", "-cl-std", "-Wall", "junk"] {
            let err = parse(&format!("-w {bad}")).unwrap_err();
            assert!(err.contains(bad), "{bad}: {err}");
        }
    }

    #[test]
    fn non_uniform_groups_follow_the_language_version() {
        // The default language is OpenCL C 1.2: uniform work-groups.
        assert!(!parse("").unwrap().non_uniform_work_groups());
        assert!(parse("-cl-std=CL3.0").unwrap().non_uniform_work_groups());
        assert!(parse("-cl-std=CL2.0").unwrap().non_uniform_work_groups());
        assert!(!parse("-cl-std=CL1.2").unwrap().non_uniform_work_groups());
        assert!(!parse("-cl-std=CL3.0 -cl-uniform-work-group-size")
            .unwrap()
            .non_uniform_work_groups());
    }

    #[test]
    fn sub_group_width_from_env() {
        assert_eq!(
            parse_with_env("", Some("16"))
                .unwrap()
                .jit
                .default_sub_group_width,
            Some(16)
        );
        assert_eq!(
            parse_with_env("", None)
                .unwrap()
                .jit
                .default_sub_group_width,
            None
        );
        // An unsupported width is ignored (with a warning), not a build failure.
        assert_eq!(
            parse_with_env("", Some("7"))
                .unwrap()
                .jit
                .default_sub_group_width,
            None
        );
        assert_eq!(
            parse_with_env("", Some("x"))
                .unwrap()
                .jit
                .default_sub_group_width,
            None
        );
    }
}
