//! The JavaScript-facing API, run as wasm under wasm-bindgen-test (Node by default).
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &key.into()).expect("property access")
}

fn strings(value: JsValue) -> Vec<String> {
    let array: Array = value.dyn_into().expect("an array");
    array
        .iter()
        .map(|s| s.as_string().expect("a string"))
        .collect()
}

#[wasm_bindgen_test]
fn version_is_the_crate_version() {
    assert_eq!(tilescope_wasm::version(), env!("CARGO_PKG_VERSION"));
}

#[wasm_bindgen_test]
fn ablation_runs_without_each_optional_pass() {
    let passes = strings(tilescope_wasm::optional_passes().expect("a list"));
    assert_eq!(passes, tilescope::passes::optional_passes());
    let elementwise = tilescope::examples::ALL
        .iter()
        .find(|e| e.name == "elementwise")
        .expect("in the gallery");
    // Leaving one pass out already, the ablation covers the others.
    let options = Object::new();
    let disabled: Array = std::iter::once(JsValue::from("vector-peephole")).collect();
    Reflect::set(&options, &"disabled_passes".into(), &disabled).expect("set");
    let rows: Array =
        tilescope_wasm::ablate(elementwise.source, options.into(), JsValue::NULL, None)
            .expect("runs")
            .dyn_into()
            .expect("an array");
    let ablated: Vec<String> = rows
        .iter()
        .map(|r| get(&r, "pass").as_string().expect("a pass name"))
        .collect();
    let expected: Vec<&str> = passes
        .iter()
        .map(String::as_str)
        .filter(|p| *p != "vector-peephole")
        .collect();
    assert_eq!(ablated, expected);
    let multi_buffer = rows
        .iter()
        .find(|r| get(r, "pass").as_string().as_deref() == Some("multi-buffer"))
        .expect("multi-buffer");
    assert_eq!(
        get(&multi_buffer, "matches_reference").as_bool(),
        Some(true)
    );
    assert!(get(&multi_buffer, "error").is_null());
}

#[wasm_bindgen_test]
fn lessons_grade_with_cores_grader() {
    let lessons: Array = tilescope_wasm::lessons()
        .expect("lessons")
        .dyn_into()
        .expect("an array");
    let first = lessons.get(0);
    assert_eq!(
        get(&first, "id").as_string().as_deref(),
        Some("01-load-store")
    );
    assert_eq!(get(&first, "number").as_f64(), Some(1.0));
    let solution = get(&first, "solution").as_string().expect("a solution");
    let grade = tilescope_wasm::grade("01-load-store", &solution).expect("grades");
    assert_eq!(get(&grade, "passed").as_bool(), Some(true));
    assert_eq!(get(&grade, "medal").as_string().as_deref(), Some("gold"));
    let starter = get(&first, "starter").as_string().expect("a starter");
    let grade = tilescope_wasm::grade("01-load-store", &starter).expect("grades");
    assert_eq!(get(&grade, "passed").as_bool(), Some(false));
    assert!(get(&grade, "medal").is_null());
    assert!(tilescope_wasm::grade("no-such-lesson", &solution).is_err());
}
