//! Host model of cl_intel_subgroup_2d_block_io shared by the block I/O tests: the
//! built-ins' names and element types, and the SPV_INTEL_2d_block_io assignment of a
//! block's elements to the lanes of a sub-group. Each test file keeps its own tables
//! of functions, surface geometry and positions.

// Each test crate that includes this module uses a different part of it.
#![allow(dead_code)]

/// Which family of built-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Transform,
    Transpose,
    Write,
    Prefetch,
}

/// One built-in: element bits, block rows and columns, block count.
#[derive(Clone, Copy, Debug)]
pub struct Func {
    pub kind: Kind,
    pub bits: usize,
    pub rows: usize,
    pub cols: usize,
    pub count: usize,
}

impl Func {
    /// The built-in of `kind` with `bits`-bit elements and `count` blocks of `rows` x
    /// `cols` elements.
    pub fn new(kind: Kind, bits: usize, rows: usize, cols: usize, count: usize) -> Func {
        Func {
            kind,
            bits,
            rows,
            cols,
            count,
        }
    }

    /// The OpenCL C name, e.g. `intel_sub_group_2d_block_read_16b_8r16x1c`.
    pub fn name(&self) -> String {
        let k = match self.kind {
            Kind::Read => "read",
            Kind::Transform => "read_transform",
            Kind::Transpose => "read_transpose",
            Kind::Write => "write",
            Kind::Prefetch => "prefetch",
        };
        format!(
            "intel_sub_group_2d_block_{k}_{}b_{}r{}x{}c",
            self.bits, self.rows, self.cols, self.count
        )
    }

    /// Bytes of one surface element.
    pub fn esize(&self) -> usize {
        self.bits / 8
    }

    /// The pointee type of the private pointer in the prototype, and its size.
    pub fn ctype(&self) -> (&'static str, usize) {
        match (self.kind, self.bits, self.cols) {
            (Kind::Transform | Kind::Transpose, _, _) | (_, 32, _) => ("uint", 4),
            (_, 16, _) | (_, 8, 32) => ("ushort", 2),
            _ => ("uchar", 1),
        }
    }

    /// Bytes of one lane element (a transformed read packs several rows in 32 bits).
    pub fn lane_elem(&self) -> usize {
        if self.kind == Kind::Transform {
            4
        } else {
            self.esize()
        }
    }
}

/// One lane element: per packed component, the block-relative (row, column) it
/// comes from, or None for padding (zero).
pub type Cell = Vec<Option<(usize, usize)>>;

/// The spec's assignment of a padded matrix (`nrows` rows, `padded` columns, a power
/// of two) to the `w` lanes, row by row: a row as wide as the sub-group gives each
/// lane one element; narrower rows go to successive sets of lanes; a wider row gives
/// each lane consecutive elements. Lower columns go to lower lanes.
fn distribute(
    w: usize,
    nrows: usize,
    padded: usize,
    cell: impl Fn(usize, usize) -> Cell,
) -> Vec<Vec<Cell>> {
    let mut lanes = vec![Vec::new(); w];
    for r in 0..nrows {
        if padded >= w {
            let per = padded / w;
            for (l, lane) in lanes.iter_mut().enumerate() {
                for j in 0..per {
                    lane.push(cell(r, l * per + j));
                }
            }
        } else {
            let first = (r % (w / padded)) * padded;
            for c in 0..padded {
                lanes[first + c].push(cell(r, c));
            }
        }
    }
    lanes
}

/// Per lane (of `w`), per element of one block: its cell, or None where the spec
/// leaves the lane's value undefined (a lane set that receives no row).
pub fn block_cells(f: &Func, w: usize) -> Vec<Vec<Option<Cell>>> {
    let (bw, bh) = (f.cols, f.rows);
    let lanes = match f.kind {
        Kind::Transform => {
            let per = 4 / f.esize();
            distribute(w, bh.div_ceil(per), bw.next_power_of_two(), |s, c| {
                (0..per)
                    .map(|k| (c < bw && s * per + k < bh).then_some((s * per + k, c)))
                    .collect()
            })
        }
        Kind::Transpose => distribute(w, bw, bh.next_power_of_two(), |r, c| {
            vec![(c < bh).then_some((c, r))]
        }),
        _ => distribute(w, bh, bw.next_power_of_two(), |r, c| {
            vec![(c < bw).then_some((r, c))]
        }),
    };
    let n = lanes.iter().map(Vec::len).max().unwrap_or(0);
    lanes
        .into_iter()
        .map(|l| {
            let mut v: Vec<Option<Cell>> = l.into_iter().map(Some).collect();
            v.resize(n, None);
            v
        })
        .collect()
}

/// A surface of `len` bytes with no zero byte (so a zero read stands out).
pub fn surface_bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 131 + 7) % 251 + 1) as u8).collect()
}

/// The bytes lane `l` of sub-group `g` writes as its element `i` (`value` in the
/// write kernels).
pub fn write_value(g: usize, l: usize, i: usize) -> u32 {
    let h = ((g * 977 + l * 131 + i * 17 + 1) as u32).wrapping_mul(2654435761);
    h ^ (h >> 15)
}
