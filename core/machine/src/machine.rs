//! Target machine presets: memory sizes and alignments, queue depths, event
//! ids, DMA shape limits and the cost model the timing simulator charges.
//!
//! Every figure is a serde field so a preset can be dumped (`tilescope machine --json`),
//! edited and loaded back with [`Machine::from_json`], which validates it.

use crate::types::{MemSpace, Pipe};
use serde::{Deserialize, Serialize};

/// The ISA's ceilings, which a preset may lower but not raise.
pub use crate::isa::{MAX_DMA_DIMS, MAX_EVENT_IDS};

/// The preset compiled for when neither a preset nor a machine is given. `a3` rather
/// than `teach`: the examples are sized for a real core, and `teach` exists to show the
/// capacity error.
pub const DEFAULT_PRESET: &str = "a3";

/// The machine of `DEFAULT_PRESET`.
pub fn default_machine() -> Machine {
    Machine::a3()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Machine {
    pub name: String,
    pub memories: Memories,
    /// Instructions a pipe's queue holds before the S pipe stalls dispatching to it.
    pub queue_depth: QueueDepths,
    /// Binary event flags per (src pipe, dst pipe) pair.
    pub event_ids_per_pair: u32,
    /// Scalar registers `r0 .. r{scalar_regs - 1}` of the S pipe (at most the 32 the ISA
    /// encodes). emit allocates them and spills what does not fit to the 64 spill slots;
    /// the simulator rejects a program that names a register past them.
    pub scalar_regs: u32,
    /// Dimensions one DMA descriptor may have.
    pub dma_max_dims: u32,
    pub clock_ghz: f64,
    pub costs: Costs,
    pub limits: Limits,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// Capacity in bytes; `None` only for GM (unbounded: tensors are as large as declared).
    pub size: Option<u64>,
    /// Required alignment of every operand's base address, in bytes (a power of two).
    pub alignment: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Memories {
    pub gm: Memory,
    pub ub: Memory,
    pub l1: Memory,
    pub l0a: Memory,
    pub l0b: Memory,
    pub l0c: Memory,
}

impl Memories {
    pub fn get(&self, space: MemSpace) -> &Memory {
        match space {
            MemSpace::GM => &self.gm,
            MemSpace::UB => &self.ub,
            MemSpace::L1 => &self.l1,
            MemSpace::L0A => &self.l0a,
            MemSpace::L0B => &self.l0b,
            MemSpace::L0C => &self.l0c,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct QueueDepths {
    pub mte2: u32,
    pub mte1: u32,
    pub m: u32,
    pub v: u32,
    pub fix: u32,
    pub mte3: u32,
}

impl QueueDepths {
    /// Every pipe's queue `depth` deep.
    pub fn uniform(depth: u32) -> QueueDepths {
        QueueDepths {
            mte2: depth,
            mte1: depth,
            m: depth,
            v: depth,
            fix: depth,
            mte3: depth,
        }
    }

    /// Depth of `pipe`'s queue; the S pipe has none (it walks the program itself).
    pub fn get(&self, pipe: Pipe) -> u32 {
        match pipe {
            Pipe::S => 0,
            Pipe::MTE2 => self.mte2,
            Pipe::MTE1 => self.mte1,
            Pipe::M => self.m,
            Pipe::V => self.v,
            Pipe::FIX => self.fix,
            Pipe::MTE3 => self.mte3,
        }
    }
}

/// Bytes per cycle of each data path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Bandwidth {
    pub gm_ub: f64,
    pub gm_l1: f64,
    pub ub_gm: f64,
    pub l1_l0a: f64,
    pub l1_l0b: f64,
    pub l0c_gm: f64,
    pub l0c_ub: f64,
    pub ub_l1: f64,
    pub ub_ub: f64,
}

impl Bandwidth {
    /// Bytes per cycle from `src` to `dst`, or `None` for a path the machine lacks.
    pub fn path(&self, src: MemSpace, dst: MemSpace) -> Option<f64> {
        use MemSpace::*;
        Some(match (src, dst) {
            (GM, UB) => self.gm_ub,
            (GM, L1) => self.gm_l1,
            (UB, GM) => self.ub_gm,
            (L1, L0A) => self.l1_l0a,
            (L1, L0B) => self.l1_l0b,
            (L0C, GM) => self.l0c_gm,
            (L0C, UB) => self.l0c_ub,
            (UB, L1) => self.ub_l1,
            (UB, UB) => self.ub_ub,
            _ => return None,
        })
    }

    fn all(&self) -> [(&'static str, f64); 9] {
        [
            ("gm_ub", self.gm_ub),
            ("gm_l1", self.gm_l1),
            ("ub_gm", self.ub_gm),
            ("l1_l0a", self.l1_l0a),
            ("l1_l0b", self.l1_l0b),
            ("l0c_gm", self.l0c_gm),
            ("l0c_ub", self.l0c_ub),
            ("ub_l1", self.ub_l1),
            ("ub_ub", self.ub_ub),
        ]
    }
}

/// `mmad`: `cycles = base + (f32 ? f32_factor : 1) * ceil(m/block_m) * ceil(k/(k_block_bytes/elem_bytes)) * ceil(n/block_n)`.
/// `mmv` (the matrix-vector product, `m = 1`): the same with `ceil(m/block_m)` = 1 and
/// `matvec_block_n` in place of `block_n`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct MatmulCost {
    pub base: u64,
    pub block_m: u64,
    pub block_n: u64,
    pub k_block_bytes: u64,
    pub f32_factor: u64,
    /// Output columns a matrix-vector product (`mmv`) produces per K block and cycle.
    /// Ours, not a public figure: one row reads every element of B once, so its rate is
    /// how fast L0B feeds the unit, not the 16 x 16 blocks of the cube; we assume four
    /// 16-column blocks (64) where the tile path (`mmad` with m = 1) spends one cycle per
    /// 16 columns and wastes 15 of its 16 rows.
    pub matvec_block_n: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Costs {
    pub bandwidth: Bandwidth,
    /// Fixed latency of a DMA touching GM, and of an on-chip DMA / move.
    pub dma_startup_gm: u64,
    pub dma_startup_onchip: u64,
    /// Vector cycles per element (`slope * elements + bias`).
    pub vector_slope_f32: f64,
    pub vector_slope_f16: f64,
    pub vector_bias: u64,
    /// Multiplies the slope of exp, log, exp2, log2, sqrt, rsqrt, tanh, sigmoid, gelu, silu, recip, div.
    pub transcendental_factor: f64,
    /// Added per row a reduction folds (the source tile's rows).
    pub reduction_cycles_per_row: u64,
    pub matmul: MatmulCost,
    pub scalar_op_cycles: u64,
    /// What the S pipe pays to hand one instruction to another pipe's queue.
    pub dispatch_cycles: u64,
    /// What a `set_flag`, `wait_flag` (once its flag is set) or `pipe_barrier` occupies
    /// its pipe.
    pub sync_cycles: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Dynamic instructions (every instruction the S pipe walks, loop control included).
    pub max_instructions: u64,
    pub max_cycles: u64,
}

const KIB: u64 = 1024;

fn mem(size: u64, alignment: u64) -> Memory {
    Memory {
        size: Some(size),
        alignment,
    }
}

impl Machine {
    pub fn preset_names() -> &'static [&'static str] {
        &["teach", "a3"]
    }

    pub fn preset(name: &str) -> Option<Machine> {
        match name {
            "teach" => Some(Machine::teach()),
            "a3" => Some(Machine::a3()),
            _ => None,
        }
    }

    /// Small buffers and round, short latencies: easy to overflow and to time by hand.
    /// Eight scalar registers (a3 has 32), so that a nest of loops runs out of them and
    /// emit's spills (`sst` / `sld`) show in the assembly (the `spills` example).
    /// Derived from `a3`: what is not set here (event ids, DMA dimensions, the matmul
    /// formula and matrix-vector rate, transcendental factor, scalar, dispatch and sync costs, the instruction
    /// limit) is a3's.
    pub fn teach() -> Machine {
        let a3 = Machine::a3();
        Machine {
            name: "teach".into(),
            memories: Memories {
                gm: Memory {
                    size: None,
                    alignment: 4,
                },
                // Two thirds of a3's on-chip memory or less, in round numbers: every
                // example fits, and doubling a tile's slots or size overflows quickly.
                ub: mem(128 * KIB, 32),
                l1: mem(256 * KIB, 32),
                l0a: mem(32 * KIB, 512),
                l0b: mem(32 * KIB, 512),
                l0c: mem(64 * KIB, 512),
            },
            queue_depth: QueueDepths::uniform(4),
            scalar_regs: 8,
            clock_ghz: 1.0,
            costs: Costs {
                bandwidth: Bandwidth {
                    gm_ub: 32.0,
                    gm_l1: 32.0,
                    ub_gm: 32.0,
                    l1_l0a: 64.0,
                    l1_l0b: 64.0,
                    l0c_gm: 32.0,
                    l0c_ub: 64.0,
                    ub_l1: 64.0,
                    ub_ub: 64.0,
                },
                dma_startup_gm: 20,
                dma_startup_onchip: 4,
                vector_slope_f32: 1.0 / 16.0,
                vector_slope_f16: 1.0 / 32.0,
                vector_bias: 8,
                reduction_cycles_per_row: 2,
                ..a3.costs
            },
            limits: Limits {
                max_cycles: 1_000_000_000,
                ..a3.limits
            },
            ..a3
        }
    }

    /// Ascend A3-like core. From the public PTO cost model: memory sizes and alignments,
    /// the 1.85 GHz clock, every DMA bandwidth except L0C->UB, and the matmul formula.
    /// Ours (plausible, not measured): the matrix-vector rate (`matvec_block_n` 64),
    /// L0C->UB 140 B, UB->L1 and UB->UB bandwidths, vector
    /// slopes 1/64 (f32) and 1/128 (f16/bf16) cycle per element, bias 25,
    /// transcendental factor 4, 8 cycles per reduced row, DMA startup 200 (GM) / 20
    /// (on chip), queue depths, 1-cycle scalar, dispatch and sync costs, the 32 scalar
    /// registers, and the limits.
    pub fn a3() -> Machine {
        Machine {
            name: "a3".into(),
            memories: Memories {
                gm: Memory {
                    size: None,
                    alignment: 32,
                },
                ub: mem(192 * KIB, 256),
                l1: mem(512 * KIB, 256),
                l0a: mem(64 * KIB, 4 * KIB),
                l0b: mem(64 * KIB, 4 * KIB),
                l0c: mem(128 * KIB, 4 * KIB),
            },
            queue_depth: QueueDepths::uniform(8),
            event_ids_per_pair: 8,
            scalar_regs: crate::isa::NUM_REGS as u32,
            dma_max_dims: 2,
            clock_ghz: 1.85,
            costs: Costs {
                bandwidth: Bandwidth {
                    gm_ub: 100.9,
                    gm_l1: 135.0,
                    ub_gm: 188.46,
                    l1_l0a: 441.0,
                    l1_l0b: 220.5,
                    l0c_gm: 70.0,
                    l0c_ub: 140.0,
                    ub_l1: 140.0,
                    ub_ub: 256.0,
                },
                dma_startup_gm: 200,
                dma_startup_onchip: 20,
                vector_slope_f32: 1.0 / 64.0,
                vector_slope_f16: 1.0 / 128.0,
                vector_bias: 25,
                transcendental_factor: 4.0,
                reduction_cycles_per_row: 8,
                matmul: MatmulCost {
                    base: 6,
                    block_m: 16,
                    block_n: 16,
                    k_block_bytes: 32,
                    f32_factor: 2,
                    matvec_block_n: 64,
                },
                scalar_op_cycles: 1,
                dispatch_cycles: 1,
                sync_cycles: 1,
            },
            limits: Limits {
                max_instructions: crate::limits::DEFAULT_MAX_SIM_INSTRUCTIONS,
                max_cycles: 10_000_000_000,
            },
        }
    }

    /// Parses and validates a machine description (the JSON `tilescope machine --json`
    /// prints).
    pub fn from_json(text: &str) -> Result<Machine, String> {
        use crate::limits::MAX_JSON_BYTES;
        if text.len() > MAX_JSON_BYTES {
            return Err(format!(
                "machine JSON of {} bytes; the limit is {MAX_JSON_BYTES} bytes (MAX_JSON_BYTES)",
                text.len()
            ));
        }
        let m: Machine = serde_json::from_str(text).map_err(|e| format!("machine JSON: {e}"))?;
        m.validate()?;
        Ok(m)
    }

    pub fn to_json(&self) -> String {
        // A struct of plain numbers and strings always serialises.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Every field in range, so the simulator can divide and index by them.
    pub fn validate(&self) -> Result<(), String> {
        let mut errs = Vec::new();
        for space in MemSpace::ALL {
            let m = self.memories.get(space);
            match (space, m.size) {
                (MemSpace::GM, Some(_)) => {
                    errs.push("memories.gm.size must be null (GM is unbounded)".to_string())
                }
                (MemSpace::GM, None) => {}
                (_, None) | (_, Some(0)) => errs.push(format!(
                    "memories.{space}.size must be a positive byte count"
                )),
                (_, Some(s)) if s > 1 << 30 => {
                    errs.push(format!("memories.{space}.size {s} exceeds 1 GiB"))
                }
                _ => {}
            }
            if m.alignment == 0 || !m.alignment.is_power_of_two() || m.alignment > 1 << 20 {
                errs.push(format!(
                    "memories.{space}.alignment {} must be a power of two up to 1 MiB",
                    m.alignment
                ));
            }
        }
        for pipe in Pipe::ALL.into_iter().skip(1) {
            let d = self.queue_depth.get(pipe);
            if !(1..=1024).contains(&d) {
                errs.push(format!(
                    "queue_depth.{} {d} must be in 1..=1024",
                    pipe.name().to_ascii_lowercase()
                ));
            }
        }
        if !(1..=MAX_EVENT_IDS).contains(&self.event_ids_per_pair) {
            errs.push(format!(
                "event_ids_per_pair {} must be in 1..={MAX_EVENT_IDS}",
                self.event_ids_per_pair
            ));
        }
        let regs = crate::isa::NUM_REGS as u32;
        if !(1..=regs).contains(&self.scalar_regs) {
            errs.push(format!(
                "scalar_regs {} must be in 1..={regs}",
                self.scalar_regs
            ));
        }
        if !(1..=MAX_DMA_DIMS).contains(&self.dma_max_dims) {
            errs.push(format!(
                "dma_max_dims {} must be in 1..={MAX_DMA_DIMS}",
                self.dma_max_dims
            ));
        }
        if !(self.clock_ghz.is_finite() && self.clock_ghz > 0.0) {
            errs.push("clock_ghz must be positive".into());
        }
        let c = &self.costs;
        for (name, bw) in c.bandwidth.all() {
            if !(bw.is_finite() && bw >= 1e-3) {
                errs.push(format!(
                    "costs.bandwidth.{name} {bw} must be a positive number of bytes per cycle"
                ));
            }
        }
        for (name, v) in [
            ("vector_slope_f32", c.vector_slope_f32),
            ("vector_slope_f16", c.vector_slope_f16),
            ("transcendental_factor", c.transcendental_factor),
        ] {
            if !(v.is_finite() && (0.0..=1e6).contains(&v)) {
                errs.push(format!(
                    "costs.{name} {v} must be a finite non-negative number"
                ));
            }
        }
        let mm = &c.matmul;
        if mm.block_m == 0 || mm.block_n == 0 || mm.matvec_block_n == 0 || mm.k_block_bytes < 4 {
            errs.push(
                "costs.matmul block_m, block_n, matvec_block_n must be positive and \
                 k_block_bytes at least 4"
                    .into(),
            );
        }
        for (name, v) in [
            ("dma_startup_gm", c.dma_startup_gm),
            ("dma_startup_onchip", c.dma_startup_onchip),
            ("vector_bias", c.vector_bias),
            ("reduction_cycles_per_row", c.reduction_cycles_per_row),
            ("matmul.base", mm.base),
            ("matmul.f32_factor", mm.f32_factor),
            ("scalar_op_cycles", c.scalar_op_cycles),
            ("dispatch_cycles", c.dispatch_cycles),
            ("sync_cycles", c.sync_cycles),
        ] {
            if v > 1 << 32 {
                errs.push(format!("costs.{name} {v} is unreasonably large"));
            }
        }
        if c.scalar_op_cycles == 0 || c.dispatch_cycles == 0 {
            // A zero-cost S pipe could walk an endless program without time advancing.
            errs.push("costs.scalar_op_cycles and costs.dispatch_cycles must be at least 1".into());
        }
        if self.limits.max_instructions == 0 || self.limits.max_cycles == 0 {
            errs.push("limits must be positive".into());
        }
        let ceiling = crate::limits::MAX_SIM_INSTRUCTIONS_CEILING;
        if self.limits.max_instructions > ceiling {
            errs.push(format!(
                "limits.max_instructions {} is over the ceiling of {ceiling} \
                 (MAX_SIM_INSTRUCTIONS_CEILING)",
                self.limits.max_instructions
            ));
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_round_trip_through_json() {
        for name in Machine::preset_names() {
            let m = Machine::preset(name).expect("listed preset exists");
            m.validate().expect("presets are valid");
            let back = Machine::from_json(&m.to_json()).expect("round trip");
            assert_eq!(back, m);
        }
        assert!(Machine::preset("nope").is_none());
    }

    #[test]
    fn from_json_rejects_bad_fields() {
        let mut m = Machine::teach();
        m.memories.ub.size = Some(0);
        m.event_ids_per_pair = 17;
        m.memories.l1.alignment = 3;
        let err = Machine::from_json(&serde_json::to_string(&m).unwrap()).unwrap_err();
        assert!(err.contains("memories.ub.size"), "{err}");
        assert!(err.contains("event_ids_per_pair 17"), "{err}");
        assert!(err.contains("memories.l1.alignment 3"), "{err}");
        assert!(Machine::from_json("{").is_err());
    }

    #[test]
    fn scalar_registers_are_required_and_in_range() {
        // A file written before the field existed is an error naming it, not a default.
        let mut json: serde_json::Value =
            serde_json::from_str(&Machine::teach().to_json()).unwrap();
        json.as_object_mut().unwrap().remove("scalar_regs");
        let err = Machine::from_json(&json.to_string()).unwrap_err();
        assert!(err.contains("missing field `scalar_regs`"), "{err}");
        for bad in [0, 33] {
            let m = Machine {
                scalar_regs: bad,
                ..Machine::teach()
            };
            let err = Machine::from_json(&m.to_json()).unwrap_err();
            assert!(
                err.contains(&format!("scalar_regs {bad} must be in 1..=32")),
                "{err}"
            );
        }
        assert_eq!(Machine::teach().scalar_regs, 8);
        assert_eq!(Machine::a3().scalar_regs, 32);
    }
}
