//! How the page and the compile worker encode their messages: postcard, compact and
//! the same serde types on both ends (`page::worker_link`, `worker::serve`).

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The bytes of a message.
pub fn to_bytes<T: Serialize>(message: &T) -> Result<Vec<u8>, postcard::Error> {
    postcard::to_allocvec(message)
}

/// A message from its bytes.
pub fn from_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, postcard::Error> {
    postcard::from_bytes(bytes)
}
