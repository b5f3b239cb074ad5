//! The inline fast path of 2D block loads and stores: a block that lies wholly inside
//! a valid surface, moved by all lanes of a sub-group into (or out of) private arrays
//! laid out `base + lane * stride`, needs no run-time helper. One scalar test per
//! operation (the surface rules, the block's bounds, a full mask) picks this path or
//! the helper call (edge blocks: zero fill, dropped stores).
//!
//! The data movement comes from [`crate::block2d::lane_sources`] (the helper's own
//! mapping as a table): plain loads and stores, where each lane holds `c`-byte chunks
//! of the rows, move 16-byte row vectors and transpose `16/c` x `16/c` tiles of chunks
//! in registers (interleave shuffles); a transform first interleaves the pieces of 2
//! or 4 rows into each chunk row. Other shapes (transposed loads, transforms whose
//! pieces are not contiguous at some sub-group sizes) copy runs of contiguous bytes,
//! at most 16 at a time.

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};

use super::value::little;
use super::Tr;
use crate::block2d::{lane_bytes, lane_elems, lane_matrix, lane_sources, ByteSource};
use crate::spirv::{Block2dKind, Block2dShape};

/// More moves than this and the operation keeps the helper (code size).
const MAX_MOVES: usize = 1024;

/// One tile: lanes `l0 .. l0 + n` and `m` (of `n`) chunk rows from private offset
/// `priv_off`; `src[s * f + p]` is where piece `p` (of `f`) of chunk row `s` lies in
/// the block (a transform interleaves `f` rows' pieces).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Tile {
    pub l0: u32,
    pub priv_off: u32,
    pub m: u32,
    pub src: Vec<ByteSource>,
}

/// A contiguous copy of `len` (1, 2, 4, 8 or 16) bytes at `priv_off` of lane `lane`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Run {
    pub lane: u32,
    pub priv_off: u32,
    pub len: u32,
    pub src: ByteSource,
}

/// How an operation moves its data inline.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Plan {
    /// Tiles of chunks of `c` bytes (`16 / c` lanes by `16 / c` chunk rows), each
    /// chunk row made of `f` interleaved pieces.
    Tiles {
        c: u32,
        f: u32,
        tiles: Vec<Tile>,
    },
    Runs(Vec<Run>),
}

/// The inline plan of `shape` for `w` lanes, or None when the helper should do it
/// (prefetches, or too much code).
pub(super) fn plan(shape: &Block2dShape, w: usize) -> Option<Plan> {
    if shape.kind == Block2dKind::Prefetch {
        return None;
    }
    let src = lane_sources(shape, w);
    if let Some(p) = tiles(shape, w, &src) {
        return Some(p);
    }
    let runs = runs(shape, &src);
    (runs.len() <= MAX_MOVES).then_some(Plan::Runs(runs))
}

/// The tiled plan of a plain load or store (or a transform, whose chunk rows
/// interleave `f` block rows), when every piece of a tile's chunk rows is contiguous
/// in one block row (or padding).
fn tiles(shape: &Block2dShape, w: usize, src: &[Vec<ByteSource>]) -> Option<Plan> {
    let f = match shape.kind {
        Block2dKind::Load | Block2dKind::Store => 1,
        Block2dKind::LoadTransform => 4 / shape.esize as usize,
        _ => return None,
    };
    let (rows, cols_p, me) = lane_matrix(shape);
    let c = if cols_p >= w { cols_p / w * me } else { me };
    if !matches!(c, 1 | 2 | 4 | 8) {
        return None;
    }
    let n = 16 / c;
    if !w.is_multiple_of(n) || !c.is_multiple_of(f) {
        return None;
    }
    let u = c / f;
    let pb = lane_elems(rows, cols_p, w) * me;
    let chunk_rows = pb / c;
    let mut out = Vec::new();
    for b in 0..shape.count as usize {
        for i0 in (0..chunk_rows).step_by(n) {
            let m = n.min(chunk_rows - i0);
            if !m.is_power_of_two() {
                return None;
            }
            for l0 in (0..w).step_by(n) {
                let mut tsrc = Vec::with_capacity(n * f);
                for s in 0..n {
                    for p in 0..f {
                        if s >= m {
                            tsrc.push(None);
                            continue;
                        }
                        let o = b * pb + (i0 + s) * c + p * u;
                        let first = src[l0][o];
                        for t in 0..n {
                            for k in 0..u {
                                let want = first.map(|(r, cb)| (r, cb + (t * u + k) as u32));
                                if src[l0 + t][o + k] != want {
                                    return None;
                                }
                            }
                        }
                        tsrc.push(first);
                    }
                }
                out.push(Tile {
                    l0: l0 as u32,
                    priv_off: (b * pb + i0 * c) as u32,
                    m: m as u32,
                    src: tsrc,
                });
            }
        }
    }
    Some(Plan::Tiles {
        c: c as u32,
        f: f as u32,
        tiles: out,
    })
}

/// Runs of private bytes that are contiguous in one block row (or all padding), cut
/// into power-of-two pieces of at most 16 bytes. A store leaves padding out.
fn runs(shape: &Block2dShape, src: &[Vec<ByteSource>]) -> Vec<Run> {
    let mut out = Vec::new();
    for (l, lane) in src.iter().enumerate() {
        let mut o = 0;
        while o < lane.len() {
            let first = lane[o];
            let mut len = 1;
            while o + len < lane.len() && lane[o + len] == first.map(|(r, cb)| (r, cb + len as u32))
            {
                len += 1;
            }
            let mut done = 0;
            while done < len {
                let piece = 1usize << (len - done).min(16).ilog2();
                if first.is_some() || shape.kind != Block2dKind::Store {
                    out.push(Run {
                        lane: l as u32,
                        priv_off: (o + done) as u32,
                        len: piece as u32,
                        src: first.map(|(r, cb)| (r, cb + done as u32)),
                    });
                }
                done += piece;
            }
            o += len;
        }
    }
    out
}

/// The byte mask of a shuffle that interleaves the low (or high) halves of two
/// vectors in units of `c` bytes.
pub(super) fn interleave_mask(c: usize, hi: bool) -> [u8; 16] {
    let base = if hi { 8 } else { 0 };
    let mut m = [0u8; 16];
    for t in 0..8 / c {
        for k in 0..c {
            m[2 * t * c + k] = (base + t * c + k) as u8;
            m[2 * t * c + c + k] = (16 + base + t * c + k) as u8;
        }
    }
    m
}

/// The type of a scalar or vector of `len` bytes.
fn piece_type(len: u32) -> ir::Type {
    match len {
        1 => types::I8,
        2 => types::I16,
        4 => types::I32,
        8 => types::I64,
        _ => types::I8X16,
    }
}

/// The operands of one inline operation.
pub(super) struct Operands {
    pub base: Value,
    /// width, height, pitch, x, y (i32).
    pub ints: Vec<Value>,
    /// Lane 0's private address and the stride between lanes.
    pub private: Value,
    pub stride: i64,
}

impl Tr<'_, '_> {
    /// Whether the inline path applies to a private pointer of stride `stride`: lanes'
    /// destinations do not overlap and every offset fits an i32.
    pub(super) fn block2d_stride_ok(&self, shape: &Block2dShape, stride: i64) -> bool {
        let n = lane_bytes(shape, self.w as usize) as i64;
        stride >= n && stride * i64::from(self.w) + n <= i64::from(i32::MAX)
    }

    /// i8: the surface follows the spec's rules and the whole operation lies inside
    /// it (the helper's `Surface::is_valid` and no clipping).
    pub(super) fn block2d_inside(&mut self, shape: &Block2dShape, ops: &Operands) -> Value {
        let e = i64::from(shape.esize);
        let s = |t: &mut Self, v: Value| t.b.ins().sextend(types::I64, v);
        let (w, h, p) = (
            s(self, ops.ints[0]),
            s(self, ops.ints[1]),
            s(self, ops.ints[2]),
        );
        let (x, y) = (s(self, ops.ints[3]), s(self, ops.ints[4]));
        let mut conds = Vec::new();
        let t = self.b.ins().iadd_imm_s(w, -64);
        conds.push(
            self.b
                .ins()
                .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, t, (1 << 24) - 64),
        );
        let t = self.b.ins().band_imm_s(w, e.max(4) - 1);
        conds.push(self.b.ins().icmp_imm_s(IntCC::Equal, t, 0));
        let t = self.b.ins().iadd_imm_s(h, -1);
        conds.push(
            self.b
                .ins()
                .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, t, (1 << 24) - 1),
        );
        conds.push(self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, p, w));
        let t = self.b.ins().band_imm_s(p, 7);
        conds.push(self.b.ins().icmp_imm_s(IntCC::Equal, t, 0));
        let t = self.b.ins().band_imm_s(ops.base, 63);
        conds.push(self.b.ins().icmp_imm_s(IntCC::Equal, t, 0));
        let x_align = match e {
            1 => 4,
            2 => 2,
            _ => 1,
        };
        if x_align > 1 {
            let t = self.b.ins().band_imm_s(x, x_align - 1);
            conds.push(self.b.ins().icmp_imm_s(IntCC::Equal, t, 0));
        }
        conds.push(
            self.b
                .ins()
                .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, x, 0),
        );
        conds.push(
            self.b
                .ins()
                .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, y, 0),
        );
        let xb = self.b.ins().imul_imm_s(x, e);
        let end = self
            .b
            .ins()
            .iadd_imm_s(xb, i64::from(shape.count * shape.width) * e);
        conds.push(self.b.ins().icmp(IntCC::SignedLessThanOrEqual, end, w));
        let yend = self.b.ins().iadd_imm_s(y, i64::from(shape.height));
        conds.push(self.b.ins().icmp(IntCC::SignedLessThanOrEqual, yend, h));
        let mut acc = conds[0];
        for c in &conds[1..] {
            acc = self.b.ins().band(acc, *c);
        }
        acc
    }

    /// The inline operation (only for blocks [`Self::block2d_inside`] accepts).
    pub(super) fn block2d_inline(&mut self, shape: &Block2dShape, plan: &Plan, ops: &Operands) {
        let e = i64::from(shape.esize);
        // Row r of the block starts at row0 + r * pitch.
        let (p, x, y) = (
            self.b.ins().sextend(types::I64, ops.ints[2]),
            self.b.ins().sextend(types::I64, ops.ints[3]),
            self.b.ins().sextend(types::I64, ops.ints[4]),
        );
        let yp = self.b.ins().imul(y, p);
        let xb = self.b.ins().imul_imm_s(x, e);
        let off = self.b.ins().iadd(yp, xb);
        let row0 = self.b.ins().iadd(ops.base, off);
        let mut rows: Vec<Option<Value>> = vec![None; shape.height as usize];
        let mut row = |t: &mut Self, r: u32| -> Value {
            let r = r as usize;
            if let Some(v) = rows[r] {
                return v;
            }
            let v = if r == 0 {
                row0
            } else {
                let d = t.b.ins().imul_imm_s(p, r as i64);
                t.b.ins().iadd(row0, d)
            };
            rows[r] = Some(v);
            v
        };
        let surf = ir::MemFlagsData::new().with_notrap();
        let prv = ir::MemFlagsData::new().with_notrap();
        let lane_off = |lane: u32, o: u32| (i64::from(lane) * ops.stride + i64::from(o)) as i32;
        let store = shape.kind == Block2dKind::Store;
        match plan {
            Plan::Runs(runs) => {
                for r in runs {
                    let ty = piece_type(r.len);
                    let po = lane_off(r.lane, r.priv_off);
                    match (store, r.src) {
                        (false, Some((br, cb))) => {
                            let a = row(self, br);
                            let v = self.b.ins().load(ty, surf, a, cb as i32);
                            self.b.ins().store(prv, v, ops.private, po);
                        }
                        (false, None) => {
                            let z = if r.len == 16 {
                                self.vconst_bytes(ty, vec![0; 16])
                            } else {
                                self.b.ins().iconst(ty, 0)
                            };
                            self.b.ins().store(prv, z, ops.private, po);
                        }
                        (true, Some((br, cb))) => {
                            let v = self.b.ins().load(ty, prv, ops.private, po);
                            let a = row(self, br);
                            self.b.ins().store(surf, v, a, cb as i32);
                        }
                        (true, None) => {}
                    }
                }
            }
            Plan::Tiles { c, f, tiles } => {
                let (c, f) = (*c as usize, *f as usize);
                let n = 16 / c;
                for tile in tiles {
                    let bytes = tile.m * c as u32;
                    if store {
                        let ins: Vec<Value> = (0..n as u32)
                            .map(|t| {
                                let po = lane_off(tile.l0 + t, tile.priv_off);
                                self.load_partial(prv, ops.private, po, bytes)
                            })
                            .collect();
                        let outs = self.transpose_chunks(ins, c);
                        for (s, src) in tile.src.iter().enumerate() {
                            if let Some((br, cb)) = src {
                                let a = row(self, *br);
                                self.b.ins().store(surf, outs[s], a, *cb as i32);
                            }
                        }
                    } else {
                        let mut zero = None;
                        let piece = (16 / f) as u32;
                        let pieces: Vec<Value> = tile
                            .src
                            .iter()
                            .map(|src| match src {
                                Some((br, cb)) => {
                                    let a = row(self, *br);
                                    self.load_partial(surf, a, *cb as i32, piece)
                                }
                                None => *zero.get_or_insert_with(|| {
                                    self.vconst_bytes(types::I8X16, vec![0; 16])
                                }),
                            })
                            .collect();
                        let ins: Vec<Value> = pieces
                            .chunks(f)
                            .map(|ps| self.interleave_pieces(ps.to_vec(), c / f))
                            .collect();
                        let outs = self.transpose_chunks(ins, c);
                        for (t, v) in outs.into_iter().enumerate() {
                            let po = lane_off(tile.l0 + t as u32, tile.priv_off);
                            self.store_partial(prv, v, ops.private, po, bytes);
                        }
                    }
                }
            }
        }
    }

    /// The chunk row whose chunks interleave the units of `u` bytes of `pieces`
    /// (each in the low bytes of its vector): pairs interleaved, then pairs of pairs.
    fn interleave_pieces(&mut self, mut pieces: Vec<Value>, mut u: usize) -> Value {
        while pieces.len() > 1 {
            let lo = self
                .b
                .func
                .dfg
                .immediates
                .push(interleave_mask(u, false).to_vec().into());
            pieces = pieces
                .chunks(2)
                .map(|p| self.b.ins().shuffle(p[0], p[1], lo))
                .collect();
            u *= 2;
        }
        pieces[0]
    }

    /// Transposes `v.len()` x `v.len()` chunks of `c` bytes (`v.len() * c` = 16):
    /// log2(n) rounds of interleaving vector `j` with vector `j + n/2`.
    fn transpose_chunks(&mut self, mut v: Vec<Value>, c: usize) -> Vec<Value> {
        let n = v.len();
        let half = n / 2;
        let lo = self
            .b
            .func
            .dfg
            .immediates
            .push(interleave_mask(c, false).to_vec().into());
        let hi = self
            .b
            .func
            .dfg
            .immediates
            .push(interleave_mask(c, true).to_vec().into());
        for _ in 0..n.trailing_zeros() {
            let mut out = Vec::with_capacity(n);
            for j in 0..half {
                out.push(self.b.ins().shuffle(v[j], v[j + half], lo));
                out.push(self.b.ins().shuffle(v[j], v[j + half], hi));
            }
            v = out;
        }
        v
    }

    /// The first `bytes` (1, 2, 4, 8 or 16) bytes of an i8x16 stored at `addr + off`.
    fn store_partial(&mut self, fl: ir::MemFlagsData, v: Value, addr: Value, off: i32, bytes: u32) {
        let x = match bytes {
            16 => v,
            8 => {
                let t = self.b.ins().bitcast(types::I64X2, little(), v);
                self.b.ins().extractlane(t, 0)
            }
            4 => {
                let t = self.b.ins().bitcast(types::I32X4, little(), v);
                self.b.ins().extractlane(t, 0)
            }
            2 => {
                let t = self.b.ins().bitcast(types::I16X8, little(), v);
                self.b.ins().extractlane(t, 0)
            }
            _ => self.b.ins().extractlane(v, 0),
        };
        self.b.ins().store(fl, x, addr, off);
    }

    /// `bytes` (1, 2, 4, 8 or 16) bytes at `addr + off` as the low bytes of an i8x16.
    fn load_partial(&mut self, fl: ir::MemFlagsData, addr: Value, off: i32, bytes: u32) -> Value {
        if bytes == 16 {
            return self.b.ins().load(types::I8X16, fl, addr, off);
        }
        let x = self.b.ins().load(piece_type(bytes), fl, addr, off);
        let v = if bytes == 8 {
            self.b.ins().scalar_to_vector(types::I64X2, x)
        } else {
            let x = if bytes < 4 {
                self.b.ins().uextend(types::I32, x)
            } else {
                x
            };
            self.b.ins().scalar_to_vector(types::I32X4, x)
        };
        self.b.ins().bitcast(types::I8X16, little(), v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spirv::Block2dKind::*;

    fn shapes() -> Vec<Block2dShape> {
        let mut v = Vec::new();
        for kind in [Load, LoadTransform, LoadTranspose, Store, Prefetch] {
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
                                v.push(s);
                            }
                        }
                    }
                }
            }
        }
        v
    }

    /// Runs `shuffle` of byte labels.
    fn shuffle(a: &[u32; 16], b: &[u32; 16], m: &[u8; 16]) -> [u32; 16] {
        let mut r = [0; 16];
        for (i, &k) in m.iter().enumerate() {
            r[i] = if k < 16 {
                a[k as usize]
            } else {
                b[k as usize - 16]
            };
        }
        r
    }

    #[test]
    fn interleave_rounds_transpose() {
        for c in [1usize, 2, 4, 8] {
            let n = 16 / c;
            // Vector s holds chunks (s, t) for t in 0..n; byte label = s * 16 + byte.
            let mut v: Vec<[u32; 16]> = (0..n)
                .map(|s| std::array::from_fn(|i| (s * 16 + i) as u32))
                .collect();
            for _ in 0..n.trailing_zeros() {
                let mut out = Vec::new();
                for j in 0..n / 2 {
                    out.push(shuffle(&v[j], &v[j + n / 2], &interleave_mask(c, false)));
                    out.push(shuffle(&v[j], &v[j + n / 2], &interleave_mask(c, true)));
                }
                v = out;
            }
            for (t, vt) in v.iter().enumerate() {
                for s in 0..n {
                    for k in 0..c {
                        assert_eq!(vt[s * c + k], (s * 16 + t * c + k) as u32, "c={c}");
                    }
                }
            }
        }
    }

    /// Replays a plan on byte labels and compares with the helper's table.
    #[test]
    fn plans_move_every_byte_as_the_helper() {
        for shape in shapes() {
            for w in [4usize, 8, 16, 32] {
                let p = plan(&shape, w);
                if shape.kind == Prefetch {
                    assert!(p.is_none());
                    continue;
                }
                if w == 16 && shape.kind != LoadTranspose {
                    // Plain loads/stores and transforms at sub-group size 16: tiles.
                    assert!(matches!(p, Some(Plan::Tiles { .. })), "{shape:?}");
                }
                let src = lane_sources(&shape, w);
                let n = lane_bytes(&shape, w);
                // What each private byte receives (loads), or each block byte (stores).
                let mut lanes: Vec<Vec<Option<ByteSource>>> = vec![vec![None; n]; w];
                let mut put = |lane: usize, o: usize, s: ByteSource| {
                    assert!(lanes[lane][o].is_none(), "{shape:?} w={w}: written twice");
                    lanes[lane][o] = Some(s);
                };
                match p {
                    None => {
                        // Only some 8-bit transforms are too big to inline.
                        assert_eq!((shape.kind, shape.esize), (LoadTransform, 1));
                        assert_ne!(w, 16, "{shape:?}");
                        continue;
                    }
                    Some(Plan::Runs(runs)) => {
                        assert!(!matches!(shape.kind, Load | Store) || w == 4);
                        for r in runs {
                            assert!([1, 2, 4, 8, 16].contains(&r.len));
                            for k in 0..r.len {
                                let s = r.src.map(|(br, cb)| (br, cb + k));
                                put(r.lane as usize, (r.priv_off + k) as usize, s);
                            }
                        }
                    }
                    Some(Plan::Tiles { c, f, tiles }) => {
                        let (c, f) = (c as usize, f as usize);
                        let (nn, u) = (16 / c, c / f);
                        for tile in tiles {
                            for t in 0..nn {
                                for s in 0..tile.m as usize {
                                    for p in 0..f {
                                        for k in 0..u {
                                            let bs = tile.src[s * f + p]
                                                .map(|(br, cb)| (br, cb + (t * u + k) as u32));
                                            let o = tile.priv_off as usize + s * c + p * u + k;
                                            put(tile.l0 as usize + t, o, bs);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                for l in 0..w {
                    for o in 0..n {
                        match lanes[l][o] {
                            Some(s) => assert_eq!(s, src[l][o], "{shape:?} w={w} {l} {o}"),
                            // A store may leave padding out, a load never.
                            None => assert!(
                                shape.kind == Store && src[l][o].is_none(),
                                "{shape:?} w={w}: lane {l} byte {o} not moved"
                            ),
                        }
                    }
                }
            }
        }
    }
}
