//! One small source per static rule (`docs/language.md` and the front end's own rules),
//! each with a phrase its diagnostic must contain; the rendered text of all of them is a
//! golden.

mod common;

use tilescope::diag::render;
use tilescope::front;

/// A kernel with the usual parameters around `body`.
fn k(body: &str) -> String {
    format!(
        "kernel k(x: f32[64, 32], y: out f32[64, 32], h: f16[64, 32], n: i32[64, 32], idx: i32[8], z: f32[64, 32]) {{\n{body}\n}}\n"
    )
}

struct Case {
    name: &'static str,
    source: String,
    kernel: Option<&'static str>,
    expect: &'static str,
}

fn case(name: &'static str, source: impl Into<String>, expect: &'static str) -> Case {
    Case {
        name,
        source: source.into(),
        kernel: None,
        expect,
    }
}

fn cases() -> Vec<Case> {
    let deep = format!("const X = {}1{};", "(".repeat(200), ")".repeat(200));
    let nested_loops = (0..17).fold("let t = load x[0 .. 1, :];".to_string(), |body, i| {
        format!("for v{i} in 0..1 {{ {body} }}")
    });
    vec![
        // Lexical and syntax.
        case(
            "unexpected_character",
            k("let t = load x[:, :] # 2;"),
            "unexpected character `#`",
        ),
        case(
            "integer_too_large",
            "const A = 99999999999999999999;",
            "too large",
        ),
        case(
            "expected_expression",
            k("let t = ;"),
            "expected an expression",
        ),
        case(
            "missing_semicolon",
            k("let t = load x[:, :]\nstore y[:, :] = t;"),
            "test.tile:2:21: error: expected `;` after this statement, found `store`",
        ),
        // What a numpy user writes first.
        case(
            "numpy_slice",
            k("for r in 0..64 step 8 { let t = load x[r:r + 8, :]; store y[r .. r + 8, :] = t; }"),
            "ranges are written with `..`, not numpy's `:`: write `r .. r + 8`",
        ),
        case(
            "numpy_axis_argument",
            k("let t = load x[:, :]; store y[:, 0 .. 1] = sum(t, 1);"),
            "write `sum(t, axis=1)`, not a second argument",
        ),
        case(
            "attribute_before_its_loop",
            k("@buffers(2)\nfor r in 0..64 step 8 {\n    let t = load x[r .. r + 8, :];\n    store y[r .. r + 8, :] = t;\n}"),
            "`@buffers(2)` goes after the loop's range",
        ),
        case(
            "power_of_a_tile_exponent",
            k("let t = load x[:, :];\nstore y[:, :] = t ** t;"),
            "the exponent of `**` must be a constant",
        ),
        case(
            "power_too_large",
            k("let t = load x[:, :];\nstore y[:, :] = t ** 9;"),
            "`**` takes an integer exponent from -8 to 8, but `9` is 9",
        ),
        case(
            "power_negative_of_integers",
            k("let t = load n[:, :];\nstore y[:, :] = (t ** -2) as f32;"),
            "an i32 tile to a negative power is not an integer",
        ),
        case(
            "power_fractional_of_integers",
            k("let t = load n[:, :];\nstore y[:, :] = (t ** 0.5) as f32;"),
            "an i32 tile takes `**` by an integer from 0 to 8",
        ),
        case(
            "bit_operation_on_floats",
            k("let t = load x[:, :];\nstore y[:, :] = t & 3;"),
            "`&` needs i32 tiles (or masks, for `& | ^`), but this one is f32[64, 32]",
        ),
        case(
            "shift_by_the_width",
            k("let t = load n[:, :];\nstore y[:, :] = (t << 32) as f32;"),
            "a shift amount is an integer from 0 to 31 (an i32 has 32 bits), but `32` is 32",
        ),
        case(
            "shift_of_a_mask",
            k("let t = load x[:, :];\nstore y[:, :] = where((t > 0.0) << (t > 1.0), t, 0.0);"),
            "`<<` is not defined on masks",
        ),
        case(
            "mask_and_integer",
            k("let t = load x[:, :];\nstore y[:, :] = where((t > 0.0) & load n[:, :], t, 0.0);"),
            "`&` combines two masks or two i32 values, but these are mask[64, 32] and i32[64, 32]",
        ),
        case(
            "not_of_a_float",
            k("let t = load x[:, :];\nstore y[:, :] = ~t;"),
            "`~` needs an i32 tile or a mask, but this one is f32[64, 32]",
        ),
        case(
            "non_ascii_name",
            k("let tëst = load x[:, :];\nstore y[:, :] = tëst;"),
            "names are ASCII letters, digits and `_`; `tëst` has `ë`",
        ),
        case(
            "unclosed_block",
            "kernel k(x: f32[4]) {\n let t = load x[:];\n",
            "unclosed block",
        ),
        case(
            "expected_item",
            "let t = 1;",
            "expected `const` or `kernel`",
        ),
        case("nesting_limit", deep, "nested too deeply"),
        case("bad_suffix", k("let t = (load x[:, :]).X;"), "only `.T`"),
        case(
            "unknown_keyword_argument",
            k("let t = sum(load x[:, :], dim=1);"),
            "unknown keyword argument",
        ),
        case(
            "bad_dtype",
            "kernel k(x: f64[4]) { }",
            "expected an element type",
        ),
        case(
            "source_too_large",
            " ".repeat(tilescope::limits::MAX_SOURCE_BYTES + 1),
            "the limit is",
        ),
        // Items.
        case("no_kernel", "const A = 1;", "the file has no kernel"),
        Case {
            name: "unknown_kernel",
            source: "kernel a(x: f32[4]) { }\nkernel b(x: f32[4]) { }".into(),
            kernel: Some("c"),
            expect: "available kernels: a, b",
        },
        case(
            "duplicate_kernel",
            "kernel a(x: f32[4]) { }\nkernel a(x: f32[4]) { }",
            "defined twice",
        ),
        // Constants.
        case(
            "const_overflow",
            format!("const A = {} + 1;\n{}", i64::MAX, k("")),
            "overflows",
        ),
        case(
            "const_division_by_zero",
            format!("const A = 4 // (2 - 2);\n{}", k("")),
            "division by zero",
        ),
        case(
            "const_before_definition",
            format!("const A = B;\nconst B = 1;\n{}", k("")),
            "used before its definition",
        ),
        case(
            "const_duplicate",
            format!("const A = 1;\nconst A = 2;\n{}", k("")),
            "defined twice",
        ),
        case(
            "const_float",
            k("for i in 0..1.5 { }"),
            "expected an integer constant",
        ),
        case(
            "const_float_as_extent",
            "const A = 1.5;\nkernel k(x: f32[A]) { }",
            "`A` is a float constant (1.5), but an integer is needed here",
        ),
        case(
            "const_float_floor_division",
            format!("const A = 1.5 // 2;\n{}", k("")),
            "a float constant is built with `+ - * / **`, not `//`",
        ),
        case(
            "const_from_tile",
            k("let t = load x[:, :];\nfor i in 0..t { }"),
            "a constant is needed",
        ),
        // Parameters.
        case(
            "param_duplicate",
            "kernel k(x: f32[4], x: f32[4]) { }",
            "declared twice",
        ),
        case(
            "param_extent_not_positive",
            "kernel k(x: f32[4, 0]) { }",
            "must be positive",
        ),
        case(
            "tensor_too_large",
            "kernel k(x: f32[8192, 4096]) { }",
            "at most 2^24",
        ),
        // Names.
        case(
            "unknown_name",
            k("let t = load x[:, :];\nlet u = exp(tt);"),
            "unknown name `tt`",
        ),
        case("param_as_value", k("let t = x + 1.0;"), "load x[...]"),
        case(
            "shadowing_in_block",
            k("let t = load x[:, :];\nlet t = load z[:, :];"),
            "already defined in this block",
        ),
        case(
            "shadowing_param",
            k("let x = load z[:, :];"),
            "already a kernel parameter",
        ),
        case(
            "loop_var_redefined",
            k("for i in 0..4 { let i = load x[:, :]; }"),
            "already defined",
        ),
        // Loops.
        case(
            "step_not_positive",
            k("for i in 0..4 step 0 { }"),
            "step must be positive",
        ),
        case(
            "buffers_too_few",
            k("for i in 0..4 @buffers(1) { }"),
            "2 to 16",
        ),
        case(
            "buffers_too_many",
            k("for i in 0..4 @buffers(17) { }"),
            "2 to 16",
        ),
        case(
            "buffers_twice",
            k("for i in 0..4 @buffers(2) @buffers(2) { }"),
            "given twice",
        ),
        // Explicit multi-buffers.
        case(
            "slots_too_few",
            k("let b = buffers(f32[8, 32], 1);"),
            "the number of slots must be 2 to 16",
        ),
        case(
            "slots_too_many",
            k("let b = buffers(f32[8, 32], 17);"),
            "the number of slots must be 2 to 16",
        ),
        case(
            "slot_index_out_of_range",
            k("let b = buffers(f32[8, 32], 2);\nb[2] = load x[0 .. 8, :];"),
            "outside 0..2",
        ),
        case(
            "slot_index_reaches_out_of_range",
            k("let b = buffers(f32[8, 32], 2);\nfor i in 0..4 { b[i % 4] = load x[0 .. 8, :]; }"),
            "reaches 3, outside 0..2",
        ),
        case(
            "slot_read_before_write",
            k("let b = buffers(f32[8, 32], 2);\nb[0] = load x[0 .. 8, :];\nstore y[0 .. 8, :] = b[1];"),
            "slot 1 of `b` is read before any statement writes it",
        ),
        case(
            "slot_tile_without_slot",
            k("let b = buffers(f32[8, 32], 2);\nb[0] = load x[0 .. 8, :];\nstore y[0 .. 8, :] = b;"),
            "read one with `b[slot]`",
        ),
        case(
            "slot_write_type_mismatch",
            k("let b = buffers(f32[8, 32], 2);\nb[0] = load x[:, :];"),
            "a slot of `b` holds f32[8, 32], but the value has type f32[64, 32]",
        ),
        case(
            "slot_tile_assigned_whole",
            k("let b = buffers(f32[8, 32], 2);\nb = load x[0 .. 8, :];"),
            "write one with `b[slot] = ...`",
        ),
        case(
            "slot_tile_updated_whole",
            k("let b = buffers(f32[8, 32], 2);\nb += load x[0 .. 8, :];"),
            "write one with `b[slot] = ...`",
        ),
        case(
            "slot_written_with_update",
            k("let b = buffers(f32[8, 32], 2);\nb[0] += load x[0 .. 8, :];"),
            "a slot is written whole",
        ),
        case(
            "slot_of_a_plain_tile",
            k("let t = load x[0 .. 8, :];\nt[0] = t;"),
            "`t` is not a `buffers(...)` tile",
        ),
        case(
            "buffers_in_an_expression",
            k("store y[0 .. 8, :] = buffers(f32[8, 32], 2);"),
            "declares a tile with slots",
        ),
        case(
            "slot_write_in_a_tail_loop",
            k("let b = buffers(f32[8, 32], 2);\nfor i in 0..60 step 8 { b[0] = load x[i .. i + 8, :]; }"),
            "has a tail iteration",
        ),
        case(
            "error_in_an_empty_loop",
            k("for i in 4..4 { store y[0 .. 8, :] = nothing; }"),
            "unknown name `nothing`",
        ),
        case(
            "slot_written_only_in_an_empty_loop",
            k("let b = buffers(f32[8, 32], 2);\nfor i in 8..0 { b[0] = load x[0 .. 8, :]; }\nstore y[0 .. 8, :] = b[0];"),
            "is read before any statement writes it",
        ),
        case(
            "binary_literal_with_a_bad_digit",
            k("for i in 0..0b102 { }"),
            "`2` is not a binary digit",
        ),
        case(
            "hex_literal_without_digits",
            k("for i in 0..0x { }"),
            "needs hexadecimal digits",
        ),
        case(
            "hex_literal_too_large",
            k("for i in 0..0x8000_0000_0000_0000 { }"),
            "is too large",
        ),
        case(
            "unknown_attribute",
            k("for i in 0..4 @unroll(2) { }"),
            "unknown attribute `@unroll`",
        ),
        case(
            "iteration_limit",
            k("for i in 0..1000 { for j in 0..1001 { let t = load x[0, :]; } }"),
            "the limit is 1000000",
        ),
        case(
            "loop_nesting_limit",
            k(&nested_loops),
            "loops nest too deeply",
        ),
        // Indices.
        case("index_count", k("let t = load x[:];"), "2 axes"),
        case(
            "index_product_of_loop_vars",
            k("for i in 0..4 { for j in 0..4 { let t = load x[i * j, :]; } }"),
            "two loop-variable terms",
        ),
        case(
            "range_extent_not_constant",
            k("for i in 0..4 { let t = load x[i .. 2 * i + 1, :]; }"),
            "not a constant",
        ),
        case("range_empty", k("let t = load x[4 .. 4, :];"), "is empty"),
        case(
            "range_out_of_bounds",
            k("for i in 0..64 step 8 { let t = load x[i .. i + 16, :]; }"),
            "reaches 72",
        ),
        case(
            "range_negative_start",
            k("for i in 0..64 step 8 { let t = load x[i - 1 .. i + 7, :]; }"),
            "starts at -1",
        ),
        case(
            "range_tail_past_extent",
            k("for i in 0..70 step 8 { let t = load x[i .. i + 8, :]; }"),
            "outside the extent 64",
        ),
        case(
            "single_out_of_bounds",
            k("for i in 0..65 { let t = load x[i, :]; }"),
            "reaches 64",
        ),
        case(
            "index_divisor_not_positive",
            k("for i in 0..4 { let t = load x[i // 0, :]; }"),
            "positive constant divisor",
        ),
        case(
            "index_true_division",
            k("for i in 0..4 { let t = load x[i / 2, :]; }"),
            "uses `//`",
        ),
        case(
            "indirect_wrong_type",
            k("let i = load x[0 .. 8, 0 .. 1];\nlet t = load x[i, :];"),
            "i32 tile of shape [n] or [n, 1]",
        ),
        // Tile expressions.
        case(
            "float_literal_with_i32",
            k("let t = load n[:, :] + 1.5;"),
            "cannot be used with an i32 tile",
        ),
        case(
            "integer_outside_i32",
            k("let t = load n[:, :] + (0xF ** 2) ** 2 ** 2;"),
            "outside the range of i32",
        ),
        case(
            "dtype_mismatch",
            k("let t = load x[:, :] + load h[:, :];"),
            "convert one with `as`",
        ),
        case(
            "division_of_i32",
            k("let t = load n[:, :] / load n[:, :];"),
            "not defined on i32",
        ),
        case(
            "float_op_on_i32",
            k("let t = exp(load n[:, :]);"),
            "needs a float tile",
        ),
        case(
            "broadcast_mismatch",
            k("let t = load x[:, :] + load x[0 .. 8, 0 .. 8];"),
            "do not broadcast",
        ),
        case(
            "reduce_without_axis",
            k("let t = sum(load x[:, :]);"),
            "needs the axis",
        ),
        case(
            "reduce_axis_out_of_range",
            k("let t = sum(load x[:, :], axis=2);"),
            "out of range",
        ),
        case(
            "mean_of_i32",
            k("let t = mean(load n[:, :], axis=0);"),
            "`mean` needs a float tile",
        ),
        case(
            "matmul_not_2d",
            k("let t = unsqueeze(load x[:, :], axis=0) @ load x[:, :];"),
            "`@` multiplies 1-D and 2-D tiles, but the operands are f32[1, 64, 32] and f32[64, 32]",
        ),
        case(
            "matmul_inner_mismatch",
            k("let t = load x[:, :] @ load x[:, :];"),
            "inner dimensions disagree",
        ),
        case(
            "matmul_dtype_mismatch",
            k("let t = load x[:, :] @ (load h[:, :]).T;"),
            "one element type",
        ),
        case(
            "transpose_not_2d",
            k("let t = unsqueeze(load x[:, :], axis=0).T;"),
            "`.T` transposes a 2-D tile (a 1-D one stays as it is), but this one is f32[1, 64, 32]",
        ),
        case(
            "let_scalar",
            k("let t = 1.0 + 2;"),
            "`t` would be a number, but `let` names a tile",
        ),
        case(
            "tile_too_large",
            k("let t = zeros(f32[2048, 1024]);"),
            "at most 2^20",
        ),
        case(
            "floor_division_of_tiles",
            k("let t = load x[:, :] // 2;"),
            "`//` takes i32 tiles, but this one is f32[64, 32]: floats have `/`",
        ),
        case(
            "remainder_by_zero",
            k("let t = load n[:, :] % 0;"),
            "`load n[:, :] % 0` divides by zero",
        ),
        case(
            "unknown_function",
            k("let t = exq(load x[:, :]);"),
            "did you mean `exp`?",
        ),
        case(
            "wrong_arity",
            k("let t = maximum(load x[:, :]);"),
            "takes 2 arguments",
        ),
        case(
            "full_with_tile",
            k("let t = full(f32[4, 4], load x[0 .. 4, 0 .. 4]);"),
            "constant number",
        ),
        case(
            "axis_on_elementwise",
            k("let t = exp(load x[:, :], axis=1);"),
            "takes no `axis=`",
        ),
        case(
            "load_from_tile",
            k("let t = load x[:, :];\nlet u = load t[:, :];"),
            "is a tile, not a kernel parameter",
        ),
        // Updates and stores.
        case("update_param", k("x += 1.0;"), "store x[...]"),
        case(
            "update_loop_var",
            k("for i in 0..4 { i += 1; }"),
            "loop variable",
        ),
        case(
            "update_changes_shape",
            k("let acc = zeros(f32[8, 1]);\nacc += load x[0 .. 8, :];"),
            "does not broadcast",
        ),
        case(
            "update_changes_dtype",
            k("let acc = zeros(f32[8, 32]);\nacc += load h[0 .. 8, :];"),
            "convert with `as f32`",
        ),
        case(
            "store_to_input",
            k("store x[:, :] = load z[:, :];"),
            "not an `out` parameter",
        ),
        case(
            "store_shape_mismatch",
            k("store y[0 .. 8, :] = load x[:, :];"),
            "does not broadcast",
        ),
        case(
            "store_dtype_mismatch",
            k("store y[:, :] = load h[:, :];"),
            "convert with `as f32`",
        ),
        // Masks: comparisons, `where`, `iota`.
        case(
            "chained_comparison",
            k("let m = load x[:, :] < 1.0 < 2.0;"),
            "comparisons do not chain",
        ),
        case(
            "compare_shape_mismatch",
            k("let m = load x[:, :] < load x[0 .. 8, 0 .. 8];"),
            "do not broadcast in `<`",
        ),
        case(
            "compare_dtype_mismatch",
            k("let m = load x[:, :] >= load h[:, :];"),
            "one element type",
        ),
        case(
            "compare_two_numbers",
            k("let m = 1 == 2;"),
            "compares two numbers",
        ),
        case(
            "where_condition_not_a_mask",
            k("let t = where(load x[:, :], load z[:, :], 0.0);"),
            "`where` needs a mask",
        ),
        case(
            "where_condition_a_number",
            k("let t = where(1, load z[:, :], 0.0);"),
            "is a number",
        ),
        case(
            "where_shape_mismatch",
            k("let t = where(load x[:, :] > 0.0, load x[0 .. 8, 0 .. 8], -inf);"),
            "do not broadcast in `where`",
        ),
        case(
            "where_value_dtypes",
            k("let t = where(load x[:, :] > 0.0, load x[:, :], load n[:, :]);"),
            "one element type",
        ),
        case(
            "where_arity",
            k("let t = where(load x[:, :] > 0.0, 1.0);"),
            "takes 3 arguments",
        ),
        case(
            "iota_not_integer",
            k("let t = iota(f32[8, 8], axis=0);"),
            "makes an i32 tile",
        ),
        case(
            "iota_bad_axis",
            k("let t = iota(i32[8, 8], axis=2);"),
            "axis 2 is out of range",
        ),
        case(
            "iota_without_axis",
            k("let t = iota(i32[8, 8]);"),
            "needs the axis",
        ),
        case(
            "mask_arithmetic",
            k("let m = load x[:, :] > 0.0;\nlet t = m + 1;"),
            "not defined on masks",
        ),
        case(
            "mask_reduction",
            k("let s = sum(load x[:, :] > 0.0, axis=1);"),
            "not defined on masks",
        ),
        case(
            "mask_compared",
            k("let m = (load x[:, :] > 0.0) == (load z[:, :] > 0.0);"),
            "not defined on masks",
        ),
        case(
            "mask_update",
            k("let m = load x[:, :] > 0.0;\nm += m;"),
            "not updated arithmetically",
        ),
        case(
            "mask_from_number",
            k("let m = load x[:, :] > 0.0;\nm = 1;"),
            "is not a mask",
        ),
        // Tile slices.
        case(
            "slice_outside_tile",
            k("let t = load x[:, :];\nlet u = t[:, 16 .. 48];"),
            "range `16 .. 48` on axis 1 of `t` reaches 48, outside the extent 32",
        ),
        case(
            "slice_moving_outside_tile",
            k("let t = load x[:, :];\nfor j in 0 .. 4 { let u = t[j * 20 .. j * 20 + 16, :]; }"),
            "reaches 76, outside the extent 64",
        ),
        case(
            "slice_single_position",
            k("let t = load x[:, :];\nlet u = t[64, :];"),
            "index `64` on axis 0 of the tile `t` reaches 64, outside 0..64",
        ),
        case(
            "slice_single_position_moving",
            k("let t = load x[:, :];\nfor j in 0 .. 4 { let u = t[:, 8 * j + 8]; }"),
            "index `8 * j + 8` on axis 1 of the tile `t` reaches 32, outside 0..32",
        ),
        case(
            "slice_axis_count",
            k("let t = load x[:, :];\nlet u = t[0 .. 8];"),
            "`t` has 2 axes (f32[64, 32]) but 1 index is given",
        ),
        case(
            "slice_variable_extent",
            k("let t = load x[:, :];\nfor j in 0 .. 4 { let u = t[0 .. j + 1, :]; }"),
            "is not a constant",
        ),
        case(
            "slice_of_a_number",
            k("let u = (2.0)[0 .. 1];"),
            "a number has no axes to slice",
        ),
        // Gathers along an axis.
        case(
            "gather_axes_apart",
            "kernel k(c: f32[4, 8, 16], idx: i32[8]) {\n    let i = load idx[:];\n    let t = load c[i, 0, i];\n}\n",
            "`c` is indexed by tiles on axes 0 and 2 with another index between",
        ),
        case(
            "gather_axes_shapes",
            k("let i = load idx[:];\nlet t = load x[i, unsqueeze(i, axis=1)];"),
            "tiles that index several axes have one shape",
        ),

        case(
            "gather_split_block",
            "kernel k(c: f32[8, 8, 8, 8], idx: i32[4]) {\n    let t = load c[:, load idx[:], 0 .. 4, :];\n}\n",
            "`c` gathers along axis 1, so the axes after it are whole",
        ),
        // Shapes.
        case(
            "reshape_count",
            k("let t = reshape(load x[:, :], [32, 32]);"),
            "`reshape` keeps the element count: f32[64, 32] has 2048 elements, but [32, 32] holds 1024",
        ),
        case(
            "squeeze_wide_axis",
            k("let t = squeeze(load x[:, :], axis=0);"),
            "`squeeze` drops an axis of extent 1, but axis 0 of f32[64, 32] has 64",
        ),
        case(
            "reshape_without_list",
            k("let t = reshape(load x[:, :], 2048);"),
            "`reshape` takes the new shape as a list",
        ),
        case(
            "list_outside_reshape",
            k("let t = maximum(load x[:, :], [1, 2]);"),
            "a list `[...]` is only the shape argument of `reshape`",
        ),
        // 8-bit integers.
        case(
            "byte_arithmetic",
            "kernel k(q: i8[8, 8], y: out i8[8, 8]) {\n    store y[:, :] = load q[:, :] + load q[:, :];\n}\n",
            "i8 tiles are loaded, stored, sliced and converted only",
        ),
        case(
            "byte_update",
            "kernel k(q: u8[8, 8], y: out u8[8, 8]) {\n    let t = load q[:, :];\n    t += load q[:, :];\n    store y[:, :] = t;\n}\n",
            "8-bit tiles are not updated arithmetically",
        ),
        // Accumulating scatters.
        case(
            "store_add_not_a_scatter",
            k("store y[0 .. 8, :] += load x[0 .. 8, :];"),
            "`+=` on a store adds into the rows an index tile picks",
        ),
        // Strided ranges.
        case(
            "strided_zero_step",
            k("let t = load x[:, 0 .. 32 step 0];"),
            "the step of range `0 .. 32 step 0` is 0: a step is a positive constant",
        ),
        case(
            "strided_variable_step",
            k("for i in 1 .. 4 { let t = load x[:, 0 .. 32 step i]; }"),
            "is not a constant",
        ),
        case(
            "strided_outside",
            k("let t = load x[:, 1 .. 40 step 2];"),
            "range `1 .. 40 step 2` on axis 1 of `x` reaches 40, outside the extent 32",
        ),
        case(
            "strided_tile_slice",
            k("let t = load x[:, :];\nlet u = t[:, 1 .. 34 step 2];"),
            "range `1 .. 34 step 2` on axis 1 of `t` reaches 34, outside the extent 32",
        ),
        // Loads with `pad`.
        case(
            "pad_value_dtype",
            k("let t = load n[:, -2 .. 30] pad 0.5;"),
            "`n` holds i32, so its pad value is an i32 integer, not `0.5`",
        ),
        case(
            "pad_value_tile",
            k("let t = load x[:, :];\nlet u = load x[:, -1 .. 31] pad t;"),
            "a pad value is a number (a literal or a `const`), not the tile `t`",
        ),
        case(
            "pad_gather",
            k("let i = load idx[:];\nlet g = load x[i, -1 .. 31] pad 0.0;"),
            "a gather (a tile index) takes no fill",
        ),
        case(
            "pad_leading_axis",
            "kernel k(c: f32[4, 32, 64]) {\n    let t = load c[0 .. 2, -1 .. 7, :] pad 0.0;\n}\n",
            "along its last axis and along the first axis that selects more than one position",
        ),
        case(
            "store_mask",
            k("store y[:, :] = load x[:, :] > 0.0;"),
            "convert with `as f32`",
        ),
    ]
}

#[test]
fn every_rule_reports_its_diagnostic() {
    let mut golden = String::new();
    for c in cases() {
        let result = front::frontend(&c.source, c.kernel);
        let diags = result.err().unwrap_or_default();
        let rendered = render(&diags, "test.tile", &c.source);
        assert!(
            rendered.contains(c.expect),
            "{}: expected `{}` in:\n{rendered}",
            c.name,
            c.expect
        );
        golden.push_str(&format!("=== {}\n{rendered}", c.name));
        // A numpy user's first mistakes say so once, without errors that follow from
        // them.
        if c.name.starts_with("numpy_")
            || c.name == "non_ascii_name"
            || c.name == "missing_semicolon"
        {
            assert_eq!(
                diags.len(),
                1,
                "{}: one error, no cascade:\n{rendered}",
                c.name
            );
        }
    }
    insta::assert_snapshot!("diagnostics", golden);
}

#[test]
fn nested_blocks_may_shadow() {
    let source =
        k("let t = load x[:, :];\nfor i in 0..2 { let t = load z[:, :]; store y[:, :] = t; }");
    assert_eq!(common::diagnose(&source), "");
}
