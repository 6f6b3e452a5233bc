//! Templates and their three downloaded functions (paper 000 §4.1): `owns`
//! (deterministic: which blocks, as which templates, a metadata block
//! points to), `acl` (may these credentials make this change or binding?)
//! and `size` (how many bytes of the block the structure uses). All three
//! are eBPF checked by the `bpf` verifier: they read only their context
//! and the block, so `owns` is deterministic by construction (no clock, no
//! memory beyond its input).
//!
//! The ABI, also in `xn/include/xn_udf.h`:
//! - `owns`: context `{u32 slot; u32 part; u64 block}`, region 0 the
//!   block. XN asks every slot `0..slots`: part 0 answers the first
//!   claimed block (0: the slot claims nothing), part 1 answers
//!   `count | rel_template << 32` (the template as an index into the
//!   claiming template's install group).
//! - `acl`: context `{u32 op; u32 slot; u32 uid; u32 gid; u32 off; u32 len;
//!   u64 child; u64 block}`, regions 0 and 1 the block before and after
//!   (equal for bindings). Non-zero allows.
//! - `size`: context `{u64 block}`, region 0 the block. Answers bytes.

use alloc::string::String;
use alloc::vec::Vec;

use bpf::{Insn, Memory, ProgramSpec, VerifiedProgram};

use crate::claims::{sort_disjoint, Claim};
use crate::error::{ClaimError, Error, TemplateError, Udf};
use crate::{Cred, Tid, BLOCK, RESERVED};

pub const OWNS_CTX: u32 = 16;
/// `struct xn_acl_ctx`: six words, the child and the block, then the
/// count of supplementary groups, a pad word and the groups.
pub const ACL_CTX: u32 = 48 + 4 * crate::GROUPS as u32;
pub const SIZE_CTX: u32 = 8;
/// Most slots a template may ask XN to query per block.
pub const MAX_SLOTS: u32 = 1024;
/// Longest function, in instruction slots.
pub const MAX_UDF_INSNS: usize = 2048;
/// Most templates installed together (one library file system's types).
pub const MAX_GROUP: usize = 16;
/// Longest template name (bytes, printable ASCII).
pub const MAX_NAME: usize = 31;

/// `acl` operations.
pub const OP_MODIFY: u32 = 1;
pub const OP_BIND_READ: u32 = 2;
pub const OP_BIND_WRITE: u32 = 3;

/// What a library hands XN to describe one on-disk type.
#[derive(Clone, Debug)]
pub struct TemplateSpec {
    pub name: String,
    /// How many `owns` slots a block of this type has; 0 for data blocks
    /// (unstructured, never traversed, may be bound writable).
    pub slots: u32,
    pub owns: Vec<Insn>,
    pub acl: Vec<Insn>,
    pub size: Vec<Insn>,
}

/// An installed template: immutable.
#[derive(Debug)]
pub struct Template {
    pub id: Tid,
    /// The first id of its install group; claims name templates relative
    /// to it.
    pub base: Tid,
    pub group_len: u16,
    pub name: String,
    pub slots: u32,
    pub(crate) code: Option<Code>,
}

#[derive(Debug)]
pub(crate) struct Code {
    owns: VerifiedProgram,
    acl: VerifiedProgram,
    size: VerifiedProgram,
    /// The three compiled to machine code (`Xn::set_compiled`), where XN
    /// runs somewhere that can execute it (the kernel); else interpreted.
    pub(crate) jit: Option<Compiled>,
}

/// A template's `owns`, `acl` and `size` compiled by `bpf::compile`.
pub type Compiled = [bpf::JitFn; 3];

impl Code {
    /// Runs function `which` (0 `owns`, 1 `acl`, 2 `size`) on `mem`.
    fn run(&self, which: usize, mem: &Memory) -> Result<u64, bpf::RunError> {
        let Some(jit) = &self.jit else { return bpf::run(self.programs()[which], mem) };
        let mut table = [core::ptr::null::<u8>(); 2];
        for (t, r) in table.iter_mut().zip(mem.regions) {
            *t = r.as_ptr();
        }
        // SAFETY: `jit[which]` is that program compiled (`set_compiled`'s
        // contract), and `mem` is what the verifier checked it for:
        // the context of its size and its regions of a block each.
        Ok(unsafe { jit[which](mem.ctx.as_ptr(), table.as_ptr(), core::ptr::null(), 0) })
    }

    pub(crate) fn programs(&self) -> [&VerifiedProgram; 3] {
        [&self.owns, &self.acl, &self.size]
    }
}

/// What `acl` is asked.
pub struct AclQuery {
    pub op: u32,
    pub slot: u32,
    pub off: u32,
    pub len: u32,
    pub child: u64,
}

pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && name.bytes().all(|b| b.is_ascii_graphic())
}

fn check(udf: Udf, insns: &[Insn], spec: ProgramSpec) -> Result<VerifiedProgram, TemplateError> {
    if insns.len() > MAX_UDF_INSNS {
        return Err(TemplateError::TooLong(udf));
    }
    bpf::verify(insns, &spec).map_err(|r| TemplateError::Rejected(udf, r))
}

impl Template {
    /// Checks a spec and builds the template it describes.
    pub fn build(spec: &TemplateSpec, id: Tid, base: Tid, group_len: u16) -> Result<Template, TemplateError> {
        if !valid_name(&spec.name) {
            return Err(TemplateError::BadName);
        }
        if spec.slots > MAX_SLOTS {
            return Err(TemplateError::TooManySlots);
        }
        let empty = [&spec.owns, &spec.acl, &spec.size].map(|c| c.is_empty());
        let code = match (spec.slots, empty) {
            (0, [true, true, true]) => None,
            (1.., [false, false, false]) => {
                let block = [BLOCK as u32];
                Some(Code {
                    owns: check(Udf::Owns, &spec.owns, ProgramSpec::new(OWNS_CTX).with_regions(&block))?,
                    acl: check(
                        Udf::Acl,
                        &spec.acl,
                        ProgramSpec::new(ACL_CTX).with_regions(&[BLOCK as u32; 2]),
                    )?,
                    size: check(Udf::Size, &spec.size, ProgramSpec::new(SIZE_CTX).with_regions(&block))?,
                    jit: None,
                })
            }
            _ => return Err(TemplateError::WrongFunctions),
        };
        Ok(Template { id, base, group_len, name: spec.name.clone(), slots: spec.slots, code })
    }

    pub fn is_metadata(&self) -> bool {
        self.code.is_some()
    }

    fn fault(&self, udf: Udf, block: u64) -> Error {
        Error::UdfFault { tid: self.id, udf, block }
    }

    /// Runs `owns` over every slot of `data` (block `block` of a disk of
    /// `nblocks`), checks every answer and returns the sorted claims with
    /// the number of runs it took.
    pub fn claims(&self, block: u64, data: &[u8; BLOCK], nblocks: u64) -> Result<(Vec<Claim>, u64), Error> {
        let Some(code) = &self.code else { return Ok((Vec::new(), 0)) };
        let mut out = Vec::new();
        let mut runs = 0;
        for slot in 0..self.slots {
            let mut ctx = [0u8; OWNS_CTX as usize];
            ctx[0..4].copy_from_slice(&slot.to_le_bytes());
            ctx[8..16].copy_from_slice(&block.to_le_bytes());
            let mem = Memory { ctx: &ctx, regions: &[data], packet: &[] };
            runs += 1;
            let start = code.run(0, &mem).map_err(|_| self.fault(Udf::Owns, block))?;
            if start == 0 {
                continue;
            }
            ctx[4..8].copy_from_slice(&1u32.to_le_bytes());
            let mem = Memory { ctx: &ctx, regions: &[data], packet: &[] };
            runs += 1;
            let second = code.run(0, &mem).map_err(|_| self.fault(Udf::Owns, block))?;
            let (count, rel) = (second & 0xffff_ffff, second >> 32);
            let bad = |why| Error::BadClaim { block, slot, why };
            if count == 0 {
                return Err(bad(ClaimError::Empty));
            }
            if start < RESERVED {
                return Err(bad(ClaimError::Reserved));
            }
            if start.checked_add(count).is_none_or(|end| end > nblocks) {
                return Err(bad(ClaimError::PastEnd));
            }
            if rel >= u64::from(self.group_len) {
                return Err(bad(ClaimError::UnknownTemplate));
            }
            out.push(Claim { start, count, tid: self.base + rel as Tid, slot });
        }
        sort_disjoint(&mut out).map_err(|at| Error::Overlap { block, at })?;
        Ok((out, runs))
    }

    /// Runs `acl`. Data templates have none: XN asks their parent.
    pub fn allows(
        &self,
        cred: Cred,
        q: &AclQuery,
        block: u64,
        old: &[u8; BLOCK],
        new: &[u8; BLOCK],
    ) -> Result<bool, Error> {
        let Some(code) = &self.code else { return Ok(false) };
        let mut ctx = [0u8; ACL_CTX as usize];
        for (i, v) in [q.op, q.slot, cred.uid, cred.gid, q.off, q.len].iter().enumerate() {
            ctx[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        ctx[24..32].copy_from_slice(&q.child.to_le_bytes());
        ctx[32..40].copy_from_slice(&block.to_le_bytes());
        ctx[40..44].copy_from_slice(&(cred.groups().len() as u32).to_le_bytes());
        for (i, g) in cred.groups().iter().enumerate() {
            ctx[48 + i * 4..52 + i * 4].copy_from_slice(&g.to_le_bytes());
        }
        let mem = Memory { ctx: &ctx, regions: &[old, new], packet: &[] };
        code.run(1, &mem).map(|r| r != 0).map_err(|_| self.fault(Udf::Acl, block))
    }

    /// Runs `size`: the bytes of the block the structure uses.
    pub fn size(&self, block: u64, data: &[u8; BLOCK]) -> Result<usize, Error> {
        let Some(code) = &self.code else { return Ok(BLOCK) };
        let ctx = block.to_le_bytes();
        let mem = Memory { ctx: &ctx, regions: &[data], packet: &[] };
        let size = code.run(2, &mem).map_err(|_| self.fault(Udf::Size, block))?;
        if size > BLOCK as u64 {
            return Err(Error::BadSize { block, size });
        }
        Ok(size as usize)
    }
}
