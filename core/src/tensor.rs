//! Host tensors: the values of kernel parameters, as the interpreter, the simulator's
//! global memory and `.npy` files see them. Elements are stored little-endian in the
//! tensor's own dtype (bf16 as its 16 bits), exactly as they sit in global memory.

use crate::types::DType;
use half::{bf16, f16};

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub dtype: DType,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

impl Tensor {
    pub fn zeros(dtype: DType, shape: Vec<u64>) -> Tensor {
        let bytes = shape.iter().product::<u64>() * dtype.bytes();
        Tensor {
            dtype,
            shape,
            data: vec![0; bytes as usize],
        }
    }

    /// Element count.
    pub fn len(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Builds a tensor from f32 values, rounding to nearest-even into f16/bf16 and
    /// truncating toward zero into i32 (`as` semantics, saturating).
    pub fn from_f32(dtype: DType, shape: Vec<u64>, values: &[f32]) -> Tensor {
        let mut t = Tensor::zeros(dtype, shape);
        for (i, &v) in values.iter().enumerate().take(t.len()) {
            t.set(i, v);
        }
        t
    }

    /// Element `i` (flat, row-major) as f32.
    pub fn get(&self, i: usize) -> f32 {
        let b = &self.data;
        match self.dtype {
            DType::F32 => f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]),
            DType::I32 => {
                i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]) as f32
            }
            DType::F16 => f16::from_le_bytes([b[2 * i], b[2 * i + 1]]).to_f32(),
            DType::BF16 => bf16::from_le_bytes([b[2 * i], b[2 * i + 1]]).to_f32(),
        }
    }

    /// Element `i` of an i32 tensor, exactly.
    pub fn get_i32(&self, i: usize) -> i32 {
        let b = &self.data;
        match self.dtype {
            DType::I32 => i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]),
            _ => self.get(i) as i32,
        }
    }

    /// Stores `v` into element `i`, rounding to the tensor's dtype.
    pub fn set(&mut self, i: usize, v: f32) {
        match self.dtype {
            DType::F32 => self.data[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes()),
            DType::I32 => self.data[4 * i..4 * i + 4].copy_from_slice(&(v as i32).to_le_bytes()),
            DType::F16 => {
                self.data[2 * i..2 * i + 2].copy_from_slice(&f16::from_f32(v).to_le_bytes())
            }
            DType::BF16 => {
                self.data[2 * i..2 * i + 2].copy_from_slice(&bf16::from_f32(v).to_le_bytes())
            }
        }
    }

    pub fn set_i32(&mut self, i: usize, v: i32) {
        match self.dtype {
            DType::I32 => self.data[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes()),
            _ => self.set(i, v as f32),
        }
    }

    /// All elements as f32.
    pub fn to_f32_vec(&self) -> Vec<f32> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }
}
