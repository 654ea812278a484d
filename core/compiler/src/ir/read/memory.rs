//! The memory plan's `slab N: ...` lines at the top of a planned kernel.

use super::text::{comma_list, Cursor};
use super::{Reader, R};
use crate::ir::memory::Slab;
use crate::types::MemSpace;

impl<'t> Reader<'t> {
    /// The memory plan's lines at the top of the kernel, when it has one (read once
    /// the values they name are defined).
    pub(super) fn slab_lines(&mut self) -> R<Option<Vec<Cursor<'t>>>> {
        let mut lines = None;
        loop {
            let Some(&(_, line)) = self.lines.get(self.next) else {
                return Ok(lines);
            };
            let code = line.trim();
            if code == "no slabs" {
                self.next += 1;
                return Ok(Some(Vec::new()));
            }
            if !code.starts_with("slab ") {
                return Ok(lines);
            }
            let (mut c, _) = self.line("a slab")?;
            c.ws();
            lines.get_or_insert_with(Vec::new).push(c);
        }
    }

    /// `slab N: SPACE BYTES bytes at [ADDR, ...][ rotates with %VAR] holds %TILE, ...`,
    /// `scratch` standing for the fused op whose scratch is at that address.
    pub(super) fn slab(&self, c: &mut Cursor<'_>, index: usize) -> R<Slab> {
        c.keyword("slab")?;
        c.ws();
        let at = c.clone();
        if c.uint()? != index as u64 {
            return Err(at.err(format!(
                "expected slab {index}: slabs are numbered from 0, in order"
            )));
        }
        c.expect(":")?;
        c.ws();
        let at = c.clone();
        let word = c.word().unwrap_or("");
        let space =
            MemSpace::from_name(word).ok_or_else(|| at.err(format!("`{word}` is not a memory")))?;
        c.ws();
        let bytes = c.uint()?;
        c.ws();
        c.keyword("bytes")?;
        c.ws();
        c.keyword("at")?;
        let at = c.clone();
        c.expect("[")?;
        let addrs = comma_list(c, "]", Cursor::uint)?;
        let addr = *addrs
            .first()
            .ok_or_else(|| at.err("a slab without an address"))?;
        let slots = u32::try_from(addrs.len()).map_err(|_| at.err("too many slots"))?;
        let contiguous = addrs.iter().enumerate().all(|(i, &a)| {
            Some(a)
                == bytes
                    .checked_mul(i as u64)
                    .and_then(|o| o.checked_add(addr))
        });
        if !contiguous {
            return Err(at.err(format!(
                "a slab's slots follow each other, {bytes} bytes apart"
            )));
        }
        let mut rotates_with = None;
        if c.tok("rotates") {
            c.ws();
            c.keyword("with")?;
            c.ws();
            let at = c.clone();
            let name = c.name()?;
            let var = self.vars.get(&name);
            let l = var.and_then(|v| self.var_loops.get(v));
            rotates_with =
                Some(*l.ok_or_else(|| at.err(format!("`%{name}` is not a loop variable")))?);
        }
        c.ws();
        c.keyword("holds")?;
        let mut tiles = Vec::new();
        let mut scratch_of = None;
        loop {
            c.ws();
            if c.keyword_here("scratch") {
                let op = self
                    .k
                    .annotations
                    .scratch
                    .iter()
                    .find(|(_, &s)| s == (bytes, addr))
                    .map(|(op, _)| op);
                let op = op.ok_or_else(|| c.err("no op has its scratch in this slab"))?;
                scratch_of = Some(op);
            } else {
                tiles.push(self.value(c)?);
            }
            if !c.tok(",") {
                break;
            }
        }
        c.end()?;
        Ok(Slab {
            space,
            bytes,
            slots,
            addr,
            rotates_with,
            tiles,
            scratch_of,
        })
    }
}
