//! Mounting damaged disks: the superblock, the catalogue and the
//! traversal refuse what is wrong with a specific error, report
//! conflicts, and stay bounded.

mod common;

use common::*;
use xn::{ClaimError, Disk, Error, HostPages, Limits, MemDisk, Parent, BLOCK};

/// The disk of a set-up XN with node 60 under the root holding 100-102.
fn disk_with_tree() -> MemDisk {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 60, 1, NODE).unwrap();
    new_node(&mut xn, ALICE, A, root, 60);
    alloc(&mut xn, ALICE, A, 60, 0, 100, 3, DATA).unwrap();
    for b in 100..103 {
        let p = page(&mut xn, A);
        xn.insert_new(A, ALICE, Parent::Block(60), b, p).unwrap();
    }
    xn.sync_all(A).unwrap();
    xn.into_parts().0
}

fn poke(disk: &mut MemDisk, block: u64, off: usize, bytes: &[u8]) {
    let at = block as usize * BLOCK + off;
    disk.data[at..at + bytes.len()].copy_from_slice(bytes);
}

fn mount(disk: MemDisk) -> Result<(TestXn, xn::MountReport), Error> {
    TestXn::mount(disk, HostPages::new())
}

#[test]
fn a_damaged_superblock_or_catalogue_is_refused() {
    let mut d = disk_with_tree();
    d.data[100] ^= 1;
    assert_eq!(mount(d).err(), Some(Error::BadSuperblock("checksum mismatch")));
    let mut d = disk_with_tree();
    d.data[BLOCK + 70] ^= 0x10;
    assert_eq!(mount(d).err(), Some(Error::BadCatalogue { offset: 0, why: "record checksum mismatch" }));
    assert_eq!(mount(MemDisk::new(256)).err(), Some(Error::BadSuperblock("no XN magic")));
    assert_eq!(mount(MemDisk::new(4)).err(), Some(Error::DiskTooSmall));
}

#[test]
fn a_loop_on_disk_is_reported_not_followed() {
    let mut d = disk_with_tree();
    // Node 60 claims the root (block 40) as a node.
    poke(&mut d, 60, slot_off(5), &slot(40, 1, NODE));
    let (xn, report) = mount(d).unwrap();
    assert_eq!(report.conflicts.len(), 1);
    let c = report.conflicts[0];
    assert_eq!((c.block, c.claimant, c.cycle), (40, Parent::Block(60), true));
    assert_eq!(xn.shared_blocks(), [40]);
}

#[test]
fn bad_claims_on_disk_are_refused() {
    let mut d = disk_with_tree();
    poke(&mut d, 60, slot_off(7), &slot(250, 9, DATA));
    assert_eq!(mount(d).err(), Some(Error::BadClaim { block: 60, slot: 7, why: ClaimError::PastEnd }));
    let mut d = disk_with_tree();
    poke(&mut d, 60, slot_off(7), &slot(101, 1, DATA));
    assert_eq!(mount(d).err(), Some(Error::Overlap { block: 60, at: 101 }));
    let mut d = disk_with_tree();
    poke(&mut d, 60, slot_off(7), &slot(70, 1, 9));
    assert_eq!(
        mount(d).err(),
        Some(Error::BadClaim { block: 60, slot: 7, why: ClaimError::UnknownTemplate })
    );
}

#[test]
fn the_rebuild_is_bounded() {
    let d = disk_with_tree();
    let r = TestXn::mount_with(d, HostPages::new(), Limits { max_steps: 50, max_conflicts: 4 });
    assert!(matches!(r.err(), Some(Error::RebuildTooLong { .. })));
    // 63 nodes each claiming the whole disk: the traversal ends, listing
    // the first conflicts and counting the rest.
    let mut d = disk_with_tree();
    for i in 1..64u64 {
        poke(&mut d, 60, slot_off(i as usize), &slot(150 + i, 1, NODE));
        poke(&mut d, 150 + i, slot_off(0), &slot(17, 256 - 17, DATA));
    }
    let (_, report) = mount(d).unwrap();
    assert_eq!(report.conflicts.len(), 256);
    assert!(report.more_conflicts > 10_000, "{}", report.more_conflicts);
}

#[test]
fn a_move_cut_by_a_crash_is_a_conflict_the_library_can_repair() {
    let (mut xn, _, root) = setup();
    for (i, b) in [(0, 60), (1, 61)] {
        alloc(&mut xn, ALICE, A, root, i, b, 1, NODE).unwrap();
        new_node(&mut xn, ALICE, A, root, b);
    }
    alloc(&mut xn, ALICE, A, 60, 0, 100, 1, DATA).unwrap();
    let p = page(&mut xn, A);
    xn.insert_new(A, ALICE, Parent::Block(60), 100, p).unwrap();
    xn.sync_all(A).unwrap();
    let s = slot(100, 1, DATA);
    let ch = [
        xn::Change { block: 60, off: slot_off(0), bytes: &[0; 16] },
        xn::Change { block: 61, off: slot_off(0), bytes: &s },
    ];
    xn.modify(A, ALICE, &ch, &[], &[]).unwrap();
    // The new pointer first, durably; then the crash.
    xn.write(A, 61, 1).unwrap();
    xn.flush().unwrap();
    assert!(xn.will_free(100) || xn.claimants(100) == 1);
    let (mut disk, _) = xn.into_parts();
    disk.flush().unwrap();
    let (mut xn, report) = mount(disk).unwrap();
    assert_eq!(report.conflicts.len(), 1);
    assert_eq!(xn.claimants(100), 2);
    // Recovery: the library drops the old pointer; the block stays.
    for b in [root, 60] {
        let p = page(&mut xn, A);
        let parent = if b == root { Parent::Root(0) } else { Parent::Block(root) };
        xn.read_insert(A, ALICE, parent, b, &[p]).unwrap();
    }
    free(&mut xn, ALICE, A, 60, 0, 100, 1).unwrap();
    assert_eq!(xn.claimants(100), 1);
    assert!(!xn.is_free(100));
}
