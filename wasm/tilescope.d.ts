// Generated from the Rust types by `tilescope_wasm::typescript::declarations`.

/**
 * What a compile is asked to do: one type for the CLI's flags, the wasm API's JSON and
 * the playground's toolbar and worker requests (the playground has its own defaults
 * and share-link field names).
 */
export type CompileOptions = {
    /**
     * The kernel to compile; the first in the file when `None`.
     */
    kernel: string | null,
    /**
     * Verify the IR after every pass (always done in debug builds).
     */
    verify: boolean,
    /**
     * Machine preset name (`teach`, `a3`); `None` for the default preset (`a3`).
     */
    preset: string | null,
    /**
     * A full machine description (e.g. read from a JSON preset file); takes precedence
     * over `preset`.
     */
    machine: Machine | null,
    sync: SyncStrategy,
    /**
     * How insert-sync decides that two accesses may overlap (JSON `"alias"`).
     */
    alias: AliasMode,
    /**
     * Let the compiler choose multi-buffering for loops without `@buffers`.
     */
    auto_multi_buffer: boolean,
    /**
     * Optional passes to leave out (`--disable-pass`), to see what each one buys.
     */
    disabled_passes: Array<string>,
};

/**
 * What `compile` returns: core's `CompileResult` with insert-sync's report explained
 * (`sync`), as `tilescope compile --emit json` prints it.
 */
export type CompileResult = {
    /**
     * Names of every kernel in the file, in source order.
     */
    kernels: Array<string>,
    /**
     * The kernel compiled.
     */
    kernel: string | null,
    /**
     * One record per pass that completed, in order; empty on a front-end error.
     */
    passes: Array<PassRecord>,
    diagnostics: Array<Diagnostic>,
    /**
     * The step graph, once lower-to-pipes and emit ran.
     */
    steps: StepGraph | null,
    /**
     * The final program; `asm` is its assembly text.
     */
    program: Program | null,
    asm: string | null,
    /**
     * plan-memory's on-chip buffer table, once the kernel compiled.
     */
    buffers: Array<BufferInfo>,
    /**
     * Why each sync is there, once the kernel compiled.
     */
    sync: SyncExplanation | null,
};

/**
 * What `run` returns: core's `RunResult` with the compile result as `compile`
 * returns it, the outputs as `.npy` bytes, and the fixes of the races.
 */
export type RunResult = {
    cycles: number,
    /**
     * Cycle lower bound: the busiest pipe's busy cycles, or the GM transfers at full
     * rate one after another.
     */
    bound: number,
    /**
     * The bound plus the fill and drain the run's data dependences force (`null` when
     * the trace was cut short).
     */
    path_bound: number | null,
    /**
     * What no program of the kernel beats: its compulsory GM bytes and its products
     * at the machine's peak rates.
     */
    roofline: Roofline,
    pipes: Array<PipeStats>,
    /**
     * Where each pipe's cycles went: busy, or idle and why.
     */
    stalls: Array<PipeStalls>,
    /**
     * Set/wait pairs that executed.
     */
    syncs: number,
    races: Array<Race>,
    /**
     * For each of `races` of a run with `sync: "none"`, the pair `auto` places that
     * orders it (`null` when a chain of other pairs does); empty for a run with sync.
     */
    race_fixes: Array<SyncRow | null>,
    errors: Array<SimError>,
    reference_match: boolean,
    max_abs_err: number,
    /**
     * Each `out` parameter compared with the reference interpreter.
     */
    outputs: Array<RunOutput>,
    trace: Array<TraceEntry>,
    /**
     * On-chip byte ranges `[lo, hi)` each `trace[entry]` read or wrote.
     */
    accesses: Array<TraceAccess>,
    flags: Array<FlagEvent>,
    compile: CompileResult,
    /**
     * Compile, input or interpreter errors (the simulation's are in `errors`).
     */
    diagnostics: Array<Diagnostic>,
};

/**
 * What one optional pass buys: the run with that pass turned off.
 */
export type Ablation = {
    /**
     * The pass left out.
     */
    pass: string,
    cycles: number,
    /**
     * Set/wait pairs that executed.
     */
    syncs: number,
    /**
     * On-chip bytes plan-memory allocated (every slot of every buffer).
     */
    peak_bytes: number,
    matches_reference: boolean,
    /**
     * Why the run failed, when it did (a capacity error, say).
     */
    error: string | null,
};

export type Machine = {
    name: string,
    memories: Memories,
    /**
     * Instructions a pipe's queue holds before the S pipe stalls dispatching to it.
     */
    queue_depth: QueueDepths,
    /**
     * Binary event flags per (src pipe, dst pipe) pair.
     */
    event_ids_per_pair: number,
    /**
     * Scalar registers `r0 .. r{scalar_regs - 1}` of the S pipe (at most the 32 the ISA
     * encodes). emit allocates them and spills what does not fit to the 64 spill slots;
     * the simulator rejects a program that names a register past them.
     */
    scalar_regs: number,
    /**
     * Dimensions one DMA descriptor may have.
     */
    dma_max_dims: number,
    clock_ghz: number,
    costs: Costs,
    limits: Limits,
};

/**
 * A kernel of the example gallery.
 */
export type Example = {
    /**
     * File stem: `softmax` for `softmax.tile`.
     */
    name: string,
    title: string,
    /**
     * The teaching text of the comment lines the kernel starts with.
     */
    description: string,
    source: string,
};

export type Lesson = {
    /**
     * 1-based position in the track, from the file order; a file may not set it.
     */
    number: number,
    /**
     * The file stem, e.g. `01-load-store`, from the file name; a file may not set it.
     */
    id: string,
    title: string,
    idea: string,
    task: string,
    kind: LessonKind,
    starter: string,
    solution: string,
    hints: Array<string>,
    read_and_run: boolean,
    preset: string,
    auto_buffers: boolean,
    budgets: Budgets,
};

/**
 * The verdict. `passed` is every check except `cycles`, which only says how far the
 * run is from the next medal.
 */
export type Grade = {
    passed: boolean,
    medal: Medal | null,
    /**
     * Simulated cycles of the slowest input set, when every set ran to its end.
     */
    cycles: number | null,
    checks: Array<Check>,
};

export type AccessKind = "read" | "write";

/**
 * `region[base + offset]`, a byte address.
 */
export type Addr = {
    region: Region,
    base: Reg | null,
    offset: number,
};

/**
 * What `insert-sync` knows about which accesses can touch the same bytes.
 */
export type AliasMode = "precise" | "coarse";

export type AluOp = "Add" | "Sub" | "Mul" | "Div" | "Rem" | "Min" | "Max";

/**
 * Which position an arg-reduction finds: of the largest or of the smallest lane.
 */
export type ArgOp = "Max" | "Min";

/**
 * Bytes per cycle of each data path.
 */
export type Bandwidth = {
    gm_ub: number,
    gm_l1: number,
    ub_gm: number,
    l1_l0a: number,
    l1_l0b: number,
    l0c_gm: number,
    l0c_ub: number,
    ub_l1: number,
    ub_ub: number,
};

export type BinOp = "Add" | "Sub" | "Mul" | "Div" | "Max" | "Min" | "And" | "Or" | "Xor" | "Shl" | "Shr" | "FloorDiv" | "Mod";

/**
 * An `if` region's `loop` instruction and its condition.
 */
export type Branch = {
    instr: number,
    cond: string,
};

/**
 * Simulated cycles (the worst over the grader's input sets) a correct submission must
 * stay within for each medal above bronze.
 */
export type Budgets = {
    silver: number,
    gold: number,
};

/**
 * One on-chip buffer of the compiled kernel: what the playground lists at the cursor.
 */
export type BufferInfo = {
    /**
     * The tile's printed IR name.
     */
    name: string,
    space: MemSpace,
    /**
     * Bytes of one slot.
     */
    bytes: number,
    /**
     * Byte address of each slot in `space` (two or more when multi-buffered).
     */
    addrs: Array<number>,
    /**
     * Where its first tile is defined (`lowered::Buffer::span`).
     */
    span: Span | null,
};

/**
 * One thing the grader verified, with a message specific enough to act on.
 */
export type Check = {
    name: string,
    passed: boolean,
    message: string,
};

/**
 * A comparison, giving a mask. NaN compares as numpy does (and IEEE): unequal to
 * everything, so only `!=` holds.
 */
export type CmpOp = "lt" | "le" | "gt" | "ge" | "eq" | "ne";

export type Costs = {
    bandwidth: Bandwidth,
    /**
     * Fixed latency of a DMA touching GM, and of an on-chip DMA / move.
     */
    dma_startup_gm: number,
    dma_startup_onchip: number,
    /**
     * Vector cycles per element (`slope * elements + bias`).
     */
    vector_slope_f32: number,
    vector_slope_f16: number,
    vector_bias: number,
    /**
     * Multiplies the slope of exp, log, exp2, log2, sqrt, rsqrt, tanh, sigmoid, gelu, silu, recip, div.
     */
    transcendental_factor: number,
    /**
     * Added per row a reduction folds (the source tile's rows).
     */
    reduction_cycles_per_row: number,
    matmul: MatmulCost,
    scalar_op_cycles: number,
    /**
     * What the S pipe pays to hand one instruction to another pipe's queue.
     */
    dispatch_cycles: number,
    /**
     * What a `set_flag`, `wait_flag` (once its flag is set) or `pipe_barrier` occupies
     * its pipe.
     */
    sync_cycles: number,
};

export type DType = "f32" | "f16" | "bf16" | "i32" | "i8" | "u8" | "mask";

export type Diagnostic = {
    severity: Severity,
    message: string,
    /**
     * Primary location; `None` for errors with no source location (e.g. a bad .npy file).
     */
    span: Span | null,
    labels: Array<Label>,
    notes: Array<string>,
};

/**
 * One DMA dimension, strides in elements.
 */
export type DmaDim = {
    extent: Val,
    src_stride: number,
    dst_stride: number,
};

export type FlagEvent = {
    src: Pipe,
    dst: Pipe,
    id: number,
    set_cycle: number,
    /**
     * `None` if no wait consumed it.
     */
    wait_cycle: number | null,
    set_instr: number,
    wait_instr: number | null,
};

/**
 * What one `wait_flag` instruction cost its pipe over the run.
 */
export type FlagStall = {
    /**
     * The `wait_flag`'s static instruction index.
     */
    wait_instr: number,
    src: Pipe,
    dst: Pipe,
    id: number,
    /**
     * Cycles waited in all, over every time it ran.
     */
    cycles: number,
    /**
     * How often it waited at all.
     */
    times: number,
    /**
     * Its longest single wait.
     */
    longest: Stretch,
};

export type Instr = {
    op: Op,
    prov: Provenance,
};

/**
 * A static instruction named in a report.
 */
export type InstrRef = {
    index: number,
    text: string,
    pipe: Pipe,
    prov: Provenance,
};

/**
 * One line of a pass's printed IR.
 */
export type IrLine = {
    /**
     * The source span of what the line prints.
     */
    span: Span | null,
    /**
     * The instructions of the final program (indices) the line became: empty when the
     * compile stopped before emit, for lines that print no op, and for dumps whose ops
     * a later pass changed.
     */
    instrs: Array<number>,
};

/**
 * A secondary location that explains the primary one ("first defined here").
 */
export type Label = {
    span: Span,
    message: string,
};

export type LessonKind = "kernel" | "asm";

export type Limits = {
    /**
     * Dynamic instructions (every instruction the S pipe walks, loop control included).
     */
    max_instructions: number,
    max_cycles: number,
};

/**
 * `mmad`: `cycles = base + (f32 ? f32_factor : 1) * ceil(m/block_m) * ceil(k/(k_block_bytes/elem_bytes)) * ceil(n/block_n)`.
 * `mmv` (the matrix-vector product, `m = 1`): the same with `ceil(m/block_m)` = 1 and
 * `matvec_block_n` in place of `block_n`.
 */
export type MatmulCost = {
    base: number,
    block_m: number,
    block_n: number,
    k_block_bytes: number,
    f32_factor: number,
    /**
     * Output columns a matrix-vector product (`mmv`) produces per K block and cycle.
     * Ours, not a public figure: one row reads every element of B once, so its rate is
     * how fast L0B feeds the unit, not the 16 x 16 blocks of the cube; we assume four
     * 16-column blocks (64) where the tile path (`mmad` with m = 1) spends one cycle per
     * 16 columns and wastes 15 of its 16 rows.
     */
    matvec_block_n: number,
};

export type Medal = "bronze" | "silver" | "gold";

/**
 * Where a tile or tensor lives.
 */
export type MemSpace = "GM" | "UB" | "L1" | "L0A" | "L0B" | "L0C";

export type Memories = {
    gm: Memory,
    ub: Memory,
    l1: Memory,
    l0a: Memory,
    l0b: Memory,
    l0c: Memory,
};

export type Memory = {
    /**
     * Capacity in bytes; `None` only for GM (unbounded: tensors are as large as declared).
     */
    size: number | null,
    /**
     * Required alignment of every operand's base address, in bytes (a power of two).
     */
    alignment: number,
};

export type Op = { "Mov": { dst: Reg, src: Val, } } | { "Alu": { op: AluOp, dst: Reg, a: Reg, b: Val, } } | { "Sld": { dst: Reg, slot: number, } } | { "Sst": { src: Reg, slot: number, } } | { "Sldg": { dtype: DType, dst: Reg, src: Addr, } } | { "Loop": { counter: Reg, count: Val, } } | "EndLoop" | { "Dma": { dtype: DType, dst: Addr, src: Addr, dims: Array<DmaDim>, } } | { "Gather": { dtype: DType, dst: Addr, src: Addr, index: Addr, rows: Val, len: Val, src_stride: number, dst_stride: number, } } | { "DmaPad": { dtype: DType, dst: Addr, src: Addr, rows: Val, len: Val, left: Val, width: number, src_stride: number, dst_stride: number, value: number, } } | { "Scatter": { dtype: DType, dst: Addr, src: Addr, index: Addr, rows: Val, len: Val, src_stride: number, dst_stride: number, add: boolean, } } | { "Mov2d": { dtype: DType, dst: Tile, src: Tile, transpose: boolean, } } | { "Mmad": { dtype: DType, c: Addr, a: Addr, b: Addr, m: Val, k: Val, n: Val, acc: Val, } } | { "Mmv": { dtype: DType, c: Addr, a: Addr, b: Addr, k: Val, n: Val, acc: Val, } } | { "Fix": { dtype: DType, dst: Tile, src: Tile, } } | { "VUnary": { op: UnOp, dtype: DType, dst: Tile, src: Tile, } } | { "VBinary": { op: BinOp, dtype: DType, dst: Tile, a: VSrc, b: VSrc, } } | { "VReduce": { op: RedOp, dtype: DType, axis: number, dst: Tile, src: Tile, } } | { "VArgReduce": { op: ArgOp, dtype: DType, axis: number, dst: Tile, src: Tile, } } | { "VCast": { to: DType, from: DType, dst: Tile, src: Tile, } } | { "VDup": { dtype: DType, dst: Tile, value: VSrc, } } | { "VCopy": { dtype: DType, dst: Tile, src: Tile, } } | { "VCmp": { op: CmpOp, dtype: DType, dst: Tile, a: VSrc, b: VSrc, } } | { "VSel": { dtype: DType, dst: Tile, mask: Tile, a: VSrc, b: VSrc, } } | { "VIota": { dtype: DType, axis: number, dst: Tile, } } | { "SetFlag": { src: Pipe, dst: Pipe, id: Val, } } | { "WaitFlag": { src: Pipe, dst: Pipe, id: Val, } } | { "Barrier": { pipe: Pipe | null, } };

/**
 * A pass's note on what it left as written and why, at the source it concerns.
 */
export type PassNote = {
    span: Span | null,
    /**
     * `LINE:COL` of `span`.
     */
    at: string,
    message: string,
};

/**
 * What the manager records after each pass.
 */
export type PassRecord = {
    name: string,
    description: string,
    /**
     * The printed IR after the pass.
     */
    ir: string,
    /**
     * Each line of `ir`: its source span and the final instructions it became.
     */
    lines: Array<IrLine>,
    /**
     * The text differs from the previous pass's.
     */
    changed: boolean,
    micros: number,
    /**
     * What the pass left as written and why.
     */
    notes: Array<PassNote>,
};

/**
 * The decoupled pipes of the core. Each executes its own instructions in order.
 */
export type Pipe = "S" | "MTE2" | "MTE1" | "M" | "V" | "FIX" | "MTE3";

/**
 * One pipe's cycles by what it did (`SimResult::stalls`):
 * `busy + shared_bandwidth + flag_wait + barrier + queue_full + not_issued` is the
 * run's cycles.
 */
export type PipeStalls = {
    pipe: Pipe,
    /**
     * Executing instructions, at the rate each would run alone (DMA startup included).
     */
    busy: number,
    /**
     * Executing, but longer because MTE2 and MTE3 shared GM bandwidth.
     */
    shared_bandwidth: number,
    /**
     * Idle with a `wait_flag` at its queue's head whose flag was not yet set.
     */
    flag_wait: number,
    /**
     * Idle while the S pipe was held at a `pipe_barrier ALL` (for the S pipe: held there).
     */
    barrier: number,
    /**
     * Idle while the S pipe could not dispatch because a pipe's queue was full (for the
     * S pipe: blocked so).
     */
    queue_full: number,
    /**
     * Idle with nothing issued to it otherwise: the S pipe was busy with other work, or
     * had nothing more for this pipe (for the S pipe: after its last instruction).
     */
    not_issued: number,
    /**
     * The longest single idle stretch, where the timeline shows it best.
     */
    longest_idle: Stretch | null,
    /**
     * The flag waits, by `wait_flag` instruction, longest in total first.
     */
    flags: Array<FlagStall>,
};

export type PipeStats = {
    pipe: Pipe,
    /**
     * Cycles the pipe was executing something.
     */
    busy: number,
    instructions: number,
    /**
     * The part of `busy` that GM transfers took longer because MTE2 and MTE3 shared
     * the bandwidth: it depends on how the schedule overlapped them.
     */
    shared_bandwidth: number,
};

export type Program = {
    tensors: Array<TensorDecl>,
    instrs: Array<Instr>,
    /**
     * Comments on instructions by index, printed after `;` (emit names the value each
     * `sst` / `sld` spills); the parser skips comments, so they do not read back.
     */
    notes: Array<[number, string]>,
    /**
     * The `loop`s that are `if` regions (a trip count of 0 or 1), in instruction
     * order, with their conditions in source names: the simulator counts which way
     * each went, and the printer writes the condition as a comment.
     */
    branches: Array<Branch>,
};

/**
 * Where an instruction came from: the kernel source span, the step (of form-steps) and
 * the tile-IR op it implements.
 */
export type Provenance = {
    span: Span | null,
    step: number | null,
    /**
     * The index of the op, in the tile IR that lower-to-pipes read, that this
     * instruction implements; `None` for what the compiler added around the ops (sync,
     * loop control, spills) and for hand-written assembly. The assembly text does not
     * carry it. (Always serialised: the playground's postcard messages have no
     * optional fields.)
     */
    op: number | null,
};

export type QueueDepths = {
    mte2: number,
    mte1: number,
    m: number,
    v: number,
    fix: number,
    mte3: number,
};

export type Race = {
    first: RaceAccess,
    second: RaceAccess,
    space: MemSpace,
    /**
     * Overlapping bytes `[start, end)` (of the tensor, for GM).
     */
    overlap: [number, number],
    /**
     * The GM tensor's name, when the race is in GM; for an on-chip race in a compiled
     * kernel's run, the tile there as its source names it.
     */
    buffer: string | null,
    message: string,
    /**
     * How many dynamic instances of this pair of static instructions raced.
     */
    count: number,
};

export type RaceAccess = {
    instr: InstrRef,
    kind: AccessKind,
};

export type RedOp = "Sum" | "Max" | "Min";

export type Reg = number;

/**
 * Where an address points: an on-chip buffer or a declared GM tensor (index into
 * [`Program::tensors`]).
 */
export type Region = { "Buf": MemSpace } | { "Tensor": number };

/**
 * A pair insert-sync found redundant, and the placed pairs (rows of [`sync_rows`])
 * whose chain of pipes orders what it would have.
 */
export type RemovedRow = {
    src: Pipe,
    dst: Pipe,
    kind: string,
    buffer: string | null,
    producer: Site,
    consumer: Site,
    covered_by: Array<number>,
};

/**
 * The kernel's roofline: the cycles its compulsory GM traffic and its products take at
 * the machine's peak rates. Beside `bound`, which judges the schedule of the program
 * the compiler emitted, it says how far the kernel is from the machine itself.
 */
export type Roofline = {
    /**
     * Each element the reference loaded from an input, once.
     */
    gm_read_bytes: number,
    /**
     * Each element the reference stored to an output, once.
     */
    gm_write_bytes: number,
    /**
     * Those bytes at the fastest GM paths: reads and writes through MTE2 and MTE3
     * share GM bandwidth, and a kernel with products may write some of its outputs
     * through FIX beside them.
     */
    gm_cycles: number,
    /**
     * The multiply-accumulates of the kernel's products (`@`) over their valid extents.
     */
    macs: number,
    /**
     * Those at the matrix unit's peak rate (a full `block_m x K block x block_n` block
     * per cycle, `f32_factor` times slower for f32).
     */
    matrix_cycles: number,
    /**
     * The larger of the two.
     */
    cycles: number,
};

/**
 * One `out` tensor of a run.
 */
export type RunOutput = {
    name: string,
    matches: boolean,
    max_abs_err: number,
    mismatches: number,
    /**
     * The simulated tensor's element type and shape.
     */
    dtype: DType | null,
    shape: Array<number>,
    /**
     * The simulated tensor as a `.npy` file.
     */
    npy: Uint8Array,
};

export type Severity = "error" | "warning" | "note";

export type SimError = {
    kind: SimErrorKind,
    message: string,
    instr: InstrRef | null,
    /**
     * Other instructions involved (the earlier set, the blocked waits).
     */
    related: Array<InstrRef>,
    cycle: number,
};

export type SimErrorKind = "invalid" | "memory" | "index" | "scalar" | "flag_already_set" | "flag_left_set" | "event_id_range" | "deadlock" | "instruction_limit" | "cycle_limit";

/**
 * A source position of one side of a pair.
 */
export type Site = {
    pipe: Pipe,
    /**
     * 1-based; `None` when the instruction has no source span.
     */
    line: number | null,
    col: number | null,
};

/**
 * A half-open byte range `[start, end)` into the kernel source.
 */
export type Span = {
    start: number,
    end: number,
};

export type StallReason = { "kind": "QueueFull", cycles: number, } | { "kind": "WaitFlag", src: Pipe, dst: Pipe, id: number, cycles: number, } | { "kind": "Bandwidth", cycles: number, } | { "kind": "Barrier", cycles: number, };

export type StepEdge = {
    from: number,
    to: number,
    kind: StepEdgeKind,
    /**
     * Sync edges: the flag's pipes and event id (`None` for a dynamic id).
     */
    flag: [Pipe, Pipe, number | null] | null,
    /**
     * The wait precedes the set in program order: the edge crosses a loop back edge.
     */
    back: boolean,
};

export type StepEdgeKind = "data" | "loop_carried" | "sync";

export type StepGraph = {
    nodes: Array<StepNode>,
    edges: Array<StepEdge>,
};

export type StepNode = {
    id: number,
    /**
     * `load, compute, store` or a subset.
     */
    kind: string,
    pipes: Array<Pipe>,
    /**
     * Buffer names (plan-memory slabs) and GM tensors read and written.
     */
    reads: Array<string>,
    writes: Array<string>,
    span: Span,
    /**
     * The loop variable of the innermost enclosing loop, if any.
     */
    loop_var: string | null,
    /**
     * The conditions of the `if` branches around the step inside its innermost loop,
     * joined with `&&` (an `else` is `!(...)`), with source names: the step runs in
     * an iteration only when this holds.
     */
    branch: string | null,
};

/**
 * Idle cycles `[from, from + cycles)`.
 */
export type Stretch = {
    from: number,
    cycles: number,
};

/**
 * insert-sync's report for people (`tilescope::explain`): the JSON `sync` object of
 * the CLI.
 */
export type SyncExplanation = {
    strategy: SyncStrategy,
    /**
     * The alias analysis the pairs were placed with.
     */
    alias: AliasMode,
    /**
     * Every set/wait pair placed, with the hazard it orders, its buffer, the producer's
     * and consumer's pipes and source lines, and its `set_flag` / `wait_flag` positions
     * in `program`.
     */
    pairs: Array<SyncRow>,
    /**
     * Pairs found redundant, each with the pairs (indices into `pairs`) covering it.
     */
    removed: Array<RemovedRow>,
    /**
     * Every event-id reduction and barrier fallback, as sentences.
     */
    notes: Array<string>,
};

/**
 * The bytes a hazard's buffer occupies: `[start, end)` of each slot in its space.
 */
export type SyncRegion = {
    space: MemSpace,
    slots: Array<[number, number]>,
};

/**
 * One set/wait pair as users read it.
 */
export type SyncRow = {
    src: Pipe,
    dst: Pipe,
    /**
     * The first event id (for a dynamic pair, the id of slot 0).
     */
    event: number,
    /**
     * Every id the pair uses: one, or one per slot for a dynamic pair.
     */
    events: Array<number>,
    /**
     * The id follows the slot of the buffer the hazard is on.
     */
    dynamic: boolean,
    /**
     * On the slots of a `buffers` tile: the set's id is `event + (counter +
     * slot_offsets[0]) % slots`, the wait's with `slot_offsets[1]`: the producer's and
     * the consumer's slot index on that buffer (`b[(i + 1) % 2]` has offset 1).
     */
    slot_offsets: [number, number] | null,
    /**
     * `RAW`, `WAR`, `WAW`, or `flag-reuse` (a wait ordered before the next set of the
     * same flag).
     */
    kind: string,
    /**
     * The buffer (by its tile's source name) or tensor the hazard is on.
     */
    buffer: string | null,
    /**
     * The bytes of each of the buffer's slots (none for a tensor).
     */
    region: SyncRegion | null,
    producer: Site,
    consumer: Site,
    /**
     * Orders a dependence across a loop's back edge (primed before the loop, drained
     * after it).
     */
    back_edge: boolean,
    /**
     * Positions of the pair's `set_flag` and `wait_flag` in the final program.
     */
    set_index: number | null,
    wait_index: number | null,
    /**
     * The steps of the producer and the consumer: a view joins them with the step
     * graph (whether one runs only inside an `if`).
     */
    producer_step: number | null,
    consumer_step: number | null,
};

/**
 * How `insert-sync` (pass 10) orders cross-pipe hazards.
 */
export type SyncStrategy = "auto" | "barrier" | "none";

export type TensorDecl = {
    name: string,
    dtype: DType,
    shape: Array<number>,
};

/**
 * A 2-D view: `rows x cols` elements, rows `stride` elements apart.
 */
export type Tile = {
    addr: Addr,
    rows: Val,
    cols: Val,
    stride: number,
};

/**
 * An on-chip byte range `[lo, hi)` that trace entry `entry` read or wrote (the bounding
 * range, for a strided operand). A side table rather than a `TraceEntry` field keeps
 * the entry small and `Copy`; most entries (S pipe, flags) have none.
 */
export type TraceAccess = {
    /**
     * Index into `SimResult::trace`.
     */
    entry: number,
    space: MemSpace,
    lo: number,
    hi: number,
    write: boolean,
};

export type TraceEntry = {
    /**
     * Static instruction index into `Program::instrs`.
     */
    index: number,
    pipe: Pipe,
    /**
     * When the S pipe handed it to its pipe (equals `start` for S instructions).
     */
    dispatch: number,
    start: number,
    end: number,
    stall: StallReason | null,
    prov: Provenance,
};

export type UnOp = "Exp" | "Log" | "Exp2" | "Log2" | "Sqrt" | "Rsqrt" | "Abs" | "Neg" | "Relu" | "Sigmoid" | "Tanh" | "Gelu" | "Silu" | "Recip";

/**
 * A vector source operand.
 */
export type VSrc = { "Tile": Tile } | { "Float": number } | { "Int": number } | { "Reg": Reg };

/**
 * A scalar operand: immediate or register.
 */
export type Val = { "Imm": number } | { "Reg": Reg };
