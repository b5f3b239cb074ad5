//! printf format strings (OpenCL C 3.0 §6.15.14) parsed once at compile time, and the
//! layout of the records that generated code appends to a launch's printf buffer.
//!
//! Each `printf` call site of a kernel becomes a [`PrintfSite`]: the format split into
//! literal text and conversions, every conversion bound to its argument. At run time
//! each active work-item writes one record: the site index (`u32`) followed by the
//! values of the stored arguments at the offsets given by their [`Slot`]s. The runtime
//! turns records back into text on the host (`runtime::printf`); this module parses
//! and lays out, it never formats.

use std::fmt;

/// Bytes before the first argument of a record: the site index (`u32`), padded.
pub const RECORD_HEADER: u32 = 4;

/// Records start at multiples of this many bytes.
pub const RECORD_ALIGN: u32 = 8;

/// The flag characters of a conversion specification.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `-`: left-justify within the field.
    pub left: bool,
    /// `+`: always print a sign for signed conversions.
    pub plus: bool,
    /// space: a space where a `+` would go.
    pub space: bool,
    /// `#`: the alternative form.
    pub alt: bool,
    /// `0`: pad with zeros after the sign/prefix.
    pub zero: bool,
}

/// The length modifier of a conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    /// None: `int` for integer conversions (scalars only).
    Default,
    /// `hh`: char.
    Hh,
    /// `h`: short (or half for vector floating-point conversions).
    H,
    /// `hl`: int or float, vectors only.
    Hl,
    /// `l`, and the 64-bit `ll`, `j`, `z`, `t`: long (or double for vector
    /// floating-point conversions).
    L,
}

impl Length {
    /// Bits an integer argument is converted to before printing.
    pub fn int_bits(self) -> u32 {
        match self {
            Length::Hh => 8,
            Length::H => 16,
            Length::Default | Length::Hl => 32,
            Length::L => 64,
        }
    }
}

/// One conversion specification (`%-08.3v4hlf` and the like).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub flags: Flags,
    pub width: Option<u32>,
    pub precision: Option<u32>,
    /// The `vn` vector specifier: n components.
    pub vector: Option<u8>,
    pub length: Length,
    /// The conversion character: one of `diouxXfFeEgGaAcsp`.
    pub conversion: u8,
}

impl Spec {
    /// `d i o u x X`.
    pub fn is_integer(&self) -> bool {
        b"diouxX".contains(&self.conversion)
    }

    /// `f F e E g G a A`.
    pub fn is_float(&self) -> bool {
        b"fFeEgGaA".contains(&self.conversion)
    }

    /// `d i`: the argument is signed.
    pub fn is_signed(&self) -> bool {
        matches!(self.conversion, b'd' | b'i')
    }
}

impl fmt::Display for Spec {
    /// The specification as written (normalised), for messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("%")?;
        for (on, c) in [
            (self.flags.left, '-'),
            (self.flags.plus, '+'),
            (self.flags.space, ' '),
            (self.flags.alt, '#'),
            (self.flags.zero, '0'),
        ] {
            if on {
                write!(f, "{c}")?;
            }
        }
        if let Some(w) = self.width {
            write!(f, "{w}")?;
        }
        if let Some(p) = self.precision {
            write!(f, ".{p}")?;
        }
        if let Some(n) = self.vector {
            write!(f, "v{n}")?;
        }
        f.write_str(match self.length {
            Length::Default => "",
            Length::Hh => "hh",
            Length::H => "h",
            Length::Hl => "hl",
            Length::L => "l",
        })?;
        write!(f, "{}", self.conversion as char)
    }
}

/// A piece of a parsed format string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatPiece {
    /// Bytes copied to the output (`%%` already turned into `%`).
    Text(Vec<u8>),
    /// A conversion consuming the next argument.
    Conversion(Spec),
}

/// Parses `format` (without its terminating NUL) per OpenCL C's printf grammar:
/// `%` flags, width, `.precision`, `vn`, length modifier, conversion. Refuses what
/// OpenCL C does not support (`*` widths and precisions, `%n`, `L`, `hl` without a
/// vector, `l` with `c` or `s`, vectors without a length modifier or of a size other
/// than 2, 3, 4, 8, 16) with a message naming the specification.
pub fn parse_format(format: &[u8]) -> Result<Vec<FormatPiece>, String> {
    let mut out = Vec::new();
    let mut text = Vec::new();
    let mut i = 0;
    while i < format.len() {
        let c = format[i];
        i += 1;
        if c != b'%' {
            text.push(c);
            continue;
        }
        if format.get(i) == Some(&b'%') {
            text.push(b'%');
            i += 1;
            continue;
        }
        let start = i - 1;
        let spec = parse_spec(format, &mut i).map_err(|why| {
            let end = i.min(format.len());
            format!(
                "conversion \"{}\": {why}",
                String::from_utf8_lossy(&format[start..end])
            )
        })?;
        if !text.is_empty() {
            out.push(FormatPiece::Text(std::mem::take(&mut text)));
        }
        out.push(FormatPiece::Conversion(spec));
    }
    if !text.is_empty() {
        out.push(FormatPiece::Text(text));
    }
    Ok(out)
}

/// Parses one specification after its `%`; `i` ends after the conversion character.
fn parse_spec(format: &[u8], i: &mut usize) -> Result<Spec, String> {
    let peek = |i: usize| format.get(i).copied();
    let mut flags = Flags::default();
    while let Some(c) = peek(*i) {
        match c {
            b'-' => flags.left = true,
            b'+' => flags.plus = true,
            b' ' => flags.space = true,
            b'#' => flags.alt = true,
            b'0' => flags.zero = true,
            _ => break,
        }
        *i += 1;
    }
    let number = |i: &mut usize| -> Result<Option<u32>, String> {
        let from = *i;
        let mut v: u32 = 0;
        while let Some(d @ b'0'..=b'9') = peek(*i) {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u32::from(d - b'0')))
                .filter(|v| *v <= 1 << 20)
                .ok_or("field width or precision too large")?;
            *i += 1;
        }
        Ok((*i > from).then_some(v))
    };
    if peek(*i) == Some(b'*') {
        return Err("the '*' field width is not supported by OpenCL C".into());
    }
    let width = number(i)?;
    let mut precision = None;
    if peek(*i) == Some(b'.') {
        *i += 1;
        if peek(*i) == Some(b'*') {
            return Err("the '*' precision is not supported by OpenCL C".into());
        }
        precision = Some(number(i)?.unwrap_or(0));
    }
    let mut vector = None;
    if peek(*i) == Some(b'v') {
        *i += 1;
        let n = number(i)?.ok_or("the vector specifier 'v' needs a size")?;
        if ![2, 3, 4, 8, 16].contains(&n) {
            return Err(format!(
                "vector size {n} (OpenCL C allows 2, 3, 4, 8 and 16)"
            ));
        }
        vector = Some(n as u8);
    }
    let mut length = Length::Default;
    match peek(*i) {
        Some(b'h') => {
            *i += 1;
            length = match peek(*i) {
                Some(b'h') => {
                    *i += 1;
                    Length::Hh
                }
                Some(b'l') => {
                    *i += 1;
                    Length::Hl
                }
                _ => Length::H,
            };
        }
        Some(b'l') => {
            *i += 1;
            // `ll` is reserved by OpenCL C; long is 64 bits, so it prints as `l`.
            if peek(*i) == Some(b'l') {
                *i += 1;
            }
            length = Length::L;
        }
        // `j`, `z`, `t` (OpenCL C 3.1): intmax_t, size_t and ptrdiff_t are 64 bits.
        Some(b'j' | b'z' | b't') => {
            *i += 1;
            length = Length::L;
        }
        Some(b'L') => return Err("the 'L' length modifier is not supported by OpenCL C".into()),
        _ => {}
    }
    let conversion = peek(*i).ok_or("the format ends inside a conversion specification")?;
    *i += 1;
    if conversion == b'n' {
        return Err("the 'n' conversion is not supported by OpenCL C".into());
    }
    if !b"diouxXfFeEgGaAcsp".contains(&conversion) {
        return Err(format!("unknown conversion '{}'", conversion as char));
    }
    let spec = Spec {
        flags,
        width,
        precision,
        vector,
        length,
        conversion,
    };
    if vector.is_some() {
        if !(spec.is_integer() || spec.is_float()) {
            return Err(
                "the vector specifier applies only to integer and floating-point conversions"
                    .into(),
            );
        }
        if length == Length::Default {
            return Err("a vector specifier needs a length modifier (hh, h, hl or l)".into());
        }
        if spec.is_float() && length == Length::Hh {
            return Err("'hh' does not apply to floating-point conversions".into());
        }
    } else if length == Length::Hl {
        return Err("the 'hl' length modifier needs a vector specifier".into());
    }
    if length == Length::L && matches!(conversion, b'c' | b's') {
        return Err("'l' with 'c' or 's' is not supported by OpenCL C".into());
    }
    Ok(spec)
}

/// How a stored scalar (or each vector component) is represented in a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    /// An integer (or pointer, or bool) of this many bytes, little-endian.
    Int { bytes: u8 },
    /// An IEEE float of 2, 4 or 8 bytes.
    Float { bytes: u8 },
}

impl ScalarKind {
    /// Size in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            ScalarKind::Int { bytes } | ScalarKind::Float { bytes } => u32::from(bytes),
        }
    }
}

/// The type of one printf argument, as the call site passes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgShape {
    pub kind: ScalarKind,
    /// 1 for scalars, else the vector's component count.
    pub count: u8,
    pub is_vector: bool,
    pub is_pointer: bool,
}

/// Where an argument's value lies in a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Index among the call's arguments (after the format).
    pub arg: usize,
    /// Byte offset of component 0 in the record.
    pub offset: u32,
    pub kind: ScalarKind,
    /// Components, each `kind.bytes()` apart.
    pub count: u8,
}

/// A piece of a call site's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SitePiece {
    Text(Vec<u8>),
    /// A conversion of a value stored in the record.
    Value {
        spec: Spec,
        slot: Slot,
    },
    /// `%s` of a string known at compile time.
    Str {
        spec: Spec,
        text: Vec<u8>,
    },
    /// `%s` of a pointer only known at run time: the record holds the pointer, the
    /// text is looked up in [`PrintfInfo::strings`].
    StrPointer {
        spec: Spec,
        slot: Slot,
    },
}

/// One `printf` call of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfSite {
    pub pieces: Vec<SitePiece>,
    /// Bytes of one record (a multiple of [`RECORD_ALIGN`]).
    pub record_size: u32,
}

/// A constant string of the program, for `%s` arguments only known at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstString {
    /// Address of the string's bytes in the compiled program's constant data.
    pub address: u64,
    /// The whole constant array (NUL included).
    pub bytes: Vec<u8>,
}

/// Everything the host needs to turn a kernel's printf records into text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintfInfo {
    /// Indexed by the site index at the start of each record.
    pub sites: Vec<PrintfSite>,
    /// Constant strings that `StrPointer` pieces may point into.
    pub strings: Vec<ConstString>,
}

impl PrintfInfo {
    /// Whether the kernel calls printf at all.
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// The text of a `%s` pointer: the bytes from `address` up to the NUL of the
    /// constant string it points into, if it points into one.
    pub fn string_at(&self, address: u64) -> Option<&[u8]> {
        self.strings.iter().find_map(|s| {
            let offset = address.checked_sub(s.address)?;
            let rest = s.bytes.get(usize::try_from(offset).ok()?..)?;
            (!rest.is_empty()).then(|| until_nul(rest))
        })
    }
}

/// `bytes` up to (not including) the first NUL.
pub fn until_nul(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// Binds the conversions of `format` to the call's arguments (`args`, after the
/// format) and lays out the record. `static_string(i)` gives the text of argument
/// `i` when it is a string known at compile time. Arguments beyond the format's
/// conversions are evaluated but not stored (OpenCL C: "otherwise ignored").
pub fn build_site(
    format: &[u8],
    args: &[ArgShape],
    mut static_string: impl FnMut(usize) -> Option<Vec<u8>>,
) -> Result<PrintfSite, String> {
    let parsed = parse_format(format)?;
    let mut pieces = Vec::with_capacity(parsed.len());
    let mut next_arg = 0usize;
    let mut offset = RECORD_HEADER;
    for piece in parsed {
        let spec = match piece {
            FormatPiece::Text(t) => {
                pieces.push(SitePiece::Text(t));
                continue;
            }
            FormatPiece::Conversion(spec) => spec,
        };
        let arg = next_arg;
        next_arg += 1;
        let shape = args.get(arg).ok_or_else(|| {
            format!(
                "conversion {spec} has no argument (the call passes {})",
                args.len()
            )
        })?;
        match (spec.vector, shape.is_vector) {
            (Some(n), true) if n == shape.count => {}
            (Some(n), true) => {
                return Err(format!(
                    "conversion {spec} expects a {n}-component vector, argument {} has {} components",
                    arg + 1,
                    shape.count
                ))
            }
            (Some(_), false) => {
                return Err(format!(
                    "conversion {spec} expects a vector, argument {} is a scalar",
                    arg + 1
                ))
            }
            (None, true) => {
                return Err(format!(
                    "argument {} is a vector; conversion {spec} needs a vector specifier (e.g. %v{}hld)",
                    arg + 1,
                    shape.count
                ))
            }
            (None, false) => {}
        }
        if spec.conversion == b's' {
            if !shape.is_pointer {
                return Err(format!(
                    "conversion {spec} needs a string argument, argument {} is not a pointer",
                    arg + 1
                ));
            }
            if let Some(text) = static_string(arg) {
                pieces.push(SitePiece::Str { spec, text });
                continue;
            }
        }
        let align = shape.kind.bytes();
        offset = offset.next_multiple_of(align);
        let slot = Slot {
            arg,
            offset,
            kind: shape.kind,
            count: shape.count,
        };
        offset += align * u32::from(shape.count);
        pieces.push(if spec.conversion == b's' {
            SitePiece::StrPointer { spec, slot }
        } else {
            SitePiece::Value { spec, slot }
        });
    }
    Ok(PrintfSite {
        pieces,
        record_size: offset.next_multiple_of(RECORD_ALIGN),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Spec {
        match parse_format(s.as_bytes()).unwrap().as_slice() {
            [FormatPiece::Conversion(c)] => *c,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn parses_every_part_of_a_specification() {
        let s = spec("%-+ #012.5v4hlf");
        assert_eq!(
            s.flags,
            Flags {
                left: true,
                plus: true,
                space: true,
                alt: true,
                zero: true
            }
        );
        assert_eq!(s.width, Some(12));
        assert_eq!(s.precision, Some(5));
        assert_eq!(s.vector, Some(4));
        assert_eq!(s.length, Length::Hl);
        assert_eq!(s.conversion, b'f');
        assert_eq!(s.to_string(), "%-+ #012.5v4hlf");
        assert_eq!(spec("%.d").precision, Some(0));
        assert_eq!(spec("%hhx").length, Length::Hh);
        assert_eq!(spec("%hd").length, Length::H);
        for s in ["%ld", "%lld", "%zu", "%td", "%jd"] {
            assert_eq!(spec(s).length, Length::L, "{s}");
        }
        assert_eq!(spec("%v16hhd").vector, Some(16));
        assert_eq!(spec("%p").conversion, b'p');
    }

    #[test]
    fn text_and_percent_signs() {
        let p = parse_format(b"a%%b%dc%%").unwrap();
        assert_eq!(
            p,
            vec![
                FormatPiece::Text(b"a%b".to_vec()),
                FormatPiece::Conversion(spec("%d")),
                FormatPiece::Text(b"c%".to_vec()),
            ]
        );
        assert_eq!(parse_format(b"").unwrap(), vec![]);
    }

    #[test]
    fn refuses_what_opencl_c_does_not_support() {
        for (format, why) in [
            ("%*d", "'*' field width"),
            ("%.*d", "'*' precision"),
            ("%n", "'n' conversion"),
            ("%Lf", "'L'"),
            ("%hld", "needs a vector specifier"),
            ("%v4d", "needs a length modifier"),
            ("%v5hld", "vector size 5"),
            ("%v2hlc", "applies only to integer"),
            ("%lc", "'l' with 'c'"),
            ("%ls", "'l' with 'c'"),
            ("%v2hhf", "'hh' does not apply"),
            ("%y", "unknown conversion 'y'"),
            ("abc%", "ends inside"),
            ("%5.", "ends inside"),
            ("%99999999d", "too large"),
        ] {
            let err = parse_format(format.as_bytes()).unwrap_err();
            assert!(err.contains(why), "{format}: {err}");
        }
    }

    fn int(bytes: u8) -> ArgShape {
        ArgShape {
            kind: ScalarKind::Int { bytes },
            count: 1,
            is_vector: false,
            is_pointer: false,
        }
    }

    #[test]
    fn lays_out_records_and_binds_arguments() {
        let float4 = ArgShape {
            kind: ScalarKind::Float { bytes: 4 },
            count: 4,
            is_vector: true,
            is_pointer: false,
        };
        let ptr = ArgShape {
            is_pointer: true,
            ..int(8)
        };
        let site = build_site(
            b"x=%d s=%s v=%v4hlf l=%ld extra",
            &[int(4), ptr, float4, int(8), int(4)],
            |i| (i == 1).then(|| b"str".to_vec()),
        )
        .unwrap();
        let slots: Vec<Slot> = site
            .pieces
            .iter()
            .filter_map(|p| match p {
                SitePiece::Value { slot, .. } => Some(*slot),
                _ => None,
            })
            .collect();
        assert_eq!(slots[0].offset, 4);
        assert_eq!(slots[1].offset, 8);
        assert_eq!(slots[1].count, 4);
        assert_eq!(slots[2].offset, 24);
        assert_eq!(slots[2].arg, 3);
        assert_eq!(site.record_size, 32);
        assert!(site.pieces.contains(&SitePiece::Str {
            spec: spec("%s"),
            text: b"str".to_vec()
        }));
        let site = build_site(b"%s", &[ptr], |_| None).unwrap();
        assert!(matches!(site.pieces[0], SitePiece::StrPointer { .. }));
        assert_eq!(build_site(b"hi\n", &[], |_| None).unwrap().record_size, 8);
    }

    #[test]
    fn refuses_arguments_that_do_not_fit_the_format() {
        let v2 = ArgShape {
            count: 2,
            is_vector: true,
            ..int(4)
        };
        for (format, args, why) in [
            ("%d %d", vec![int(4)], "has no argument"),
            ("%v4hld", vec![v2], "4-component vector"),
            ("%v2hld", vec![int(4)], "is a scalar"),
            ("%d", vec![v2], "needs a vector specifier"),
            ("%s", vec![int(4)], "not a pointer"),
        ] {
            let err = build_site(format.as_bytes(), &args, |_| None).unwrap_err();
            assert!(err.contains(why), "{format}: {err}");
        }
    }

    #[test]
    fn string_lookup_stops_at_the_nul() {
        let info = PrintfInfo {
            sites: vec![],
            strings: vec![ConstString {
                address: 0x1000,
                bytes: b"ab\0cd\0".to_vec(),
            }],
        };
        assert_eq!(info.string_at(0x1000), Some(&b"ab"[..]));
        assert_eq!(info.string_at(0x1003), Some(&b"cd"[..]));
        assert_eq!(info.string_at(0x1006), None);
        assert_eq!(info.string_at(0xfff), None);
    }
}
