//! Element types and tile types shared by the front end, the tile IR, the interpreter
//! and the simulator.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F32,
    F16,
    BF16,
    I32,
    /// 8-bit integers, signed and unsigned: loaded, stored and converted with `as`
    /// (quantised weights, packed nibbles); arithmetic runs on i32 or a float.
    I8,
    U8,
    /// The result of a comparison: one byte per lane, 0 or 1. Only the compiler makes
    /// masks (no tensor, literal or cast has this type), so `from_name` does not read it.
    Mask,
}

impl DType {
    /// `v` as a value of this type, held in an `f32` (integers pass through): a scalar
    /// literal takes the dtype of the tile it meets, as numpy's Python scalars do, so
    /// `x * 1e-3` on an f16 tile multiplies by 1e-3 rounded to f16. Rounded through
    /// `f32` first, as the reference interpreter reads literals.
    pub fn literal(self, v: f64) -> f32 {
        let v = v as f32;
        match self {
            DType::F16 => half::f16::from_f32(v).to_f32(),
            DType::BF16 => half::bf16::from_f32(v).to_f32(),
            DType::F32 | DType::I32 | DType::Mask => v,
            // An integer literal wraps into 8 bits, as numpy's `astype` does.
            DType::I8 => f32::from(v as i64 as i8),
            DType::U8 => f32::from(v as i64 as u8),
        }
    }

    pub fn bytes(self) -> u64 {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 => 2,
            DType::I8 | DType::U8 | DType::Mask => 1,
        }
    }

    pub fn is_float(self) -> bool {
        !matches!(self, DType::I32 | DType::I8 | DType::U8 | DType::Mask)
    }

    /// `i8` and `u8`: storage types that tile arithmetic does not take.
    pub fn is_byte_int(self) -> bool {
        matches!(self, DType::I8 | DType::U8)
    }

    /// An integer `v` wrapped into this dtype's range (i32, i8, u8), as numpy's
    /// `astype` wraps integers; other dtypes pass it through.
    pub fn wrap_int(self, v: i64) -> i64 {
        match self {
            DType::I32 => i64::from(v as i32),
            DType::I8 => i64::from(v as i8),
            DType::U8 => i64::from(v as u8),
            _ => v,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I32 => "i32",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::Mask => "mask",
        }
    }

    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "f32" => DType::F32,
            "f16" => DType::F16,
            "bf16" => DType::BF16,
            "i32" => DType::I32,
            "i8" => DType::I8,
            "u8" => DType::U8,
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A comparison, giving a mask. NaN compares as numpy does (and IEEE): unequal to
/// everything, so only `!=` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Eq,
        CmpOp::Ne,
    ];

    /// The source operator.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }

    /// The name in the IR and the assembly (`cmp.lt`, `vcmp.lt.f32`).
    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
        }
    }

    /// Whether `a op b` holds; the compiler's folding and the simulator use it (the
    /// reference interpreter keeps its own).
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}

/// The static type of a tile or tensor: element type and shape. A rank-0 shape is a
/// scalar (a literal that broadcasts).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TileType {
    pub dtype: DType,
    pub shape: Vec<u64>,
}

impl TileType {
    pub fn new(dtype: DType, shape: Vec<u64>) -> TileType {
        TileType { dtype, shape }
    }

    pub fn scalar(dtype: DType) -> TileType {
        TileType {
            dtype,
            shape: Vec::new(),
        }
    }

    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    pub fn bytes(&self) -> u64 {
        self.elements() * self.dtype.bytes()
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

impl fmt::Display for TileType {
    /// `f32[8, 512]`, or `f32` for a scalar.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.dtype)?;
        if !self.shape.is_empty() {
            f.write_str("[")?;
            for (i, d) in self.shape.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{d}")?;
            }
            f.write_str("]")?;
        }
        Ok(())
    }
}

/// Where a tile or tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum MemSpace {
    /// Global memory: kernel tensors.
    GM,
    /// Unified buffer: vector operands.
    UB,
    /// Staging for matrix operands.
    L1,
    /// Matrix unit, left operand.
    L0A,
    /// Matrix unit, right operand.
    L0B,
    /// Matrix accumulators (f32).
    L0C,
}

impl MemSpace {
    pub const ALL: [MemSpace; 6] = [
        MemSpace::GM,
        MemSpace::UB,
        MemSpace::L1,
        MemSpace::L0A,
        MemSpace::L0B,
        MemSpace::L0C,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MemSpace::GM => "gm",
            MemSpace::UB => "ub",
            MemSpace::L1 => "l1",
            MemSpace::L0A => "l0a",
            MemSpace::L0B => "l0b",
            MemSpace::L0C => "l0c",
        }
    }

    pub fn from_name(name: &str) -> Option<MemSpace> {
        MemSpace::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }

    /// The position in `ALL`, for tables indexed by memory space.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for MemSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The decoupled pipes of the core. Each executes its own instructions in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Pipe {
    /// Scalar: loop control, address arithmetic, dispatch.
    S,
    /// DMA GM -> UB / L1, gather.
    MTE2,
    /// L1 -> L0A / L0B.
    MTE1,
    /// Matrix multiply-accumulate.
    M,
    /// Vector unit on UB.
    V,
    /// L0C -> UB / GM with cast.
    FIX,
    /// DMA UB -> GM, scatter; UB -> L1.
    MTE3,
}

impl Pipe {
    pub const ALL: [Pipe; 7] = [
        Pipe::S,
        Pipe::MTE2,
        Pipe::MTE1,
        Pipe::M,
        Pipe::V,
        Pipe::FIX,
        Pipe::MTE3,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pipe::S => "S",
            Pipe::MTE2 => "MTE2",
            Pipe::MTE1 => "MTE1",
            Pipe::M => "M",
            Pipe::V => "V",
            Pipe::FIX => "FIX",
            Pipe::MTE3 => "MTE3",
        }
    }

    pub fn from_name(name: &str) -> Option<Pipe> {
        Pipe::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// numpy broadcasting of two shapes, or `None` when they do not agree. Shared by the
/// checker and the IR typing rules so the two agree.
pub fn broadcast_shapes(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for (i, slot) in out.iter_mut().enumerate() {
        // Right-aligned: axis `i` of the result is axis `i - (rank - len)` of each input.
        let da = (i + a.len())
            .checked_sub(rank)
            .and_then(|j| a.get(j))
            .copied()
            .unwrap_or(1);
        let db = (i + b.len())
            .checked_sub(rank)
            .and_then(|j| b.get(j))
            .copied()
            .unwrap_or(1);
        *slot = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}
