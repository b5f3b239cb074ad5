//! printf output of kernel launches: the per-launch record buffer, turning records
//! back into text, and writing that text to the process's standard output.
//!
//! A launch of a kernel that calls printf gets a [`LaunchOutput`]: a buffer of
//! [`PRINTF_BUFFER_SIZE`](crate::platform::PRINTF_BUFFER_SIZE) bytes that the generated code
//! appends records to (lock-free: one atomic add per call and sub-group, see
//! `cranecl_jit::printf`). When the launch has run, the queue formats the records
//! ([`LaunchOutput::text`], conversions in [`format`]) and writes them with one
//! `fwrite` to C's `stdout` before the command's event completes, so the output of
//! one enqueue stays together, enqueues print in completion order, and the text lands
//! in the same stdio buffer as the application's own `printf` output (ordered with
//! it, and following `freopen` of `stdout`).

mod format;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::sync::Mutex;
use cranecl_jit::printf::{PrintfInfo, ScalarKind, SitePiece, Slot, Spec};
use cranecl_jit::PrintfBuffer;

use format::{format_value, Value};

/// Spare record buffers, so that repeated launches do not map and fault in a fresh
/// megabyte each time.
static SPARE: Mutex<Vec<Vec<u64>>> = Mutex::new(Vec::new());

/// Before `fork()`: holds the spare-buffer lock (see `crate::fork`).
pub(crate) fn hold_for_fork(held: &mut Vec<Box<dyn std::any::Any>>) {
    held.push(Box::new(SPARE.lock()));
}

/// How many spare buffers are kept.
const MAX_SPARE: usize = 4;

/// The printf buffer of one launch.
pub struct LaunchOutput {
    /// Boxed: generated code reaches it through the address in `NdRangeInfo`.
    buffer: Box<PrintfBuffer>,
    /// The record bytes `buffer.data` points into.
    storage: Vec<u64>,
}

impl LaunchOutput {
    /// A buffer of `capacity` bytes (rounded down to whole 8-byte words).
    pub fn new(capacity: usize) -> LaunchOutput {
        let words = capacity / 8;
        let mut storage = SPARE
            .lock()
            .pop()
            .filter(|s| s.len() == words)
            .unwrap_or_else(|| vec![0u64; words]);
        let capacity = (words * 8) as u64;
        let buffer = Box::new(PrintfBuffer {
            data: storage.as_mut_ptr().cast(),
            capacity,
            used: AtomicU64::new(0),
            limit: AtomicU64::new(capacity),
        });
        LaunchOutput { buffer, storage }
    }

    /// The value of `NdRangeInfo::printf_buffer` for the launch.
    pub fn address(&self) -> u64 {
        &*self.buffer as *const PrintfBuffer as u64
    }

    /// The record bytes written (only meaningful once the launch has finished).
    fn records(&self) -> &[u8] {
        let end = self
            .buffer
            .used
            .load(Ordering::Acquire)
            .min(self.buffer.limit.load(Ordering::Acquire))
            .min(self.buffer.capacity) as usize;
        // SAFETY: `storage` holds `capacity` initialised bytes (a Vec of u64) and
        // `end <= capacity`; the launch that wrote into it has finished, so nothing
        // writes while this borrow lives.
        unsafe { std::slice::from_raw_parts(self.storage.as_ptr().cast::<u8>(), end) }
    }

    /// Whether some printf call did not fit (its work-items got -1).
    pub fn overflowed(&self) -> bool {
        self.buffer.limit.load(Ordering::Acquire) < self.buffer.capacity
    }

    /// The text of every record, in the order they were written.
    pub fn text(&self, info: &PrintfInfo) -> Vec<u8> {
        let records = self.records();
        let mut out = Vec::new();
        let mut at = 0usize;
        while let Some(head) = records.get(at..at + 4) {
            let index = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
            let Some(site) = info.sites.get(index as usize) else {
                break;
            };
            let Some(record) = records.get(at..at + site.record_size as usize) else {
                break;
            };
            for piece in &site.pieces {
                match piece {
                    SitePiece::Text(t) => out.extend_from_slice(t),
                    SitePiece::Str { spec, text } => format_value(&mut out, spec, Value::Str(text)),
                    SitePiece::Value { spec, slot } => components(&mut out, spec, slot, record),
                    SitePiece::StrPointer { spec, slot } => {
                        let address = scalar(record, slot, 0);
                        let text: &[u8] = match address {
                            Value::Int { bits: 0, .. } => b"(null)",
                            Value::Int { bits, .. } => {
                                info.string_at(bits).unwrap_or(b"(not a constant string)")
                            }
                            _ => b"",
                        };
                        format_value(&mut out, spec, Value::Str(text));
                    }
                }
            }
            at += site.record_size as usize;
        }
        out
    }
}

impl Drop for LaunchOutput {
    fn drop(&mut self) {
        let mut spare = SPARE.lock();
        if spare.len() < MAX_SPARE {
            spare.push(std::mem::take(&mut self.storage));
        }
    }
}

/// Formats every component of a stored value, separated by commas.
fn components(out: &mut Vec<u8>, spec: &Spec, slot: &Slot, record: &[u8]) {
    for c in 0..slot.count {
        if c > 0 {
            out.push(b',');
        }
        format_value(out, spec, scalar(record, slot, c));
    }
}

/// Component `c` of the value in `slot`.
fn scalar<'a>(record: &[u8], slot: &Slot, c: u8) -> Value<'a> {
    let size = slot.kind.bytes() as usize;
    let at = slot.offset as usize + usize::from(c) * size;
    let mut raw = [0u8; 8];
    if let Some(bytes) = record.get(at..at + size) {
        raw[..size].copy_from_slice(bytes);
    }
    let bits = u64::from_le_bytes(raw);
    match slot.kind {
        ScalarKind::Int { .. } => Value::Int {
            bits,
            size: 8 * size as u32,
        },
        ScalarKind::Float { bytes: 2 } => Value::Float(half_to_f64(bits as u16)),
        ScalarKind::Float { bytes: 4 } => Value::Float(f64::from(f32::from_bits(bits as u32))),
        ScalarKind::Float { .. } => Value::Float(f64::from_bits(bits)),
    }
}

/// An IEEE half converted exactly.
fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((h >> 10) & 0x1f);
    let mantissa = f64::from(h & 0x3ff);
    sign * match exponent {
        0 => mantissa * 2f64.powi(-24),
        0x1f if mantissa == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        e => (1024.0 + mantissa) * 2f64.powi(e - 25),
    }
}

extern "C" {
    /// C's standard output stream (glibc and musl export it under this name).
    static mut stdout: *mut libc::FILE;
}

/// Writes `text` to C's `stdout` in one call and flushes it.
pub fn write_stdout(text: &[u8]) {
    if text.is_empty() {
        return;
    }
    // SAFETY: `stdout` is initialised by the C library before any code runs and
    // only read here; fwrite/fflush lock the stream, so concurrent writers do not
    // interleave within one call.
    unsafe {
        let out = stdout;
        libc::fwrite(text.as_ptr().cast(), 1, text.len(), out);
        libc::fflush(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranecl_jit::printf::{build_site, ArgShape, ConstString};

    fn int(bytes: u8) -> ArgShape {
        ArgShape {
            kind: ScalarKind::Int { bytes },
            count: 1,
            is_vector: false,
            is_pointer: false,
        }
    }

    /// Writes a record as generated code does: site index, then each stored value.
    fn push(output: &LaunchOutput, site: u32, size: u32, values: &[(u32, &[u8])]) {
        let at = output
            .buffer
            .used
            .fetch_add(u64::from(size), Ordering::Relaxed) as usize;
        let mut record = vec![0u8; size as usize];
        record[..4].copy_from_slice(&site.to_le_bytes());
        for (offset, bytes) in values {
            record[*offset as usize..][..bytes.len()].copy_from_slice(bytes);
        }
        // SAFETY: the test claimed `at..at + size` inside the buffer's capacity.
        unsafe {
            std::ptr::copy_nonoverlapping(record.as_ptr(), output.buffer.data.add(at), record.len())
        };
    }

    #[test]
    fn records_become_text_in_order() {
        let float2 = ArgShape {
            kind: ScalarKind::Float { bytes: 4 },
            count: 2,
            is_vector: true,
            is_pointer: false,
        };
        let half = ArgShape {
            kind: ScalarKind::Float { bytes: 2 },
            count: 1,
            is_vector: false,
            is_pointer: false,
        };
        let pointer = ArgShape {
            is_pointer: true,
            ..int(8)
        };
        let info = PrintfInfo {
            sites: vec![
                build_site(b"i=%d %s|%5.1v2hlf\n", &[int(4), pointer, float2], |i| {
                    (i == 1).then(|| b"lit".to_vec())
                })
                .unwrap(),
                build_site(
                    b"%hhx %s %s %s %g\n",
                    &[int(4), pointer, pointer, pointer, half],
                    |_| None,
                )
                .unwrap(),
            ],
            strings: vec![ConstString {
                address: 0x5000,
                bytes: b"one\0two\0".to_vec(),
            }],
        };
        let output = LaunchOutput::new(1024);
        let floats: Vec<u8> = [1.25f32, -2.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        push(
            &output,
            0,
            info.sites[0].record_size,
            &[(4, &7i32.to_le_bytes()), (8, &floats)],
        );
        let slots: Vec<u32> = info.sites[1]
            .pieces
            .iter()
            .filter_map(|p| match p {
                SitePiece::Value { slot, .. } | SitePiece::StrPointer { slot, .. } => {
                    Some(slot.offset)
                }
                _ => None,
            })
            .collect();
        push(
            &output,
            1,
            info.sites[1].record_size,
            &[
                (slots[0], &(-128i32).to_le_bytes()),
                (slots[1], &0x5004u64.to_le_bytes()),
                (slots[2], &0u64.to_le_bytes()),
                (slots[3], &0x9000u64.to_le_bytes()),
                (slots[4], &0x3c00u16.to_le_bytes()),
            ],
        );
        assert!(!output.overflowed());
        assert_eq!(
            String::from_utf8(output.text(&info)).unwrap(),
            "i=7 lit|  1.2, -2.0\n80 two (null) (not a constant string) 1\n"
        );
    }

    #[test]
    fn a_failed_claim_ends_the_records() {
        let info = PrintfInfo {
            sites: vec![build_site(b"%d\n", &[int(4)], |_| None).unwrap()],
            strings: vec![],
        };
        let output = LaunchOutput::new(16);
        push(&output, 0, 8, &[(4, &1i32.to_le_bytes())]);
        // A claim of 16 bytes at offset 8 fails: the kernel lowers the limit.
        output.buffer.used.fetch_add(16, Ordering::Relaxed);
        output.buffer.limit.fetch_min(8, Ordering::Relaxed);
        assert!(output.overflowed());
        assert_eq!(output.text(&info), b"1\n");
    }

    #[test]
    fn halves_convert_exactly() {
        assert_eq!(half_to_f64(0x3c00), 1.0);
        assert_eq!(half_to_f64(0xc000), -2.0);
        assert_eq!(half_to_f64(0x7bff), 65504.0);
        assert_eq!(half_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(half_to_f64(0x3555), 0.333251953125);
        assert_eq!(half_to_f64(0x7c00), f64::INFINITY);
        assert!(half_to_f64(0x7e00).is_nan());
    }
}
