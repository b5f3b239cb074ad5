//! `perf` symbol maps for JIT-compiled kernels: with `CRANECL_PERF_MAP=1` every
//! finalised kernel gets a line `START SIZE name` in `/tmp/perf-<pid>.map`, the file
//! `perf report` reads to name samples in anonymous executable memory. Without it a
//! profile shows kernel time only as unnamed `[unknown]` addresses.

use std::io::Write;

/// Whether maps are written (read once per JIT; the variable is meant for a profiling run).
pub fn enabled() -> bool {
    std::env::var_os("CRANECL_PERF_MAP").is_some_and(|v| v != "0" && !v.is_empty())
}

/// One kernel's code range in the perf map format, name sanitised to one line.
fn line(start: *const u8, size: usize, name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    format!("{:x} {:x} cranecl:{name}\n", start as usize, size)
}

/// Appends the entries to `/tmp/perf-<pid>.map`. Each program's lines go out in one
/// `write` on an `O_APPEND` file, so programs built on several threads do not interleave.
/// Failure to write only costs symbol names, so it is reported on stderr, not returned.
pub fn append(entries: &[(*const u8, usize, &str)]) {
    if entries.is_empty() {
        return;
    }
    let text: String = entries.iter().map(|&(p, s, n)| line(p, s, n)).collect();
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let res = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = res {
        eprintln!("cranecl: CRANECL_PERF_MAP: cannot write {path}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_format_is_perfs() {
        let l = line(0x7f00_1000 as *const u8, 0x120, "vadd\nx");
        assert_eq!(l, "7f001000 120 cranecl:vadd_x\n");
    }

    #[test]
    fn append_writes_this_processes_map() {
        let path = format!("/tmp/perf-{}.map", std::process::id());
        let _ = std::fs::remove_file(&path);
        append(&[
            (0x1000 as *const u8, 16, "k1"),
            (0x2000 as *const u8, 32, "k2"),
        ]);
        let text = std::fs::read_to_string(&path).expect("map written");
        assert_eq!(text, "1000 10 cranecl:k1\n2000 20 cranecl:k2\n");
        let _ = std::fs::remove_file(&path);
    }
}
