//! The notes passes print as comments, read back into the annotations they show.

use super::text::Cursor;
use super::{Reader, R};
use crate::ir::{CopyNote, L0Split};
use crate::types::MemSpace;

impl Reader<'_> {
    /// The text after `copy: ` or `re-materialised: `, as the printer writes it.
    pub(super) fn copy_note(&self, c: &mut Cursor<'_>) -> R<CopyNote> {
        if c.tok("temporary breaking a cycle of the back edge's copies") {
            c.end()?;
            return Ok(CopyNote::Cycle);
        }
        let a = self.value(c)?;
        c.ws();
        let note = if c.tok("is read after") {
            c.ws();
            let defined = self.value(c)?;
            c.ws();
            c.keyword("is")?;
            c.ws();
            c.keyword("defined")?;
            CopyNote::ReadAfterDef { read: a, defined }
        } else if c.tok("cannot be computed in place over") {
            c.ws();
            CopyNote::NotInPlace {
                read: self.value(c)?,
                defined: a,
            }
        } else if c.tok("and") {
            c.ws();
            let b = self.value(c)?;
            c.ws();
            if !c.tok("are live at the same time") {
                return Err(c.err("expected `are live at the same time`"));
            }
            CopyNote::BothLive { a, b }
        } else if c.tok("cannot share the loop's buffer (memory space, type or slots differ)") {
            CopyNote::Placement { value: a }
        } else {
            return Err(c.err("not a note out-of-ssa writes"));
        };
        c.end()?;
        Ok(note)
    }
}

/// The note subtile-matmul leaves on a loop it made, as the printer words it.
pub(super) fn l0_split(c: &mut Cursor<'_>) -> R<L0Split> {
    let mut split = L0Split {
        space: MemSpace::L0A,
        bytes: 0,
        capacity: 0,
        chunks: 1,
        from_l1: false,
        blocks: [1, 1],
    };
    if c.tok("M x N in") {
        c.ws();
        split.blocks[0] = c.uint()?;
        c.ws();
        c.keyword("x")?;
        c.ws();
        split.blocks[1] = c.uint()?;
        c.ws();
        expect_words(c, "blocks moved from L1")?;
        split.from_l1 = true;
    } else if c.tok("K in") {
        c.ws();
        split.chunks = c.uint()?;
        c.ws();
        expect_words(c, "pieces moved from L1")?;
        split.from_l1 = true;
    } else if c.tok("K split into") {
        c.ws();
        split.chunks = c.uint()?;
        c.ws();
        expect_words(c, "sub-tiles")?;
    } else {
        return Err(c.err("not a note subtile-matmul writes"));
    }
    c.expect(",")?;
    c.ws();
    split.space = space_upper(c)?;
    c.ws();
    expect_words(c, "capacity required it (the whole")?;
    c.ws();
    if !(c.tok("product tile") || c.tok("operand tile")) {
        return Err(c.err("expected `product tile` or `operand tile`"));
    }
    c.ws();
    c.keyword("needs")?;
    c.ws();
    split.bytes = c.uint()?;
    c.ws();
    expect_words(c, "bytes,")?;
    c.ws();
    let again = space_upper(c)?;
    if again != split.space {
        return Err(c.err("the note names two memories"));
    }
    c.ws();
    c.keyword("has")?;
    c.ws();
    split.capacity = c.uint()?;
    c.expect(")")?;
    c.end()?;
    Ok(split)
}

pub(super) fn expect_words(c: &mut Cursor<'_>, words: &str) -> R<()> {
    if c.eat(words) {
        Ok(())
    } else {
        Err(c.err(format!("expected `{words}`")))
    }
}

/// A memory's name in capitals (`L0A`), as notes write it.
pub(super) fn space_upper(c: &mut Cursor<'_>) -> R<MemSpace> {
    let at = c.clone();
    let w = c.word().unwrap_or("");
    MemSpace::from_name(&w.to_ascii_lowercase())
        .ok_or_else(|| at.err(format!("`{w}` is not a memory")))
}
