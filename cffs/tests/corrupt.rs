//! Damaged disks: each kind of damage the issue names, planted in a real
//! image, is refused with its specific error (or named by fsck); and a
//! short random campaign never panics (`cargo xtask corrupt` runs 10^5).

use cffs::sim::corrupt::{campaign, try_image};
use cffs::sim::workload::{base_image, Base, ROOT};
use cffs::{Errno, Fs, Local, ROOT_INO};
use xn::{ClaimError, MemDisk, BLOCK};

/// The base image and where /a/f1's entry, /a's entry and /a's first
/// directory block are.
fn image() -> (Vec<u8>, usize, usize, u64) {
    let img = base_image(Base::Fresh).unwrap();
    let mut fs = Fs::mount(Local::mount(MemDisk::from_image(img.clone()), 1, ROOT).unwrap()).unwrap();
    let a = fs.resolve("/a").unwrap();
    let f1 = fs.resolve("/a/f1").unwrap();
    let at = |l: cffs::Loc| l.block as usize * BLOCK + l.off();
    let (fl, al) = (fs.location(f1).unwrap(), fs.location(a).unwrap());
    (img, at(fl), at(al), fl.block)
}

fn mount(img: Vec<u8>) -> Result<(), String> {
    let local = Local::mount(MemDisk::from_image(img), 1, ROOT).map_err(|e| format!("{e:?}"))?;
    Fs::mount(local).map(drop).map_err(|e| format!("{e:?}"))
}

fn poke(img: &mut [u8], at: usize, v: u64) {
    img[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn each_kind_of_damage_is_refused_with_its_reason() {
    let (img, f1, a, a_block) = image();
    // Out of range: f1's first extent past the disk's end.
    let mut m = img.clone();
    poke(&mut m, f1 + 64, 10_000);
    let slot = ((f1 % BLOCK) / 256 - 1) * 5;
    assert_eq!(
        mount(m),
        Err(format!(
            "{:?}",
            xn::Error::BadClaim { block: a_block, slot: slot as u32, why: ClaimError::PastEnd }
        ))
    );
    // Into XN's own blocks.
    let mut m = img.clone();
    poke(&mut m, f1 + 64, 3);
    assert!(mount(m).unwrap_err().contains("Reserved"));
    // A duplicate claim: f1's extent names the block /a's entry claims.
    let mut m = img.clone();
    poke(&mut m, f1 + 64, a_block);
    assert_eq!(mount(m), Err(format!("{:?}", Errno::Corrupt("a block is claimed twice"))));
    // A loop: /a's directory block claims the root block as a directory.
    let mut m = img.clone();
    let root_block = (a / BLOCK) as u64;
    let free_slot = a_block as usize * BLOCK + 15 * 256;
    m[free_slot] = 1;
    m[free_slot + 4..free_slot + 8].copy_from_slice(&0o040755u32.to_le_bytes());
    poke(&mut m, free_slot + 64, root_block);
    m[free_slot + 72..free_slot + 76].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(mount(m), Err(format!("{:?}", Errno::Corrupt("a block is claimed twice"))));
    // Truncation.
    let mut m = img.clone();
    m.truncate(100 * BLOCK);
    assert_eq!(mount(m), Err(format!("{:?}", xn::Error::BadSuperblock("block count does not fit the disk"))));
    // A zeroed C-FFS root block.
    let mut m = img.clone();
    let cffs_root =
        Fs::mount(Local::mount(MemDisk::from_image(img.clone()), 1, ROOT).unwrap()).unwrap().root_block();
    m[cffs_root as usize * BLOCK..(cffs_root as usize + 1) * BLOCK].fill(0);
    assert_eq!(mount(m), Err(format!("{:?}", Errno::Corrupt("entry block without its magic"))));
}

#[test]
fn damage_fsck_can_name_is_named() {
    let (img, f1, _, _) = image();
    // f1's second extent maps file block 0 again (from a free block).
    let mut m = img.clone();
    poke(&mut m, f1 + 80, 255);
    m[f1 + 88..f1 + 92].copy_from_slice(&1u32.to_le_bytes());
    let local = Local::mount(MemDisk::from_image(m), 1, ROOT).unwrap_or_else(|e| panic!("{e:?}"));
    let mut fs = Fs::open(local, false).unwrap();
    let r = cffs::check::fsck(&mut fs);
    assert_eq!(r.problems, ["/a/f1: extents overlap at file block 0"]);
    // A directory's mode on a file's entry: its data block would be read
    // as entries; XN refuses the claim at mount.
    let mut m = img.clone();
    m[f1 + 4..f1 + 8].copy_from_slice(&0o040644u32.to_le_bytes());
    assert!(matches!(Local::mount(MemDisk::from_image(m), 1, ROOT).err(), Some(xn::Error::BadClaim { .. })));
    let _ = ROOT_INO;
}

#[test]
fn random_damage_never_panics() {
    let images = vec![base_image(Base::Fresh).unwrap(), base_image(Base::NoEmbed).unwrap()];
    let st = campaign(&images, 400, 99, |_, _| {});
    assert_eq!(st.images, 400);
    let refused: u64 = st.refused.values().sum();
    assert!(refused > 50 && st.found + st.clean > 50, "{st:?}");
    assert!(try_image(vec![0; 3 * BLOCK]).is_err());
}
