//! How the page and the compile worker encode their messages: postcard rather than
//! gloo-worker's default bincode.
//!
//! Why: the page's decoder for `Response` is the module's largest serde code, and
//! postcard's deserialiser (varint lengths, no configurable options threaded through
//! every call) compiles to less of it for the same serde types.

use gloo::worker::Codec;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::JsValue;

/// gloo-worker's codec for `CompileWorker` (spawner and registrar both name it).
pub struct Postcard;

/// The bytes of a message.
pub fn to_bytes<T: Serialize>(message: &T) -> Result<Vec<u8>, postcard::Error> {
    postcard::to_allocvec(message)
}

/// A message from its bytes.
pub fn from_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, postcard::Error> {
    postcard::from_bytes(bytes)
}

impl Codec for Postcard {
    fn encode<I: Serialize>(input: I) -> JsValue {
        // Fails only for serde shapes postcard cannot write, which the protocol's
        // round-trip test rules out for every message type.
        let bytes = to_bytes(&input).expect("protocol types are postcard-serialisable");
        js_sys::Uint8Array::from(bytes.as_slice()).into()
    }

    fn decode<O: DeserializeOwned>(input: JsValue) -> O {
        let bytes = js_sys::Uint8Array::from(input).to_vec();
        // Both ends are this module with the same types, so what one end encodes the
        // other decodes (the round-trip test); a failure is a bug, reported as a panic
        // like gloo-worker's own codec does.
        from_bytes(&bytes).expect("a message from the same module decodes")
    }
}
