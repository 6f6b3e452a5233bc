//! C-FFS's templates: the UDFs compiled from `udf/cffs.c` at build time.

use alloc::vec::Vec;

use xn::TemplateSpec;

/// The eBPF object `build.rs` compiled.
pub static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cffs.o"));

/// Template indices in C-FFS's install group.
pub const META: u16 = 0;
pub const DATA: u16 = 1;
pub const EXT: u16 = 2;
/// `owns` slots: 15 entries x (4 extents + the extent-block pointer), and
/// the header's chain pointer; 254 extents and the next pointer.
pub const META_SLOTS: u32 = 76;
pub const EXT_SLOTS: u32 = 255;

/// Why the compiled object could not be turned into templates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    Object(bpf::object::ObjectError),
    Layout(bpf::relayout::RelayoutError),
}

/// Loads one function and lays it out with forward jumps only (clang
/// shares return blocks behind their callers).
fn load(section: &str, regions: &[&str]) -> Result<Vec<bpf::Insn>, LoadError> {
    let insns = bpf::object::load(OBJECT, section, regions).map_err(LoadError::Object)?;
    bpf::relayout::forward_only(&insns).map_err(LoadError::Layout)
}

/// The three templates, in install order.
pub fn specs() -> Result<Vec<TemplateSpec>, LoadError> {
    let spec = |name: &str, slots, prefix: &str| -> Result<TemplateSpec, LoadError> {
        Ok(TemplateSpec {
            name: name.into(),
            slots,
            owns: load(&alloc::format!("{prefix}.owns"), &["blk"])?,
            acl: load(&alloc::format!("{prefix}.acl"), &["old", "new"])?,
            size: load("meta.size", &["blk"])?,
        })
    };
    let data = TemplateSpec {
        name: "cffs.data".into(),
        slots: 0,
        owns: Vec::new(),
        acl: Vec::new(),
        size: Vec::new(),
    };
    Ok(alloc::vec![spec("cffs.meta", META_SLOTS, "meta")?, data, spec("cffs.ext", EXT_SLOTS, "ext")?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_udf_loads_and_verifies() {
        for (i, s) in specs().unwrap().iter().enumerate() {
            if let Err(e) = xn::Template::build(s, i as u16 + 1, 1, 3) {
                panic!("{}: {e:?}", s.name);
            }
        }
    }
}
