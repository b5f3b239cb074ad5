//! The on-disk cache of precompiled headers (opencl-c.h plus the header cranecl
//! ships), which cuts clang's per-compile cost from ~140 ms to ~35 ms.
//!
//! A PCH is only valid for the clang binary and the language options it was built
//! with, so its file name is a hash of the clang binary's identity (canonical path,
//! size, modification time), every language-affecting argument and the header's text.
//! Files are created atomically (temp file + rename), so several processes and
//! threads can share the cache. A missing PCH is built in the background while
//! compiles go on without one; a failed build is remembered and never retried in this
//! process. This module runs clang only to build PCHs.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use crate::sync::Mutex;

use super::clang;

/// The header the driver force-includes: declarations clang's opencl-c.h lacks.
pub const DRIVER_HEADER: &str = include_str!("cranecl.h");

/// Bumped when the way PCHs are built changes, so old files are not picked up.
const CACHE_FORMAT: u32 = 1;

/// A stable 64-bit FNV-1a hash (file names must not change between builds of cranecl).
#[derive(Clone, Copy)]
pub struct Fnv(u64);

impl Fnv {
    /// A hash of nothing yet.
    pub fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    /// Adds `bytes` as one field (fields are separated, so their boundaries count).
    pub fn bytes(mut self, bytes: &[u8]) -> Self {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator so ("ab","c") and ("a","bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        self
    }

    /// The hash value.
    pub fn finish(self) -> u64 {
        self.0
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether a missing PCH is built before the compile that needs it (tests) or in the
/// background while compiles go on without one (the driver).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PchBuild {
    Blocking,
    Background,
}

#[derive(Clone, Debug)]
enum Entry {
    Building,
    Ready(PathBuf),
    Failed,
}

/// One cache directory with its in-process state.
pub struct PchCache {
    dir: PathBuf,
    mode: PchBuild,
    entries: Mutex<HashMap<u64, Entry>>,
    header: Mutex<Option<PathBuf>>,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A file name in `dir` no other process or thread uses.
fn temp_path(dir: &Path, stem: &str) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{stem}.{}.{n}.tmp", std::process::id()))
}

/// Writes `bytes` to `path` atomically (temp file in the same directory + rename).
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = temp_path(dir, "header");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Deletes temp files a killed process left behind (older than an hour, so a PCH
/// another process is writing right now is never touched).
fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with('.') && name.ends_with(".tmp")) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_secs(3600));
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The default cache directory: `CRANECL_CACHE_DIR`, `$XDG_CACHE_HOME/cranecl`,
/// `~/.cache/cranecl`, else a directory under the system temp dir.
pub fn default_cache_dir() -> PathBuf {
    cache_dir_from(|name| std::env::var_os(name))
}

/// [`default_cache_dir`] with the environment given by `var`. The result is always
/// absolute: clang runs with the application's working directory, which may change
/// after the directory is chosen. A relative `CRANECL_CACHE_DIR` is taken relative to
/// the working directory now; a relative `XDG_CACHE_HOME` or `HOME` is ignored, as the
/// XDG Base Directory specification asks (pyopencl's own tests set a relative
/// `XDG_CACHE_HOME` and delete it afterwards).
fn cache_dir_from(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let value = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = value("CRANECL_CACHE_DIR") {
        if let Ok(dir) = std::path::absolute(&dir) {
            return dir;
        }
    }
    if let Some(dir) = value("XDG_CACHE_HOME").filter(|d| d.is_absolute()) {
        return dir.join("cranecl");
    }
    if let Some(home) = value("HOME").filter(|d| d.is_absolute()) {
        return home.join(".cache").join("cranecl");
    }
    std::env::temp_dir().join("cranecl-cache")
}

/// Identity of a clang binary for cache keys: its canonical path, size and mtime.
pub fn clang_identity(clang: &Path) -> String {
    let canonical = std::fs::canonicalize(clang).unwrap_or_else(|_| clang.to_path_buf());
    let (len, mtime) = std::fs::metadata(&canonical)
        .map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            (m.len(), mtime)
        })
        .unwrap_or((0, 0));
    format!("{}:{len}:{mtime}", canonical.display())
}

impl PchCache {
    /// A cache in `dir` (created when first needed); `None` if it cannot be created.
    pub fn new(dir: PathBuf, mode: PchBuild) -> Option<Arc<PchCache>> {
        std::fs::create_dir_all(dir.join("pch")).ok()?;
        std::fs::create_dir_all(dir.join("include")).ok()?;
        remove_stale_temp_files(&dir.join("pch"));
        remove_stale_temp_files(&dir.join("include"));
        Some(Arc::new(PchCache {
            dir,
            mode,
            entries: Mutex::new(HashMap::new()),
            header: Mutex::new(None),
        }))
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Before `fork()`: holds the cache's locks (see `crate::fork`).
    pub(crate) fn hold_for_fork(&'static self, held: &mut Vec<Box<dyn std::any::Any>>) {
        held.push(Box::new(self.header.lock()));
        held.push(Box::new(self.entries.lock()));
    }

    /// The driver header on disk (written once, named after its content hash so a new
    /// version of cranecl never rewrites a file an older PCH depends on).
    pub fn header(&self) -> Option<PathBuf> {
        let mut cached = self.header.lock();
        if let Some(path) = cached.as_ref() {
            return Some(path.clone());
        }
        let hash = Fnv::new().bytes(DRIVER_HEADER.as_bytes()).finish();
        let path = self
            .dir
            .join("include")
            .join(format!("cranecl-{hash:016x}.h"));
        let current = std::fs::read(&path).ok();
        if current.as_deref() != Some(DRIVER_HEADER.as_bytes()) {
            write_atomically(&path, DRIVER_HEADER.as_bytes()).ok()?;
        }
        *cached = Some(path.clone());
        Some(path)
    }

    /// The PCH for `clang` and `lang_args` if it is ready; starts building it when it
    /// is missing (and, in blocking mode, waits for that).
    pub fn get(self: &Arc<Self>, clang: &Path, lang_args: &[String]) -> Option<PathBuf> {
        let header = self.header()?;
        let mut key = Fnv::new()
            .bytes(&CACHE_FORMAT.to_le_bytes())
            .bytes(clang_identity(clang).as_bytes())
            .bytes(DRIVER_HEADER.as_bytes());
        for arg in lang_args {
            key = key.bytes(arg.as_bytes());
        }
        let key = key.finish();
        let path = self.dir.join("pch").join(format!("{key:016x}.pch"));
        {
            let mut entries = self.entries.lock();
            match entries.get(&key) {
                Some(Entry::Ready(p)) => return Some(p.clone()),
                Some(Entry::Building | Entry::Failed) => return None,
                None => {}
            }
            if path.is_file() {
                entries.insert(key, Entry::Ready(path.clone()));
                return Some(path);
            }
            entries.insert(key, Entry::Building);
        }
        let job = {
            let cache = Arc::clone(self);
            let clang = clang.to_path_buf();
            let lang_args = lang_args.to_vec();
            move || cache.build(key, &clang, &lang_args, &header, &path)
        };
        match self.mode {
            PchBuild::Blocking => job(),
            PchBuild::Background => {
                let spawned = std::thread::Builder::new()
                    .name("cranecl-pch".into())
                    .spawn(job);
                if spawned.is_err() {
                    self.entries.lock().insert(key, Entry::Failed);
                }
                None
            }
        }
    }

    /// Forgets a PCH clang refused (e.g. clang was upgraded in place) and deletes it so
    /// the next process rebuilds it.
    pub fn reject(&self, pch: &Path) {
        let mut entries = self.entries.lock();
        for entry in entries.values_mut() {
            if matches!(entry, Entry::Ready(p) if p == pch) {
                *entry = Entry::Failed;
            }
        }
        let _ = std::fs::remove_file(pch);
    }

    fn build(
        &self,
        key: u64,
        clang: &Path,
        lang_args: &[String],
        header: &Path,
        path: &Path,
    ) -> Option<PathBuf> {
        let dir = path.parent().unwrap_or(&self.dir);
        let lock = dir.join(format!("{key:016x}.lock"));
        if !take_lock(&lock) {
            // Another process is building it: look at the disk again next time.
            self.entries.lock().remove(&key);
            return None;
        }
        let tmp = temp_path(dir, &format!("{key:016x}"));
        let mut clang_args: Vec<OsString> = vec![clang.as_os_str().to_owned(), "-cc1".into()];
        clang_args.extend(lang_args.iter().map(OsString::from));
        clang_args.extend(
            ["-finclude-default-header", "-x", "cl", "-emit-pch", "-o"].map(OsString::from),
        );
        clang_args.push(tmp.clone().into_os_string());
        clang_args.push(header.as_os_str().to_owned());
        // The shell finishes the job (rename into place, drop the lock) even when this
        // process exits first: short-lived processes still leave a PCH behind.
        let mut args: Vec<OsString> = vec!["-c".into(), FINISH_SCRIPT.into(), "sh".into()];
        args.extend([tmp.as_os_str(), path.as_os_str(), lock.as_os_str()].map(OsStr::to_owned));
        args.extend(clang_args);
        let built = match clang::run(Path::new("/bin/sh"), &args, &[]) {
            Ok(run) if run.success && path.is_file() => true,
            Ok(run) => {
                eprintln!(
                    "cranecl: building a precompiled header failed ({}); compiling without it:\n{}",
                    run.status, run.stderr
                );
                false
            }
            Err(err) => {
                eprintln!("cranecl: could not run /bin/sh to build a precompiled header: {err}");
                false
            }
        };
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(&lock);
        let mut entries = self.entries.lock();
        if built {
            entries.insert(key, Entry::Ready(path.to_path_buf()));
            Some(path.to_path_buf())
        } else {
            entries.insert(key, Entry::Failed);
            None
        }
    }
}

/// `sh -c` script: `$1` temp file, `$2` final path, `$3` lock file, then the clang
/// command. Moves the PCH into place only when clang succeeded and wrote it.
const FINISH_SCRIPT: &str = r#"tmp=$1 final=$2 lock=$3; shift 3
"$@"; rc=$?
if [ "$rc" -eq 0 ] && [ -s "$tmp" ]; then mv -f -- "$tmp" "$final"; rc=$?; fi
rm -f -- "$tmp" "$lock"
exit "$rc""#;

/// How old a lock file may get before it is taken to be left over from a killed
/// process.
const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(120);

/// Creates `lock` exclusively; a lock older than [`STALE_LOCK`] is taken over.
fn take_lock(lock: &Path) -> bool {
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
            .is_ok()
    };
    if create() {
        return true;
    }
    let stale = std::fs::metadata(lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > STALE_LOCK);
    stale && std::fs::remove_file(lock).is_ok() && create()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_stable_and_separates_fields() {
        assert_eq!(
            Fnv::new().bytes(b"ab").bytes(b"c").finish(),
            Fnv::new().bytes(b"ab").bytes(b"c").finish()
        );
        assert_ne!(
            Fnv::new().bytes(b"ab").bytes(b"c").finish(),
            Fnv::new().bytes(b"a").bytes(b"bc").finish()
        );
    }

    #[test]
    fn cache_dir_is_absolute_and_ignores_relative_xdg_paths() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let from = |pairs| cache_dir_from(env(pairs));
        assert_eq!(
            from(&[("CRANECL_CACHE_DIR", "/c"), ("XDG_CACHE_HOME", "/x")]),
            PathBuf::from("/c")
        );
        let relative = from(&[("CRANECL_CACHE_DIR", "rel/dir")]);
        assert!(relative.is_absolute(), "{relative:?}");
        assert!(relative.ends_with("rel/dir"), "{relative:?}");
        assert_eq!(
            from(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]),
            PathBuf::from("/x/cranecl")
        );
        // relative (invalid per the XDG spec) or empty: the next choice
        assert_eq!(
            from(&[("XDG_CACHE_HOME", "tmpdir_xdg"), ("HOME", "/h")]),
            PathBuf::from("/h/.cache/cranecl")
        );
        assert_eq!(
            from(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")]),
            PathBuf::from("/h/.cache/cranecl")
        );
        assert_eq!(
            from(&[("HOME", "home")]),
            std::env::temp_dir().join("cranecl-cache")
        );
    }

    #[test]
    fn header_written_once() {
        let dir = std::env::temp_dir().join(format!("cranecl-test-header-{}", std::process::id()));
        let cache = PchCache::new(dir.clone(), PchBuild::Blocking).expect("cache dir");
        let path = cache.header().expect("header");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), DRIVER_HEADER);
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        // A second cache on the same directory does not rewrite it.
        let again = PchCache::new(dir.clone(), PchBuild::Blocking)
            .unwrap()
            .header()
            .unwrap();
        assert_eq!(again, path);
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
        let _ = std::fs::remove_dir_all(dir);
    }
}
