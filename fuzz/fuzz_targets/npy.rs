//! Arbitrary bytes as an uploaded `.npy` file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = tilescope::npy::read(data) {
        // A tensor that reads must write back and read again to the same tensor.
        let again = tilescope::npy::read(&tilescope::npy::write(&t));
        assert_eq!(again.ok().as_ref(), Some(&t));
    }
});
