//! The front end: source text -> syntax tree (`lexer`, `parser`, `ast`) -> checked
//! kernel (`check`, `hir`).

pub mod ast;
pub mod hir;
