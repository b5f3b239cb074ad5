//! The run-time half of `cl_intel_subgroup_2d_block_io` / `SPV_INTEL_2d_block_io`:
//! generated code calls [`cranecl_block2d`] once per sub-group with the uniform
//! operands and the W per-lane private addresses, and this moves the data.
//!
//! The element-to-lane mapping is the SPIR-V extension's ("Mapping Block Data to
//! Invocations"): the block's width is padded to a power of two (the height, for a
//! transposed load); a transform first packs 4 (8-bit) or 2 (16-bit) rows of a column
//! into 32 bits, a transpose swaps rows and columns; then a padded row as wide as the
//! sub-group gives each lane one element, a narrower one shares the lanes with the next
//! rows, a wider one gives each lane consecutive elements. Block `b` of a multi-block
//! operation starts `b * width` elements to the right and its data follows block
//! `b - 1`'s in each lane. Elements outside the surface (byte width, height) read as
//! zero and are not written; rows are moved with one copy for their in-bounds span.

use crate::spirv::{Block2dKind, Block2dShape};

/// The 2D region of memory of one operation (the instruction's uniform operands).
#[derive(Clone, Copy, Debug)]
pub struct Surface {
    pub base: u64,
    /// Row width in bytes.
    pub width: i32,
    /// Number of rows.
    pub height: i32,
    /// Bytes from one row to the next.
    pub pitch: i32,
}

impl Surface {
    /// The rules of both specifications (behaviour is undefined otherwise): width in
    /// [64, 2^24] bytes and a multiple of max(4, element size), height in [1, 2^24],
    /// pitch at least the width and a multiple of 8 (OpenCL C says 16: every pitch
    /// it allows is allowed here), a 64-byte aligned base, and an x coordinate that
    /// is a multiple of 4 for 8-bit and of 2 for 16-bit elements. An operation whose
    /// operands break one sees an empty surface: loads give zeros, stores and
    /// prefetches do nothing.
    pub fn is_valid(&self, esize: u32, x: i32) -> bool {
        let (w, h, p) = (
            i64::from(self.width),
            i64::from(self.height),
            i64::from(self.pitch),
        );
        let x_align = match esize {
            1 => 4,
            2 => 2,
            _ => 1,
        };
        (64..=1 << 24).contains(&w)
            && w % i64::from(esize.max(4)) == 0
            && (1..=1 << 24).contains(&h)
            && p >= w
            && p % 8 == 0
            && self.base.is_multiple_of(64)
            && x.rem_euclid(x_align) == 0
    }

    /// The in-bounds columns `lo..hi` (block-relative) of a block row `row` whose
    /// first element is column `x0`, or None when the row is outside the surface.
    fn span(&self, esize: u32, x0: i64, row: i64, cols: usize) -> Option<(usize, usize)> {
        if row < 0 || row >= i64::from(self.height) {
            return None;
        }
        let row_elems = i64::from(self.width) / i64::from(esize);
        let lo = (-x0).clamp(0, cols as i64);
        let hi = (row_elems - x0).clamp(0, cols as i64);
        (lo < hi).then_some((lo as usize, hi as usize))
    }

    /// Address of element `col` of row `row`.
    fn addr(&self, esize: u32, row: i64, col: i64) -> u64 {
        let off = row * i64::from(self.pitch) + col * i64::from(esize);
        self.base.wrapping_add(off as u64)
    }
}

/// Number of elements one lane holds of a `rows` x `cols_p` (padded, a power of two)
/// matrix distributed over `w` lanes.
pub fn lane_elems(rows: usize, cols_p: usize, w: usize) -> usize {
    if cols_p >= w {
        rows * (cols_p / w)
    } else {
        rows.div_ceil(w / cols_p)
    }
}

/// The (row, column) of the `i`-th element lane `l` holds of a matrix `cols_p` wide.
pub fn element_of(l: usize, i: usize, cols_p: usize, w: usize) -> (usize, usize) {
    if cols_p >= w {
        let k = cols_p / w;
        (i / k, l * k + i % k)
    } else {
        let rows_per_step = w / cols_p;
        (l / cols_p + i * rows_per_step, l % cols_p)
    }
}

/// The matrix the lanes receive for one block: (rows, padded columns, element bytes).
pub fn lane_matrix(shape: &Block2dShape) -> (usize, usize, usize) {
    let (e, bw, bh) = (
        shape.esize as usize,
        shape.width as usize,
        shape.height as usize,
    );
    match shape.kind {
        Block2dKind::LoadTransform => {
            let f = 4 / e.clamp(1, 4);
            (bh.div_ceil(f), bw.next_power_of_two(), 4)
        }
        Block2dKind::LoadTranspose => (bw, bh.next_power_of_two(), e),
        _ => (bh, bw.next_power_of_two(), e),
    }
}

/// Bytes of private data one lane reads or writes.
pub fn lane_bytes(shape: &Block2dShape, w: usize) -> usize {
    let (rows, cols_p, me) = lane_matrix(shape);
    lane_elems(rows, cols_p, w) * me * shape.count as usize
}

/// Where a private byte of a lane comes from (loads) or goes to (stores): the block
/// row and the byte column counted from the operation's x (block `b`'s columns follow
/// block `b - 1`'s), or None for a padding byte (zero when loaded, never stored).
pub type ByteSource = Option<(u32, u32)>;

/// The [`ByteSource`] of every private byte of every lane of a `w`-lane sub-group
/// ([`lane_bytes`] per lane): the helper's mapping as a table, from which generated
/// code moves whole blocks that lie inside the surface without calling it.
pub fn lane_sources(shape: &Block2dShape, w: usize) -> Vec<Vec<ByteSource>> {
    let (e, bw, bh) = (
        shape.esize as usize,
        shape.width as usize,
        shape.height as usize,
    );
    let (rows, cols_p, me) = lane_matrix(shape);
    let n = lane_elems(rows, cols_p, w);
    let per_block = n * me;
    let count = shape.count as usize;
    (0..w)
        .map(|l| {
            let mut v = vec![None; per_block * count];
            for b in 0..count {
                for i in 0..n {
                    let (r, c) = element_of(l, i, cols_p, w);
                    if r >= rows {
                        continue;
                    }
                    for k in 0..me {
                        // (block row, byte column in the block)
                        let src = match shape.kind {
                            Block2dKind::LoadTransform => {
                                let rr = r * (4 / e) + k / e;
                                (rr < bh && c < bw).then_some((rr, c * e + k % e))
                            }
                            Block2dKind::LoadTranspose => {
                                (c < bh && r < bw).then_some((c, r * e + k))
                            }
                            _ => (r < bh && c < bw).then_some((r, c * e + k)),
                        };
                        v[b * per_block + i * me + k] =
                            src.map(|(rr, cb)| (rr as u32, (b * bw * e + cb) as u32));
                    }
                }
            }
            v
        })
        .collect()
}

/// Copies one element of `e` (1, 2, 4 or 8) bytes.
#[inline(always)]
fn copy_elem(e: usize, src: &[u8], dst: &mut [u8]) {
    match e {
        1 => dst[0] = src[0],
        2 => dst[..2].copy_from_slice(&src[..2]),
        4 => dst[..4].copy_from_slice(&src[..4]),
        _ => dst[..e].copy_from_slice(&src[..e]),
    }
}

/// Reads `height` rows of `width` elements whose first is column `x0` into `dst`
/// (row `r` at `r * stride` bytes; `dst` zeroed by the caller): one copy per row of
/// its in-bounds span.
///
/// # Safety
/// The surface's in-bounds bytes must be readable.
unsafe fn read_rows(
    s: &Surface,
    shape: &Block2dShape,
    x0: i64,
    y: i64,
    dst: &mut [u8],
    stride: usize,
) {
    let e = shape.esize as usize;
    for r in 0..shape.height as usize {
        let row = y + r as i64;
        if let Some((lo, hi)) = s.span(shape.esize, x0, row, shape.width as usize) {
            let src = s.addr(shape.esize, row, x0 + lo as i64) as *const u8;
            let d = &mut dst[r * stride + lo * e..r * stride + hi * e];
            // SAFETY: the span is inside the surface, which the caller vouches for.
            unsafe { std::ptr::copy_nonoverlapping(src, d.as_mut_ptr(), d.len()) };
        }
    }
}

/// Bytes of the stack buffers; larger operations (sub-groups wider than 16 with
/// narrow blocks) use the heap.
const STACK: usize = 4096;

/// A zeroed scratch buffer of `n` bytes: `stack` when it fits.
fn scratch<'a>(stack: &'a mut [u8; STACK], heap: &'a mut Vec<u8>, n: usize) -> &'a mut [u8] {
    if n <= STACK {
        let b = &mut stack[..n];
        b.fill(0);
        b
    } else {
        *heap = vec![0; n];
        heap
    }
}

/// Reads one block as the matrix the lanes receive (see [`lane_matrix`]) into `m`
/// (zeroed, `rows * cols_p * me` bytes), through `raw` (`height * width * esize`
/// bytes) for the transform and the transpose.
///
/// # Safety
/// The surface's in-bounds bytes must be readable.
unsafe fn read_lane_matrix(
    s: &Surface,
    shape: &Block2dShape,
    x0: i64,
    y: i64,
    m: &mut [u8],
    raw: &mut [u8],
) {
    let (e, bw, bh) = (
        shape.esize as usize,
        shape.width as usize,
        shape.height as usize,
    );
    let (rows, cols_p, me) = lane_matrix(shape);
    if shape.kind == Block2dKind::Load {
        // The rows go straight to their place: the padding columns stay zero.
        // SAFETY: forwarded from the caller.
        unsafe { read_rows(s, shape, x0, y, m, cols_p * e) };
        return;
    }
    raw.fill(0);
    // SAFETY: forwarded from the caller.
    unsafe { read_rows(s, shape, x0, y, raw, bw * e) };
    let at = |r: usize, c: usize| (r * bw + c) * e;
    if shape.kind == Block2dKind::LoadTransform {
        let f = 4 / e;
        for sr in 0..rows {
            for k in 0..f {
                let r = sr * f + k;
                if r >= bh {
                    break;
                }
                for c in 0..bw {
                    let o = (sr * cols_p + c) * me + k * e;
                    copy_elem(e, &raw[at(r, c)..], &mut m[o..]);
                }
            }
        }
    } else {
        for r in 0..rows {
            for c in 0..bh {
                copy_elem(e, &raw[at(c, r)..], &mut m[(r * cols_p + c) * me..]);
            }
        }
    }
}

/// One 2D block operation of a sub-group of `w` lanes.
///
/// # Safety
/// `lanes[l]` of every active lane (bit `l` of `mask`) must address
/// [`lane_bytes`] bytes of that lane's private memory; the surface's in-bounds bytes
/// must be readable (loads) or writable (stores).
pub unsafe fn run(shape: &Block2dShape, s: &Surface, x: i32, y: i32, lanes: &[u64], mask: u64) {
    let w = lanes.len();
    let valid = s.is_valid(shape.esize, x);
    let active = |l: usize| mask >> l & 1 != 0;
    let (rows, cols_p, me) = lane_matrix(shape);
    let per_lane_block = lane_elems(rows, cols_p, w) * me;
    let per_lane = per_lane_block * shape.count as usize;
    let (x, y) = (i64::from(x), i64::from(y));
    match shape.kind {
        Block2dKind::Prefetch => {}
        Block2dKind::Load | Block2dKind::LoadTransform | Block2dKind::LoadTranspose => {
            let (mut out_s, mut out_h) = ([0u8; STACK], Vec::new());
            let out = scratch(&mut out_s, &mut out_h, w * per_lane);
            if valid {
                let (mut m_s, mut m_h) = ([0u8; STACK], Vec::new());
                let (mut r_s, mut r_h) = ([0u8; STACK], Vec::new());
                let raw_len = (shape.width * shape.height * shape.esize) as usize;
                let raw = scratch(&mut r_s, &mut r_h, raw_len);
                for b in 0..shape.count as usize {
                    let x0 = x + (b * shape.width as usize) as i64;
                    let m = scratch(&mut m_s, &mut m_h, rows * cols_p * me);
                    // SAFETY: forwarded from the caller.
                    unsafe { read_lane_matrix(s, shape, x0, y, m, raw) };
                    let n = per_lane_block / me;
                    if cols_p == w {
                        // Lane l holds column l of every row.
                        for (l, lane) in out.chunks_exact_mut(per_lane).enumerate() {
                            let lane = &mut lane[b * per_lane_block..];
                            for i in 0..n {
                                copy_elem(me, &m[(i * cols_p + l) * me..], &mut lane[i * me..]);
                            }
                        }
                    } else {
                        for (l, lane) in out.chunks_exact_mut(per_lane).enumerate() {
                            let lane = &mut lane[b * per_lane_block..];
                            for i in 0..n {
                                let (r, c) = element_of(l, i, cols_p, w);
                                if r < rows {
                                    copy_elem(me, &m[(r * cols_p + c) * me..], &mut lane[i * me..]);
                                }
                            }
                        }
                    }
                }
            }
            for (l, &dst) in lanes.iter().enumerate() {
                if active(l) {
                    let data = &out[l * per_lane..(l + 1) * per_lane];
                    // SAFETY: the caller vouches for the lane's private bytes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, per_lane)
                    };
                }
            }
        }
        Block2dKind::Store => {
            if !valid {
                return;
            }
            let (e, bw, bh) = (
                shape.esize as usize,
                shape.width as usize,
                shape.height as usize,
            );
            // The block as the lanes hold it, and which elements an active lane gave
            // (1 in `given`).
            let (mut m_s, mut m_h) = ([0u8; STACK], Vec::new());
            let m = scratch(&mut m_s, &mut m_h, bh * bw * e);
            let (mut g_s, mut g_h) = ([0u8; STACK], Vec::new());
            let given = scratch(&mut g_s, &mut g_h, bh * bw);
            let (mut l_s, mut l_h) = ([0u8; STACK], Vec::new());
            let lane = scratch(&mut l_s, &mut l_h, per_lane);
            for (l, &src) in lanes.iter().enumerate() {
                if !active(l) {
                    continue;
                }
                // SAFETY: the caller vouches for the lane's private bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(src as *const u8, lane.as_mut_ptr(), per_lane)
                };
                for i in 0..per_lane / e {
                    let (r, c) = element_of(l, i, cols_p, w);
                    if r < bh && c < bw {
                        m[(r * bw + c) * e..(r * bw + c + 1) * e]
                            .copy_from_slice(&lane[i * e..(i + 1) * e]);
                        given[r * bw + c] = 1;
                    }
                }
            }
            for r in 0..bh {
                let row = y + r as i64;
                let Some((lo, hi)) = s.span(shape.esize, x, row, bw) else {
                    continue;
                };
                let g = &given[r * bw + lo..r * bw + hi];
                let dst = s.addr(shape.esize, row, x + lo as i64) as *mut u8;
                if g.iter().all(|&v| v != 0) {
                    let src = &m[(r * bw + lo) * e..(r * bw + hi) * e];
                    // SAFETY: the span is inside the surface (caller's contract).
                    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
                } else {
                    for (k, _) in g.iter().enumerate().filter(|(_, &v)| v != 0) {
                        let src = &m[(r * bw + lo + k) * e..(r * bw + lo + k + 1) * e];
                        // SAFETY: as above, one element of the span.
                        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.add(k * e), e) };
                    }
                }
            }
        }
    }
}

/// The entry point generated code calls: `lanes` holds `w` private addresses.
///
/// # Safety
/// As [`run`]; `lanes` points to `w` addresses; `shape` is a packed, supported
/// [`Block2dShape`].
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cranecl_block2d(
    shape: u64,
    base: u64,
    width: i32,
    height: i32,
    pitch: i32,
    x: i32,
    y: i32,
    lanes: *const u64,
    mask: u64,
    w: u32,
) {
    let Some(shape) = Block2dShape::unpack(shape) else {
        return;
    };
    // SAFETY: generated code passes W addresses in a stack array.
    let lanes = unsafe { std::slice::from_raw_parts(lanes, w as usize) };
    let s = Surface {
        base,
        width,
        height,
        pitch,
    };
    // SAFETY: forwarded (see the function's contract).
    unsafe { run(&shape, &s, x, y, lanes, mask) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples_of_the_mapping() {
        // SPV_INTEL_2d_block_io examples with a sub-group of 4.
        // 2: two columns, four rows: lane 2 holds (1,0) and (3,0).
        assert_eq!(element_of(2, 0, 2, 4), (1, 0));
        assert_eq!(element_of(2, 1, 2, 4), (3, 0));
        // 3: eight columns: lane 1 holds (0,2), (0,3), (1,2), (1,3).
        assert_eq!(
            (0..4).map(|i| element_of(1, i, 8, 4)).collect::<Vec<_>>(),
            [(0, 2), (0, 3), (1, 2), (1, 3)]
        );
        assert_eq!(lane_elems(1, 8, 16), 1);
        assert_eq!(lane_elems(4, 8, 16), 2);
        assert_eq!(lane_elems(4, 32, 16), 8);
    }

    #[test]
    fn lane_bytes_match_the_opencl_c_table() {
        let s = |kind, esize, width, height, count| Block2dShape {
            kind,
            esize,
            width,
            height,
            count,
        };
        use Block2dKind::*;
        // "reads 64 ushorts", "reads one uint", "reads two uints", "reads 128 uchars".
        assert_eq!(lane_bytes(&s(Load, 1, 32, 32, 2), 16), 128);
        assert_eq!(lane_bytes(&s(Load, 4, 8, 1, 1), 16), 4);
        assert_eq!(lane_bytes(&s(Load, 4, 8, 2, 2), 16), 8);
        assert_eq!(lane_bytes(&s(Load, 1, 16, 32, 4), 16), 128);
        assert_eq!(lane_bytes(&s(LoadTransform, 1, 16, 32, 4), 16), 128);
        assert_eq!(lane_bytes(&s(LoadTransform, 2, 16, 16, 1), 16), 32);
        assert_eq!(lane_bytes(&s(LoadTranspose, 4, 8, 32, 1), 16), 64);
        assert_eq!(lane_bytes(&s(Store, 1, 32, 8, 1), 16), 16);
    }

    /// Every shape of the tables at several sub-group sizes: the table of
    /// [`lane_sources`] agrees with what the helper reads and writes.
    #[test]
    fn lane_sources_match_the_helper() {
        use Block2dKind::*;
        let mut shapes = Vec::new();
        for kind in [Load, LoadTransform, LoadTranspose, Store] {
            for esize in [1, 2, 4] {
                for width in [8, 16, 32] {
                    for height in [1, 2, 4, 8, 16, 32] {
                        for count in [1, 2, 4] {
                            let s = Block2dShape {
                                kind,
                                esize,
                                width,
                                height,
                                count,
                            };
                            if s.is_supported() {
                                shapes.push(s);
                            }
                        }
                    }
                }
            }
        }
        let (width, height, pitch) = (256usize, 40usize, 320usize);
        // A 64-aligned surface with distinct bytes, in a larger buffer.
        let mut buf = vec![0u8; pitch * height + 64];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i * 7 + i / 251) as u8;
        }
        for shape in &shapes {
            for w in [4usize, 8, 16, 32] {
                let src = lane_sources(shape, w);
                let n = lane_bytes(shape, w);
                let (x, y) = (4i32, 3i32);
                // (A store's check replaces `buf` with a copy: align each time.)
                let off = buf.as_ptr().align_offset(64);
                let base = buf.as_ptr() as u64 + off as u64;
                let s = Surface {
                    base,
                    width: width as i32,
                    height: height as i32,
                    pitch: pitch as i32,
                };
                let at = |r: u32, cb: u32| {
                    off + (y as usize + r as usize) * pitch
                        + x as usize * shape.esize as usize
                        + cb as usize
                };
                let mut lanes_mem = vec![vec![0xAAu8; n]; w];
                if shape.kind == Store {
                    for (l, lane) in lanes_mem.iter_mut().enumerate() {
                        for (i, b) in lane.iter_mut().enumerate() {
                            *b = (l * 31 + i * 3 + 1) as u8;
                        }
                    }
                }
                let lanes: Vec<u64> = lanes_mem.iter().map(|v| v.as_ptr() as u64).collect();
                let before = buf.clone();
                // SAFETY: the block lies inside `buf`; each lane has n bytes.
                unsafe { run(shape, &s, x, y, &lanes, u64::MAX >> (64 - w)) };
                if shape.kind == Store {
                    let mut want = before.clone();
                    for (l, lane) in src.iter().enumerate() {
                        for (i, b) in lane.iter().enumerate() {
                            if let Some((r, cb)) = b {
                                want[at(*r, *cb)] = lanes_mem[l][i];
                            }
                        }
                    }
                    if let Some(i) = (0..buf.len()).find(|&i| buf[i] != want[i]) {
                        panic!("{shape:?} w={w}: byte {i}: {} != {}", buf[i], want[i]);
                    }
                    buf = before;
                } else {
                    for (l, lane) in src.iter().enumerate() {
                        assert_eq!(lane.len(), n, "{shape:?} w={w}");
                        for (i, b) in lane.iter().enumerate() {
                            let want = b.map_or(0, |(r, cb)| before[at(r, cb)]);
                            assert_eq!(lanes_mem[l][i], want, "{shape:?} w={w} lane {l} byte {i}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn surface_rules() {
        let s = Surface {
            base: 128,
            width: 64,
            height: 4,
            pitch: 64,
        };
        assert!(s.is_valid(1, 4));
        assert!(s.is_valid(1, -4));
        assert!(!s.is_valid(1, 2));
        assert!(s.is_valid(2, 2));
        assert!(!Surface { width: 60, ..s }.is_valid(4, 0));
        assert!(!Surface { pitch: 60, ..s }.is_valid(4, 0));
        assert!(!Surface { pitch: 68, ..s }.is_valid(4, 0));
        assert!(!Surface { base: 96, ..s }.is_valid(4, 0));
        assert!(!Surface { height: 0, ..s }.is_valid(4, 0));
        assert_eq!(s.span(4, -2, 0, 8), Some((2, 8)));
        assert_eq!(s.span(4, 12, 3, 8), Some((0, 4)));
        assert_eq!(s.span(4, 16, 3, 8), None);
        assert_eq!(s.span(4, 0, 4, 8), None);
    }
}
