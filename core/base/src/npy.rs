//! `.npy` files (numpy's array format, header versions 1.0, 2.0 and 3.0) to and from
//! host tensors. The data is taken as raw bytes because a `Tensor` already stores
//! little-endian elements in C order.
//!
//! Supported dtypes: `<f4` (f32), `<f2` (f16), `<i4` (i32), `|i1` (i8), `|u1` (u8) and
//! `<u2`, which holds bf16 as its 16 bits (numpy has no bf16) and reads as a bf16 tensor.

use crate::tensor::Tensor;
use crate::types::DType;
use npyz::{Endianness, TypeChar, WriterBuilder};
use py_literal::Value;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum NpyError {
    #[error("not a valid .npy file: {0}")]
    Malformed(String),
    #[error(
        "unsupported .npy dtype `{0}`: expected <f4 (f32), <f2 (f16), <i4 (i32), |i1 (i8), |u1 (u8) or <u2 (bf16 bits)"
    )]
    UnsupportedDType(String),
    #[error(".npy data is big-endian (`{0}`); save it little-endian, e.g. `a.astype(a.dtype.newbyteorder('<'))`")]
    BigEndian(String),
    #[error(".npy data is in Fortran order; save a C-ordered array (`np.ascontiguousarray`)")]
    FortranOrder,
    #[error(
        ".npy data has {found} bytes, the header's shape {shape:?} of {dtype} needs {expected}"
    )]
    WrongLength {
        dtype: DType,
        shape: Vec<u64>,
        expected: u64,
        found: u64,
    },
}

/// numpy's own default limit on header text (`max_header_size` of `np.load`); headers of
/// the dtypes this format supports are under 200 bytes.
const MAX_HEADER_BYTES: usize = 10_000;

/// A valid header nests brackets two deep (`{... (2, 3) ...}`); deeper nesting is refused
/// before the literal parser, which recurses, can see it.
const MAX_HEADER_NESTING: usize = 4;

/// Parses a whole `.npy` file.
///
/// The framing (magic, version, header length) is read here rather than by `npyz`'s
/// reader: that reader allocates whatever header length a file claims and multiplies the
/// shape without overflow checks, and input files are untrusted. The header dict is
/// parsed by `py_literal` (the parser `npyz` uses) and the type string by `npyz`.
pub fn read(bytes: &[u8]) -> Result<Tensor, NpyError> {
    let malformed = |m: &str| NpyError::Malformed(m.to_string());
    let rest = bytes
        .strip_prefix(b"\x93NUMPY")
        .ok_or_else(|| malformed("missing the \\x93NUMPY magic"))?;
    let (len, rest) = match rest {
        [1, 0, a, b, rest @ ..] => (u16::from_le_bytes([*a, *b]) as usize, rest),
        [2 | 3, 0, a, b, c, d, rest @ ..] => (u32::from_le_bytes([*a, *b, *c, *d]) as usize, rest),
        [major, minor, ..] => {
            return Err(NpyError::Malformed(format!(
                "unsupported version {major}.{minor}"
            )))
        }
        _ => return Err(malformed("truncated before the header")),
    };
    if len > MAX_HEADER_BYTES {
        return Err(NpyError::Malformed(format!(
            "header of {len} bytes (at most {MAX_HEADER_BYTES})"
        )));
    }
    if rest.len() < len {
        return Err(malformed("truncated inside the header"));
    }
    let (text, data) = rest.split_at(len);
    let text = std::str::from_utf8(text).map_err(|_| malformed("header is not UTF-8"))?;
    let header = parse_header(text.trim_end())?;
    let ts: npyz::TypeStr = header
        .descr
        .parse()
        .map_err(|_| NpyError::UnsupportedDType(header.descr.clone()))?;
    if ts.endianness() == Endianness::Big && ts.size_field() > 1 {
        return Err(NpyError::BigEndian(header.descr));
    }
    let dtype = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 4) => DType::F32,
        (TypeChar::Float, 2) => DType::F16,
        (TypeChar::Int, 4) => DType::I32,
        (TypeChar::Int, 1) => DType::I8,
        (TypeChar::Uint, 1) => DType::U8,
        (TypeChar::Uint, 2) => DType::BF16,
        _ => return Err(NpyError::UnsupportedDType(header.descr)),
    };
    let shape = header.shape;
    if header.fortran_order && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(NpyError::FortranOrder);
    }
    let expected = shape
        .iter()
        .try_fold(dtype.bytes(), |acc, &d| acc.checked_mul(d))
        .unwrap_or(u64::MAX);
    if data.len() as u64 != expected {
        return Err(NpyError::WrongLength {
            dtype,
            shape,
            expected,
            found: data.len() as u64,
        });
    }
    Ok(Tensor {
        dtype,
        shape,
        data: data.to_vec(),
    })
}

struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<u64>,
}

fn parse_header(text: &str) -> Result<Header, NpyError> {
    let malformed = |m: String| NpyError::Malformed(m);
    let mut depth = 0usize;
    for ch in text.chars() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_HEADER_NESTING {
            return Err(malformed("header nests too deeply".into()));
        }
    }
    let value: Value = text
        .parse()
        .map_err(|e| malformed(format!("header is not a Python literal: {e}")))?;
    let Value::Dict(entries) = value else {
        return Err(malformed("header is not a dict".into()));
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| matches!(k, Value::String(s) if s == key))
            .map(|(_, v)| v)
            .ok_or_else(|| malformed(format!("header has no '{key}'")))
    };
    let descr = match get("descr")? {
        Value::String(s) => s.clone(),
        other => return Err(NpyError::UnsupportedDType(other.to_string())),
    };
    let fortran_order = match get("fortran_order")? {
        Value::Boolean(b) => *b,
        _ => return Err(malformed("'fortran_order' is not a bool".into())),
    };
    let shape = match get("shape")? {
        Value::Tuple(dims) | Value::List(dims) => dims
            .iter()
            .map(|d| match d {
                Value::Integer(n) => u64::try_from(n).ok(),
                _ => None,
            })
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| malformed("'shape' holds something other than sizes".into()))?,
        _ => return Err(malformed("'shape' is not a tuple".into())),
    };
    Ok(Header {
        descr,
        fortran_order,
        shape,
    })
}

/// Serialises a tensor as a `.npy` file (version 1.0 header unless the shape needs 2.0).
/// bf16 is written as `<u2` bits.
pub fn write(t: &Tensor) -> Vec<u8> {
    let descr = match t.dtype {
        DType::F32 => "<f4",
        DType::F16 => "<f2",
        DType::I32 => "<i4",
        DType::BF16 => "<u2",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::Mask => "|b1",
    };
    let mut out = Vec::with_capacity(128 + t.data.len());
    // Neither can fail: the type string is one of four constants npyz parses, and writing
    // into a Vec<u8> has no I/O error.
    if let Ok(ts) = descr.parse::<npyz::TypeStr>() {
        let header = npyz::WriteOptions::new_header_only()
            .dtype(npyz::DType::Plain(ts))
            .shape(&t.shape)
            .writer(&mut out)
            .write_header_only();
        debug_assert!(header.is_ok());
    }
    out.extend_from_slice(&t.data);
    out
}
