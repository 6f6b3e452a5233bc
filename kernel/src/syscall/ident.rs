//! Identities: reading anyone's, changing one's own (`ident.rs`).

use super::Args;
use crate::state::Kernel;
use crate::uaccess;
use abi::ident::Ident;
use abi::Error;

pub fn ident_get(k: &mut Kernel, Args([env, out, ..]): Args) -> Result<u64, Error> {
    let s = k.env_slot(env)?;
    let id = *k.idents.get(k.space_owner(s));
    uaccess::write_value(k.pml4(), out, &id)?;
    Ok(0)
}

pub fn ident_set(k: &mut Kernel, Args([new, ..]): Args) -> Result<u64, Error> {
    let id: Ident = uaccess::read_value(k.pml4(), new)?;
    let me = k.space_owner(k.current());
    k.idents.set(me, &id)?;
    Ok(0)
}
