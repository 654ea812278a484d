//! The JavaScript API as JavaScript sees it (objects, arrays, Uint8Array), under
//! wasm-bindgen-test in Node.
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &key.into()).expect("property access")
}

fn options(sync: &str) -> JsValue {
    let o = Object::new();
    Reflect::set(&o, &"preset".into(), &"a3".into()).expect("set");
    Reflect::set(&o, &"sync".into(), &sync.into()).expect("set");
    o.into()
}

fn softmax() -> String {
    let list = tilescope_wasm::examples().expect("examples");
    let list: Array = list.dyn_into().expect("an array");
    assert!(list.length() >= 12);
    let found = list
        .iter()
        .find(|e| get(e, "name").as_string().as_deref() == Some("softmax"));
    get(&found.expect("softmax in the gallery"), "source")
        .as_string()
        .expect("source text")
}

#[wasm_bindgen_test]
fn compile_returns_every_pass_as_plain_objects() {
    let result = tilescope_wasm::compile(&softmax(), options("auto")).expect("compiles");
    let passes: Array = get(&result, "passes").dyn_into().expect("passes array");
    assert!(passes.length() >= 8, "{} passes", passes.length());
    let names: Vec<String> = passes
        .iter()
        .map(|p| get(&p, "name").as_string().expect("name"))
        .collect();
    assert_eq!(names.first().map(String::as_str), Some("parse"));
    assert!(names.iter().any(|n| n == "insert-sync"), "{names:?}");
    let diagnostics: Array = get(&result, "diagnostics").dyn_into().expect("array");
    assert_eq!(diagnostics.length(), 0);
    assert!(get(&result, "asm")
        .as_string()
        .is_some_and(|a| a.contains("set_flag")));
}

#[wasm_bindgen_test]
fn compile_errors_are_diagnostics_with_spans() {
    let result = tilescope_wasm::compile("kernel k(x: f32[4]) { let y = q; }", JsValue::UNDEFINED)
        .expect("returns");
    let diagnostics: Array = get(&result, "diagnostics").dyn_into().expect("array");
    assert_eq!(diagnostics.length(), 1);
    let d = diagnostics.get(0);
    assert!(get(&d, "message")
        .as_string()
        .is_some_and(|m| m.contains("unknown name")));
    assert_eq!(get(&get(&d, "span"), "start").as_f64(), Some(30.0));
    // Values a failed compile does not have are `null`, as in the CLI's JSON.
    for missing in ["steps", "program", "asm", "sync"] {
        assert!(get(&result, missing).is_null(), "{missing}");
    }
}

#[wasm_bindgen_test]
fn bad_options_throw_instead_of_panicking() {
    let o = Object::new();
    Reflect::set(&o, &"sync".into(), &"sometimes".into()).expect("set");
    assert!(tilescope_wasm::compile("kernel k() {}", o.into()).is_err());
    assert!(tilescope_wasm::machine("nonexistent").is_err());
}

#[wasm_bindgen_test]
fn run_matches_the_reference_and_returns_npy_outputs() {
    let result = tilescope_wasm::run(&softmax(), options("auto"), JsValue::UNDEFINED, Some(3))
        .expect("runs");
    assert_eq!(get(&result, "reference_match").as_bool(), Some(true));
    assert!(get(&result, "cycles").as_f64().is_some_and(|c| c > 0.0));
    let races: Array = get(&result, "races").dyn_into().expect("array");
    assert_eq!(races.length(), 0);
    let outputs: Array = get(&result, "outputs").dyn_into().expect("array");
    let npy: Uint8Array = get(&outputs.get(0), "npy")
        .dyn_into()
        .expect("a Uint8Array");
    let bytes = npy.to_vec();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let tensor = tilescope::npy::read(&bytes).expect("a valid .npy");
    assert_eq!(tensor.shape, vec![64, 512]);
    assert_eq!(
        get(&outputs.get(0), "dtype").as_string().as_deref(),
        Some("f32")
    );
    let shape: Array = get(&outputs.get(0), "shape").dyn_into().expect("an array");
    assert_eq!(shape.to_vec(), vec![JsValue::from(64), JsValue::from(512)]);
    // The run carries its compile result, sync pairs included.
    let compile = get(&result, "compile");
    assert_eq!(
        get(&compile, "kernel").as_string().as_deref(),
        Some("softmax")
    );
    let pairs: Array = get(&get(&compile, "sync"), "pairs")
        .dyn_into()
        .expect("array");
    assert!(pairs.length() > 0);
}

#[wasm_bindgen_test]
fn run_without_sync_reports_races() {
    let result =
        tilescope_wasm::run(&softmax(), options("none"), JsValue::UNDEFINED, None).expect("runs");
    let races: Array = get(&result, "races").dyn_into().expect("array");
    assert!(races.length() > 0);
}

#[wasm_bindgen_test]
fn machine_presets_are_objects() {
    let m = tilescope_wasm::machine("teach").expect("teach exists");
    assert_eq!(get(&m, "name").as_string().as_deref(), Some("teach"));
    assert!(get(&get(&m, "memories"), "ub").is_object());
}
