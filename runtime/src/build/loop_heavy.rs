//! Programs with hundreds of loops or thousands of branches: a cheaper optimisation
//! pipeline through LLVM's `opt`.
//!
//! clang's `-O2` pipeline is superlinear in the number of loops of one function: its
//! loop passes (rotation, induction-variable simplification), InstCombine's
//! dominating-condition queries and GVN's memory dependence queries walk a dominator
//! tree that is a chain as deep as the function is long. A kernel of 1000 sequential
//! loops spends 2.5 s in clang's optimiser, 2000 loops 12 s, 10 000 loops more than
//! 200 s. For such functions the build runs `opt` (the `opt` of clang's own LLVM
//! installation) with [`PIPELINE`]: inlining, scalar replacement, CSE, instruction
//! combining, GVN and CFG clean-up, no loop passes. That takes 0.4 s at 1000 loops
//! and gives the jit less code (loops are not rotated or unrolled), at the price of
//! leaving loop-invariant code in such kernels' loops.
//!
//! Functions with thousands of conditional branches are superlinear in `-O2` too:
//! InstCombine's known bits from dominating conditions look at every branch on the
//! same value (O(branches²) per InstCombine run, and `-O2` runs it eight times), and
//! GVN propagates each branch's condition through its uses. build_scale `nesting`
//! (ifs nested 100 deep) at 1000/2000/4000 branches: `-O2` 0.52/1.51/5.42 s, the
//! light pipeline plus the backend 0.22/0.61/2.04 s, with the same code from the jit
//! (1000: 157 569 vs 157 763 Cranelift instructions; `branches`: identical).
//!
//! From [`MINIMAL_BRANCH_LIMIT`] branches on, even that pipeline's InstCombine and GVN
//! are quadratic (every branch on `x` is a dominating condition each query about `x`
//! looks at), and so is clang's backend on what they leave: such functions get
//! [`MINIMAL_PIPELINE`].
//!
//! The decision is made on the unoptimised IR of a whole-program build (see
//! `whole_program`): [`shape`] counts the loops and conditional branches of its
//! biggest functions.
//! Without an `opt` next to clang the build keeps `-O2`. This module only inspects IR
//! text and finds `opt`; running it is the caller's business.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Functions with at least this many loops (back edges) get [`PIPELINE`]; below it
/// clang's `-O2` costs under 0.5 s (measured: 400 loops 0.49 s, 200 loops 0.19 s).
pub const LOOP_LIMIT: usize = 384;

/// The limit in effect: `CRANECL_LIGHT_OPT_LOOPS` when it is a number (0 = always
/// the light pipeline, for tests), else [`LOOP_LIMIT`].
pub fn loop_limit_from_env() -> usize {
    std::env::var("CRANECL_LIGHT_OPT_LOOPS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(LOOP_LIMIT)
}

/// Functions with at least this many conditional branches get [`PIPELINE`]: about
/// where `-O2` costs 0.5 s (build_scale `nesting`, `branches` at 1000).
pub const BRANCH_LIMIT: usize = 1000;

/// What decides the pipeline: the most loops and the most conditional branches of
/// one function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub loops: usize,
    pub branches: usize,
}

/// Functions with at least this many conditional branches get [`MINIMAL_PIPELINE`]:
/// from here on [`PIPELINE`]'s InstCombine and GVN, and clang's backend on what they
/// leave, grow with the square of the branches on one value (see the module
/// documentation); build_scale `nesting` at 4000/10 000 branches: opt 1.44/14.5 s,
/// backend 0.86/6.65 s; with the minimal pipeline 0.56/1.67 and 0.56/1.59 s.
pub const MINIMAL_BRANCH_LIMIT: usize = 2000;

/// The `opt -passes=` pipeline for functions of [`MINIMAL_BRANCH_LIMIT`] branches or
/// more: [`PIPELINE`] with InstSimplify for InstCombine and without GVN, the two passes
/// that propagate every dominating branch condition to the uses of its operands. The
/// jit gets about 10% more Cranelift instructions from such IR (`nesting` 4000:
/// 458 822 -> 508 650) and takes the same time over it.
pub const MINIMAL_PIPELINE: &str = "cgscc(inline,function(sroa,early-cse<memssa>,simplifycfg,\
                                    instsimplify,adce,simplifycfg)),globaldce";

impl Shape {
    /// The `opt` pipeline that replaces `-O2`, if any (`loop_limit`: see
    /// [`loop_limit_from_env`]): [`MINIMAL_PIPELINE`] for the most branches,
    /// [`PIPELINE`] for many loops or branches.
    pub fn light_pipeline(&self, loop_limit: usize) -> Option<&'static str> {
        if self.branches >= MINIMAL_BRANCH_LIMIT {
            Some(MINIMAL_PIPELINE)
        } else if self.loops >= loop_limit || self.branches >= BRANCH_LIMIT {
            Some(PIPELINE)
        } else {
            None
        }
    }
}

/// The `opt -passes=` pipeline for loop-heavy programs: the function passes of
/// `-O2` whose cost grows with the function, not with the depth of its loop nest
/// chain. The inliner inlines the kernel body clones `whole_program` made internal
/// (and drops them), `globaldce` removes what is left unused. GVN runs without
/// memory dependence analysis (loads are left to the memory-SSA early CSE): on
/// build_scale `arrays` at N=1000 the memdep queries were 40% of opt's time (0.64 ->
/// 0.41 s) and removed nothing more, on that shape or on `loops`.
pub const PIPELINE: &str = "cgscc(inline,function(sroa,early-cse<memssa>,simplifycfg,\
                            instcombine<no-verify-fixpoint>,gvn<no-memdep>,adce,simplifycfg)),\
                            globaldce";

/// The largest number of back edges and of conditional branches (`br i1`) of one
/// function in LLVM IR text. Back edges are branches (`label %x` operands) to a block
/// at or before the branching block in text order: in clang's unoptimised output,
/// where blocks follow the source, the number of loops (and backward `goto`s).
pub fn shape(ir: &str) -> Shape {
    let mut best = Shape {
        loops: 0,
        branches: 0,
    };
    let mut in_function = false;
    let mut seen: HashSet<&str> = HashSet::new();
    let mut count = 0;
    let mut branches = 0;
    for line in ir.lines() {
        if !in_function {
            if line.starts_with("define ") && line.trim_end().ends_with('{') {
                in_function = true;
                seen.clear();
                count = 0;
                branches = 0;
            }
            continue;
        }
        if line.starts_with('}') {
            in_function = false;
            best.loops = best.loops.max(count);
            best.branches = best.branches.max(branches);
            continue;
        }
        if line.trim_start().starts_with("br i1 ") {
            branches += 1;
        }
        if let Some(label) = block_label(line) {
            seen.insert(label);
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("label %") {
            rest = &rest[at + "label %".len()..];
            let target = label_name(rest);
            if seen.contains(target) {
                count += 1;
            }
        }
    }
    best
}

/// The name a block label line defines (`for.cond:`, `12:`, `"a b":`), unquoted.
pub(super) fn block_label(line: &str) -> Option<&str> {
    let first = line.chars().next()?;
    if first.is_whitespace() || first == ';' {
        return None;
    }
    if let Some(quoted) = line.strip_prefix('"') {
        let end = quoted.find("\":")?;
        return Some(&quoted[..end]);
    }
    let end = line.find(':')?;
    let name = &line[..end];
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-$".contains(&b))
        .then_some(name)
}

/// The block name at the start of `rest` (what follows `label %`), unquoted.
pub(super) fn label_name(rest: &str) -> &str {
    if let Some(quoted) = rest.strip_prefix('"') {
        return quoted.find('"').map_or(quoted, |end| &quoted[..end]);
    }
    let end = rest
        .find(|c: char| c == ',' || c == ']' || c.is_whitespace())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The `opt` of `clang`'s LLVM: `CRANECL_OPT` when set (empty = none: always
/// `-O2`), else `opt` beside the real clang binary (`/usr/lib/llvm-22/bin`), else
/// `opt-N` beside a `clang-N` link.
pub fn locate_opt(clang: &Path) -> Option<PathBuf> {
    if let Some(value) = std::env::var_os("CRANECL_OPT") {
        let path = PathBuf::from(value);
        return super::clang::is_executable(&path).then_some(path);
    }
    let mut candidates = Vec::new();
    if let Ok(real) = std::fs::canonicalize(clang) {
        if let Some(dir) = real.parent() {
            candidates.push(dir.join("opt"));
        }
    }
    let name = clang.file_name()?.to_str()?;
    if let (Some(version), Some(dir)) = (name.strip_prefix("clang-"), clang.parent()) {
        candidates.push(dir.join(format!("opt-{version}")));
    }
    candidates
        .into_iter()
        .find(|c| super::clang::is_executable(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_follows_loops_and_branches() {
        let p = |loops, branches| Shape { loops, branches }.light_pipeline(LOOP_LIMIT);
        assert_eq!(p(0, 0), None);
        assert_eq!(p(LOOP_LIMIT - 1, BRANCH_LIMIT - 1), None);
        assert_eq!(p(LOOP_LIMIT, 0), Some(PIPELINE));
        assert_eq!(p(0, BRANCH_LIMIT), Some(PIPELINE));
        assert_eq!(p(0, MINIMAL_BRANCH_LIMIT - 1), Some(PIPELINE));
        assert_eq!(p(0, MINIMAL_BRANCH_LIMIT), Some(MINIMAL_PIPELINE));
        assert_eq!(p(LOOP_LIMIT, MINIMAL_BRANCH_LIMIT), Some(MINIMAL_PIPELINE));
        assert_eq!(
            Shape {
                loops: 5,
                branches: 0
            }
            .light_pipeline(0),
            Some(PIPELINE)
        );
    }

    #[test]
    fn counts_loops_of_the_biggest_function() {
        let ir = "define spir_func void @f(i32 %n) {\nentry:\n  br label %for.cond\n\
                  for.cond:                                         ; preds = %for.inc, %entry\n  \
                  br i1 %c, label %for.body, label %for.end\n\
                  for.body:\n  br label %for.inc\n\
                  for.inc:\n  br label %for.cond, !llvm.loop !3\n\
                  for.end:\n  ret void\n}\n\
                  define spir_kernel void @k() {\n\
                  1:\n  br label %2\n\
                  2:\n  br i1 %c, label %2, label %\"3 x\"\n\
                  \"3 x\":\n  switch i32 %v, label %4 [\n    i32 0, label %2\n    i32 1, label %\"3 x\"\n  ]\n\
                  4:\n  br label %1\n}\n";
        // @f: one loop. @k: %2 -> %2, switch -> %2 and -> "3 x", %4 -> %1.
        assert_eq!(shape(ir).loops, 4);
        assert_eq!(shape(ir).branches, 1);
        assert_eq!(
            shape(&ir[..ir.find("define spir_kernel").unwrap()]),
            Shape {
                loops: 1,
                branches: 1
            }
        );
    }

    #[test]
    fn straight_code_has_no_back_edges() {
        let ir = "define void @f() {\nentry:\n  br label %a\na:\n  br i1 %c, label %b, label %c\n\
                  b:\n  br label %c\nc:\n  ret void\n}\n";
        assert_eq!(shape(ir).loops, 0);
        assert_eq!(shape(ir).branches, 1);
    }

    /// The `opt` beside the clang the build uses is found and takes [`PIPELINE`]
    /// (the quick start installs it: Debian's llvm-22), and the loop of a small
    /// function survives it.
    #[test]
    fn opt_beside_clang_runs_the_pipeline() {
        let path = std::env::var_os("PATH");
        let clang = crate::build::clang::locate(None, path.as_deref()).expect("clang");
        let opt = locate_opt(&clang).expect("opt beside clang (apt-get install llvm-22)");
        let ir = "define internal i32 @body(i32 %n) {\nentry:\n  br label %loop\n\
                  loop:\n  %i = phi i32 [ 0, %entry ], [ %next, %loop ]\n  \
                  %next = add i32 %i, 1\n  %c = icmp slt i32 %next, %n\n  \
                  br i1 %c, label %loop, label %exit\nexit:\n  ret i32 %next\n}\n\
                  define i32 @k(i32 %n) {\nentry:\n  %r = call i32 @body(i32 %n)\n  ret i32 %r\n}\n";
        let args: Vec<std::ffi::OsString> = [&format!("-passes={PIPELINE}"), "-S", "-o", "-", "-"]
            .map(Into::into)
            .to_vec();
        let run = crate::build::clang::run(&opt, &args, ir.as_bytes()).expect("running opt");
        assert!(run.success, "{}", run.stderr);
        let out = String::from_utf8_lossy(&run.stdout);
        // @body was inlined into @k and dropped; its loop is still a loop.
        assert!(!out.contains("@body"), "{out}");
        assert_eq!(shape(&out).loops, 1, "{out}");
    }

    #[test]
    fn labels_and_names() {
        assert_eq!(block_label("for.cond:   ; preds = %x"), Some("for.cond"));
        assert_eq!(block_label("12:"), Some("12"));
        assert_eq!(block_label("\"a b\":"), Some("a b"));
        assert_eq!(block_label("  br label %x"), None);
        assert_eq!(block_label("; comment: yes"), None);
        assert_eq!(block_label("@g = global i32 0, align 4 ; x:"), None);
        assert_eq!(label_name("for.cond, !llvm.loop !3"), "for.cond");
        assert_eq!(label_name("\"3 x\"\n"), "3 x");
        assert_eq!(label_name("7"), "7");
    }
}
