//! A tiny test file system for XN's tests: template `tfs.node` is a block
//! with the owner's uid at byte 0 and 64 slots of `{u64 start; u32 count;
//! u32 rel_template}` from byte 64; `tfs.data` is data. Its `acl` lets
//! anyone bind for reading, and only uid 0 or the block's owner change it
//! (without changing the owner) or bind its children for writing.
#![allow(dead_code)]

use bpf::{Asm, Insn};
use xn::udf::{OP_BIND_READ, OP_MODIFY};
use xn::{Cred, HostPages, MemDisk, PageId, Pages, Parent, Principal, TemplateSpec, Tid, Xn, BLOCK};

pub type TestXn = Xn<MemDisk, HostPages>;
pub const NODE: u16 = 0;
pub const DATA: u16 = 1;
pub const SLOTS: u32 = 64;
pub const ALICE: Cred = Cred::new(1000, 100);
pub const BOB: Cred = Cred::new(1001, 100);
pub const A: Principal = 7;
pub const B: Principal = 8;

pub fn owns() -> Vec<Insn> {
    let mut a = Asm::new();
    let (out, second) = (a.label(), a.label());
    a.ldx_w(2, 1, 0).ldx_w(3, 1, 4).mov64_imm(0, 0).jge_imm(2, SLOTS as i32, out);
    a.lsh64_imm(2, 4).ld_region(4, 0, 0).add64_reg(4, 2).jne_imm(3, 0, second);
    a.ldx_dw(0, 4, 64).exit();
    a.bind(second).ldx_dw(0, 4, 72);
    a.bind(out).exit();
    a.finish().unwrap()
}

pub fn acl() -> Vec<Insn> {
    let mut a = Asm::new();
    let (yes, no) = (a.label(), a.label());
    a.ldx_w(2, 1, 8).jeq_imm(2, 0, yes);
    a.ldx_w(5, 1, 0).jeq_imm(5, OP_BIND_READ as i32, yes);
    a.ld_region(6, 0, 0).ldx_w(3, 6, 0).jne_reg(2, 3, no);
    a.jne_imm(5, OP_MODIFY as i32, yes);
    a.ld_region(7, 1, 0).ldx_w(4, 7, 0).jne_reg(4, 3, no);
    a.bind(yes).mov64_imm(0, 1).exit();
    a.bind(no).mov64_imm(0, 0).exit();
    a.finish().unwrap()
}

pub fn size() -> Vec<Insn> {
    let mut a = Asm::new();
    a.mov64_imm(0, BLOCK as i32).exit();
    a.finish().unwrap()
}

pub fn specs() -> Vec<TemplateSpec> {
    vec![
        TemplateSpec { name: "tfs.node".into(), slots: SLOTS, owns: owns(), acl: acl(), size: size() },
        TemplateSpec { name: "tfs.data".into(), slots: 0, owns: vec![], acl: vec![], size: vec![] },
    ]
}

/// The bytes of slot `i`: `count` blocks from `start` as `rel`.
pub fn slot(start: u64, count: u32, rel: u16) -> [u8; 16] {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&start.to_le_bytes());
    s[8..12].copy_from_slice(&count.to_le_bytes());
    s[12..14].copy_from_slice(&rel.to_le_bytes());
    s
}

pub fn slot_off(i: usize) -> usize {
    64 + 16 * i
}

/// A formatted 256-block disk with the test templates and a persistent
/// root node at block 40 owned by Alice (principal A). Returns XN, the
/// template base and the root's block.
pub fn setup() -> (TestXn, Tid, u64) {
    let mut disk = MemDisk::new(256);
    TestXn::format(&mut disk).unwrap();
    let (mut xn, _) = TestXn::mount(disk, HostPages::new()).unwrap();
    let base = xn.install(&specs()).unwrap();
    let page = page_with_owner(&mut xn, A, ALICE.uid);
    xn.add_root(A, "tfs", 40, base + NODE, &[page], true).unwrap();
    (xn, base, 40)
}

pub fn page_with_owner(xn: &mut TestXn, who: Principal, uid: u32) -> PageId {
    let p = xn.pages_mut().alloc(who);
    xn.pages_mut().bytes_mut(p).unwrap()[..4].copy_from_slice(&uid.to_le_bytes());
    p
}

pub fn page(xn: &mut TestXn, who: Principal) -> PageId {
    xn.pages_mut().alloc(who)
}

/// Allocates `count` blocks from `start` as `rel` into slot `i` of `node`.
#[allow(clippy::too_many_arguments)]
pub fn alloc(
    xn: &mut TestXn,
    cred: Cred,
    who: Principal,
    node: u64,
    i: usize,
    start: u64,
    count: u32,
    rel: u16,
) -> Result<Vec<PageId>, xn::Error> {
    let s = slot(start, count, rel);
    let ch = [xn::Change { block: node, off: slot_off(i), bytes: &s }];
    xn.modify(who, cred, &ch, &[(start, u64::from(count))], &[])
}

/// Clears slot `i` of `node`, which held `count` blocks from `start`.
pub fn free(
    xn: &mut TestXn,
    cred: Cred,
    who: Principal,
    node: u64,
    i: usize,
    start: u64,
    count: u64,
) -> Result<Vec<PageId>, xn::Error> {
    let ch = [xn::Change { block: node, off: slot_off(i), bytes: &[0u8; 16] }];
    xn.modify(who, cred, &ch, &[], &[(start, count)])
}

/// A fresh node page for `who` owned by uid, inserted at `block` under
/// `parent`.
pub fn new_node(xn: &mut TestXn, cred: Cred, who: Principal, parent: u64, block: u64) {
    let p = page_with_owner(xn, who, cred.uid);
    xn.insert_new(who, cred, Parent::Block(parent), block, p).unwrap();
}

/// Remounts the disk as it is (a clean reboot after the writes so far).
pub fn remount(xn: TestXn) -> (TestXn, xn::MountReport) {
    let (disk, _) = xn.into_parts();
    TestXn::mount(disk, HostPages::new()).unwrap()
}

/// Alice's data blocks 100-103 (slot 0) and her node 60 (slot 2) under
/// `root`, inserted (cached, bound writable to A).
pub fn alice_files(xn: &mut TestXn, root: u64) {
    alloc(xn, ALICE, A, root, 0, 100, 4, DATA).unwrap();
    for b in 100..104 {
        let p = page(xn, A);
        xn.insert_new(A, ALICE, Parent::Block(root), b, p).unwrap();
    }
    alloc(xn, ALICE, A, root, 2, 60, 1, NODE).unwrap();
    let p = page_with_owner(xn, A, ALICE.uid);
    xn.insert_new(A, ALICE, Parent::Block(root), 60, p).unwrap();
}
