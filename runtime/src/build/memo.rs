//! An in-process memo of recent clang results, so rebuilding the same source with
//! the same options (pyopencl rebuilds, `clCompileProgram` then `clBuildProgram`,
//! test suites) skips clang entirely.
//!
//! Only successes are kept, and only for sources whose result cannot depend on
//! anything but the key: a source that mentions `include` (files on disk may have
//! changed) or the time macros is never memoised. Bounded by entry count and bytes;
//! the oldest entries go first. Must not hold its lock while clang runs.

use std::collections::VecDeque;

use crate::sync::Mutex;

use super::pch::Fnv;
use super::ClangOutput;

/// Entries kept at most.
const MAX_ENTRIES: usize = 64;
/// SPIR-V bytes kept at most.
const MAX_BYTES: usize = 64 << 20;

struct Memo {
    entries: VecDeque<(u64, ClangOutput)>,
    bytes: usize,
}

static MEMO: Mutex<Memo> = Mutex::new(Memo {
    entries: VecDeque::new(),
    bytes: 0,
});

/// Whether clang's output for `source` depends only on the source, the options and
/// the embedded headers.
/// Before `fork()`: holds the memo's lock (see `crate::fork`).
pub(crate) fn hold_for_fork(held: &mut Vec<Box<dyn std::any::Any>>) {
    held.push(Box::new(MEMO.lock()));
}

pub fn cacheable(source: &str) -> bool {
    ![
        "include",
        "__TIME__",
        "__DATE__",
        "__TIMESTAMP__",
        "__FILE__",
    ]
    .iter()
    .any(|word| source.contains(word))
}

/// The memo key of one compile.
pub fn key(clang_identity: &str, args: &[String], source: &str, headers: &[(&str, &str)]) -> u64 {
    let mut h = Fnv::new()
        .bytes(clang_identity.as_bytes())
        .bytes(source.as_bytes());
    for arg in args {
        h = h.bytes(arg.as_bytes());
    }
    for (name, text) in headers {
        h = h.bytes(name.as_bytes()).bytes(text.as_bytes());
    }
    h.finish()
}

/// Forgets every remembered output (clUnloadPlatformCompiler).
pub fn clear() {
    let mut memo = MEMO.lock();
    memo.entries.clear();
    memo.bytes = 0;
}

/// The remembered output for `key`.
pub fn get(key: u64) -> Option<ClangOutput> {
    let memo = MEMO.lock();
    memo.entries
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, out)| out.clone())
}

/// Remembers `output` under `key`.
pub fn put(key: u64, output: &ClangOutput) {
    let size = output.spirv.len() * 4 + output.log.len();
    if size > MAX_BYTES / 4 {
        return;
    }
    let mut memo = MEMO.lock();
    if memo.entries.iter().any(|(k, _)| *k == key) {
        return;
    }
    while memo.entries.len() >= MAX_ENTRIES || memo.bytes + size > MAX_BYTES {
        let Some((_, old)) = memo.entries.pop_front() else {
            break;
        };
        memo.bytes -= old.spirv.len() * 4 + old.log.len();
    }
    memo.bytes += size;
    memo.entries.push_back((key, output.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_and_evicts() {
        let out = |n: u32| ClangOutput {
            spirv: vec![n; 8],
            log: String::new(),
        };
        let base = 0xdead_0000_0000_0000u64;
        put(base, &out(1));
        assert_eq!(get(base).map(|o| o.spirv[0]), Some(1));
        for i in 1..=MAX_ENTRIES as u64 {
            put(base + i, &out(2));
        }
        assert!(get(base).is_none(), "the oldest entry is evicted");
        assert!(get(base + MAX_ENTRIES as u64).is_some());
    }

    #[test]
    fn sources_that_read_files_or_time_are_not_cacheable() {
        assert!(cacheable("kernel void k() {}"));
        assert!(!cacheable("#include \"x.h\"\nkernel void k() {}"));
        assert!(!cacheable("# include <x.h>"));
        assert!(!cacheable("constant char t[] = __TIME__;"));
    }

    #[test]
    fn key_covers_every_input() {
        let k = key("clang", &["-DA".into()], "src", &[]);
        assert_ne!(k, key("clang2", &["-DA".into()], "src", &[]));
        assert_ne!(k, key("clang", &["-DB".into()], "src", &[]));
        assert_ne!(k, key("clang", &["-DA".into()], "src2", &[]));
        assert_ne!(k, key("clang", &["-DA".into()], "src", &[("h", "")]));
    }
}
