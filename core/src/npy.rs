//! `.npy` files (numpy's array format) to and from host tensors. `npyz` parses and
//! writes the header (versions 1.0, 2.0 and 3.0); the data is taken as raw bytes because
//! a `Tensor` already stores little-endian elements in C order.
//!
//! Supported dtypes: `<f4` (f32), `<f2` (f16), `<i4` (i32) and `<u2`, which holds bf16
//! as its 16 bits (numpy has no bf16) and reads as a bf16 tensor.

use crate::tensor::Tensor;
use crate::types::DType;
use npyz::{Endianness, TypeChar, WriterBuilder};
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum NpyError {
    #[error("not a valid .npy file: {0}")]
    Malformed(String),
    #[error(
        "unsupported .npy dtype `{0}`: expected <f4 (f32), <f2 (f16), <i4 (i32) or <u2 (bf16 bits)"
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

/// Parses a whole `.npy` file.
pub fn read(bytes: &[u8]) -> Result<Tensor, NpyError> {
    let mut reader = bytes;
    let file = npyz::NpyFile::new(&mut reader).map_err(|e| NpyError::Malformed(e.to_string()))?;
    let ts = match file.dtype() {
        npyz::DType::Plain(ts) => ts,
        other => return Err(NpyError::UnsupportedDType(other.descr())),
    };
    let descr = ts.to_string();
    if ts.endianness() == Endianness::Big && ts.size_field() > 1 {
        return Err(NpyError::BigEndian(descr));
    }
    let dtype = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 4) => DType::F32,
        (TypeChar::Float, 2) => DType::F16,
        (TypeChar::Int, 4) => DType::I32,
        (TypeChar::Uint, 2) => DType::BF16,
        _ => return Err(NpyError::UnsupportedDType(descr)),
    };
    let shape = file.shape().to_vec();
    if file.order() == npyz::Order::Fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(NpyError::FortranOrder);
    }
    let expected = shape
        .iter()
        .try_fold(dtype.bytes(), |acc, &d| acc.checked_mul(d))
        .unwrap_or(u64::MAX);
    let data = file.into_inner();
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

/// Serialises a tensor as a `.npy` file (version 1.0 header unless the shape needs 2.0).
/// bf16 is written as `<u2` bits.
pub fn write(t: &Tensor) -> Vec<u8> {
    let descr = match t.dtype {
        DType::F32 => "<f4",
        DType::F16 => "<f2",
        DType::I32 => "<i4",
        DType::BF16 => "<u2",
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
