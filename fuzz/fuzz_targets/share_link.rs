//! Arbitrary bytes as the URL fragment of a share link.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let fragment = String::from_utf8_lossy(data);
    if let Ok(view) = tilescope_web::page::share::decode(&fragment) {
        // Whatever decodes must survive a round trip.
        let again = tilescope_web::page::share::decode(&tilescope_web::page::share::encode(&view));
        assert_eq!(again.ok().as_ref(), Some(&view));
    }
});
