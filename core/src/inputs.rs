//! The tensors a run starts from: the ones the user provided (by parameter name), the
//! rest filled deterministically from a seed, and `out` parameters zeroed.
//!
//! Generated data, per element in order:
//! - floats: uniform on a grid in [-1, 1) fine enough to be exact in the parameter's
//!   dtype (steps of 2^-23 for f32, 2^-10 for f16, 2^-7 for bf16), so no value rounds up
//!   to 1;
//! - i32: uniform in [0, 16), small enough to be a valid row of any gather target with at
//!   least 16 rows (the examples keep gather targets at 32 rows or more).

use crate::diag::Diagnostic;
use crate::front::hir::Kernel;
use crate::tensor::Tensor;
use crate::types::DType;

/// Upper bound (exclusive) of generated i32 values.
pub const INT_RANGE: i32 = 16;

/// splitmix64 (Steele, Lea, Flood 2014). Written out rather than taken from a crate
/// because generated inputs are part of the CLI's observable output: they must be
/// identical on every platform and must never change with a dependency upgrade.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Deterministic data for a parameter of `dtype` and `shape`. Each parameter draws from
/// its own stream (seed and parameter position), so adding a parameter does not change
/// the data of the others.
pub fn generate(dtype: DType, shape: Vec<u64>, seed: u64, stream: u64) -> Tensor {
    let mut rng = SplitMix64(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
    let mut t = Tensor::zeros(dtype, shape);
    // Significand bits of the type: values j / 2^(p-1) - 1 with j < 2^p are exact.
    let bits = match dtype {
        DType::F32 => 24,
        DType::F16 => 11,
        DType::BF16 => 8,
        DType::I32 => 4,
        // Every value of the type: packed bytes and their sign bits get exercised.
        DType::I8 | DType::U8 => 8,
        // No parameter is a mask; lanes of 0 and 1 if one ever is.
        DType::Mask => 1,
    };
    for i in 0..t.len() {
        let j = rng.next() >> (64 - bits);
        if matches!(dtype, DType::I32 | DType::I8 | DType::U8) {
            // `set_i32` wraps 0 .. 256 into an i8's -128 .. 128.
            t.set_i32(i, j as i32);
        } else {
            t.set(i, (j as f64 / (1u64 << (bits - 1)) as f64 - 1.0) as f32);
        }
    }
    t
}

/// Seeded data for every tensor a hand-written program declares, as `tilescope sim
/// --seed` makes it (stream = declaration position), so a student can reproduce a run;
/// a tensor over the element limit is an error naming it.
pub fn for_program(program: &crate::isa::Program, seed: u64) -> Result<Vec<Tensor>, String> {
    program
        .tensors
        .iter()
        .enumerate()
        .map(|(stream, decl)| {
            let elements = decl.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
            match elements {
                Some(n) if n <= crate::limits::MAX_TENSOR_ELEMENTS => Ok(generate(
                    decl.dtype,
                    decl.shape.clone(),
                    seed,
                    stream as u64,
                )),
                _ => Err(format!(
                    "tensor `{}` exceeds the limit of {} elements",
                    decl.name,
                    crate::limits::MAX_TENSOR_ELEMENTS
                )),
            }
        })
        .collect()
}

/// `inputs` (one per kernel parameter) with a zeroed tensor for each scratch tensor the
/// compiler added after them (relayout's copies), as the simulator takes one per
/// tensor the program declares.
pub fn with_scratch(program: &crate::isa::Program, mut inputs: Vec<Tensor>) -> Vec<Tensor> {
    let scratch = program.tensors.iter().skip(inputs.len());
    inputs.extend(scratch.map(|d| Tensor::zeros(d.dtype, d.shape.clone())));
    inputs
}

/// Builds the tensor list (indexed by `ParamId`) for `kernel`. Provided tensors must
/// match their parameter's dtype and shape; a bf16 parameter takes a `<u2` file, which
/// `npy::read` already presents as bf16.
pub fn prepare(
    kernel: &Kernel,
    provided: Vec<(String, Tensor)>,
    seed: u64,
) -> Result<Vec<Tensor>, Diagnostic> {
    let mut given: Vec<Option<Tensor>> = vec![None; kernel.params.len()];
    for (name, tensor) in provided {
        let Some(pos) = kernel.params.iter().position(|p| p.name == name) else {
            let names: Vec<&str> = kernel.params.iter().map(|p| p.name.as_str()).collect();
            return Err(Diagnostic::global(format!(
                "kernel `{}` has no parameter `{name}` (its parameters: {})",
                kernel.name,
                names.join(", ")
            )));
        };
        let p = &kernel.params[pos];
        if tensor.dtype != p.ty.dtype || tensor.shape != p.ty.shape {
            let found = crate::types::TileType::new(tensor.dtype, tensor.shape.clone());
            let hint = if p.ty.dtype == DType::BF16 {
                " (bf16 data is given as uint16 bits)"
            } else {
                ""
            };
            return Err(Diagnostic::global(format!(
                "input for parameter `{name}`: expected {}{hint}, found {found}",
                p.ty
            )));
        }
        if tensor.data.len() as u64 != p.ty.bytes() {
            return Err(Diagnostic::global(format!(
                "input for parameter `{name}`: {} holds {} bytes of data, expected {}",
                p.ty,
                tensor.data.len(),
                p.ty.bytes()
            )));
        }
        if given[pos].replace(tensor).is_some() {
            return Err(Diagnostic::global(format!(
                "parameter `{name}` is given more than once"
            )));
        }
    }
    let tensors = kernel
        .params
        .iter()
        .zip(given)
        .enumerate()
        .map(|(i, (p, g))| match g {
            Some(t) => t,
            None if p.is_out => Tensor::zeros(p.ty.dtype, p.ty.shape.clone()),
            None => generate(p.ty.dtype, p.ty.shape.clone(), seed, i as u64),
        })
        .collect();
    Ok(tensors)
}
