//! Arbitrary bytes as kernel source through the whole front end (lex, parse, check).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    let _ = tilescope::front::frontend(&source, None);
});
