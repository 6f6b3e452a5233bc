//! The type catalogue and the root catalogue (paper 000 §4.4, "type
//! creation" and "libFS persistence"). Installing a template needs no
//! privilege; once installed it never changes. Both catalogues are written
//! synchronously: the new bytes, a flush, then the superblock that makes
//! them count, and a flush, so a crash leaves the old or the new
//! catalogue.

use alloc::vec::Vec;

use crate::error::TemplateError;
use crate::layout::{encode_record, Root, CATALOGUE_BYTES, MAX_ROOTS};
use crate::udf::{valid_name, Template, TemplateSpec, MAX_GROUP};
use crate::{Disk, Entry, Error, Info, Meta, PageId, Pages, Parent, Principal, Tid, Xn, BLOCK};

impl<D: Disk, P: Pages> Xn<D, P> {
    /// Installs a group of templates (one library file system's types:
    /// their `owns` name each other by index in the group). Returns the id
    /// of the first.
    pub fn install(&mut self, specs: &[TemplateSpec]) -> Result<Tid, Error> {
        let group = |why| Error::BadTemplate { index: 0, why };
        if specs.is_empty() || specs.len() > MAX_GROUP {
            return Err(group(TemplateError::BadGroup));
        }
        let base = self.templates.len() + 1;
        if base + specs.len() > usize::from(Tid::MAX) {
            return Err(Error::CatalogueFull);
        }
        let (base, n) = (base as Tid, specs.len() as u16);
        let mut built = Vec::new();
        let mut cat = self.catalogue.clone();
        for (i, spec) in specs.iter().enumerate() {
            let bad = |why| Error::BadTemplate { index: i as u16, why };
            let taken =
                self.template_id(&spec.name).is_some() || specs[..i].iter().any(|s| s.name == spec.name);
            if !valid_name(&spec.name) {
                return Err(bad(TemplateError::BadName));
            }
            if taken {
                return Err(bad(TemplateError::DuplicateName));
            }
            built.push(Template::build(spec, base + i as Tid, base, n).map_err(bad)?);
            encode_record(&mut cat, spec, base + i as Tid, base, n);
        }
        if cat.len() > CATALOGUE_BYTES {
            return Err(Error::CatalogueFull);
        }
        let first = self.catalogue.len() / BLOCK;
        let last = cat.len().div_ceil(BLOCK);
        let mut bytes = cat.clone();
        bytes.resize(last * BLOCK, 0);
        self.disk.write(1 + first as u64, &bytes[first * BLOCK..])?;
        self.disk.flush()?;
        let mut sb = self.sb.clone();
        sb.ntemplates += u32::from(n);
        sb.catalogue_bytes = cat.len() as u32;
        self.commit_super(sb)?;
        self.catalogue = cat;
        self.templates.extend(built);
        Ok(base)
    }

    fn commit_super(&mut self, sb: crate::layout::Super) -> Result<(), Error> {
        self.disk.write(0, &sb.encode())?;
        self.disk.flush()?;
        self.stats.writes += 1;
        self.stats.flushes += 1;
        self.sb = sb;
        Ok(())
    }

    /// Adds a root catalogue entry: `pages.len()` free blocks from `start`
    /// become a named root of template `tid`, with the pages' contents
    /// (metadata must claim nothing yet). A persistent root is written and
    /// flushed before the catalogue names it.
    pub fn add_root(
        &mut self,
        who: Principal,
        name: &str,
        start: u64,
        tid: Tid,
        pages: &[PageId],
        persistent: bool,
    ) -> Result<usize, Error> {
        let count = pages.len() as u64;
        if !valid_name(name) || self.root(name).is_some() {
            return Err(Error::BadRootName);
        }
        if self.sb.roots.len() >= MAX_ROOTS {
            return Err(Error::RootCatalogueFull);
        }
        let t = self.tmpl(tid)?;
        let metadata = t.is_metadata();
        if count == 0 {
            return Err(Error::BadChange { block: start });
        }
        let mut buf = Vec::with_capacity(pages.len() * BLOCK);
        for (i, &p) in pages.iter().enumerate() {
            let b = start.checked_add(i as u64).ok_or(Error::OutOfRange { block: start })?;
            self.in_range(b)?;
            if !self.is_free(b) {
                return Err(Error::NotFree { block: b });
            }
            if !self.usable(who, p) || pages[..i].contains(&p) {
                return Err(Error::BadPage);
            }
            let data = self.pages.bytes(p).ok_or(Error::BadPage)?;
            if metadata && !t.claims(b, data, self.sb.nblocks)?.0.is_empty() {
                return Err(Error::FreshClaims { block: b });
            }
            buf.extend_from_slice(data);
        }
        let index = self.sb.roots.len();
        let root = Root { name: name.into(), start, count, tid, persistent };
        if persistent {
            self.disk.write(start, &buf)?;
            self.disk.flush()?;
            let mut sb = self.sb.clone();
            sb.roots.push(root);
            self.commit_super(sb)?;
        } else {
            self.sb.roots.push(root);
        }
        for (i, &page) in pages.iter().enumerate() {
            let b = start + i as u64;
            self.info[b as usize] = Info { tid, mem: 1, disk: u8::from(persistent), uninit: !persistent };
            self.touch(b);
            if metadata {
                let m = Meta { parent: Parent::Root(index), mem: Vec::new(), disk: Vec::new(), last: None };
                self.meta.insert(b, m);
            }
            self.cache(b, Entry { page, owner: who, tid, dirty: !persistent, locked_by: None });
            self.bindings.insert((b, who), !metadata);
        }
        Ok(index)
    }
}
