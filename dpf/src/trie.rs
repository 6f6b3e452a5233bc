//! The merged decision tree (DPF): every canonical filter is a path of
//! field tests; filters that test the same fields with the same masks in
//! the same order share the path, and where they differ only in a field's
//! value the node holds one hash table keyed by that value. A thousand
//! filters "TCP to port p" are one path with a thousand-entry table at the
//! port: one lookup, whatever the count.

use alloc::vec::Vec;

use crate::cube::{Field, FieldTest};
use crate::table::Table;

/// Most distinct (field, mask) tests below one node: each costs every
/// frame that reaches the node a lookup.
pub const MAX_GROUPS: usize = 8;

#[derive(Debug)]
struct Group {
    field: Field,
    mask: u64,
    children: Table,
}

#[derive(Debug, Default)]
struct Node {
    /// Filters whose last test leads here.
    ends: Vec<u32>,
    groups: Vec<Group>,
}

/// Work done by lookups (what the flat-cost bench counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    pub nodes: u64,
    pub loads: u64,
    pub probes: u64,
}

#[derive(Debug)]
pub struct Trie {
    nodes: Vec<Node>,
    free: Vec<u32>,
    seed: u64,
    stack: Vec<u32>,
    pub work: Work,
}

#[derive(Debug, PartialEq, Eq)]
pub struct TooComplex;

impl Trie {
    pub fn new(seed: u64) -> Trie {
        Trie {
            nodes: alloc::vec![Node::default()],
            free: Vec::new(),
            seed,
            stack: Vec::new(),
            work: Work::default(),
        }
    }

    fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.nodes.push(Node::default());
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Checks that `tests` can be inserted without a node exceeding
    /// `MAX_GROUPS` (so a refused insert changes nothing).
    pub fn check(&self, tests: &[FieldTest]) -> Result<(), TooComplex> {
        let mut cur = Some(0u32);
        for t in tests {
            let Some(n) = cur else { return Ok(()) };
            let node = &self.nodes[n as usize];
            match node.groups.iter().find(|g| g.field == t.field && g.mask == t.mask) {
                Some(g) => cur = g.children.get(t.value).0,
                None if node.groups.len() >= MAX_GROUPS => return Err(TooComplex),
                None => cur = None,
            }
        }
        Ok(())
    }

    pub fn insert(&mut self, tests: &[FieldTest], id: u32) {
        let mut cur = 0u32;
        for (depth, t) in tests.iter().enumerate() {
            let seed = self.seed ^ (u64::from(cur) << 32 | depth as u64);
            let node = &mut self.nodes[cur as usize];
            let gi = match node.groups.iter().position(|g| g.field == t.field && g.mask == t.mask) {
                Some(i) => i,
                None => {
                    node.groups.push(Group { field: t.field, mask: t.mask, children: Table::new(seed) });
                    node.groups.len() - 1
                }
            };
            cur = match self.nodes[cur as usize].groups[gi].children.get(t.value).0 {
                Some(c) => c,
                None => {
                    let c = self.alloc();
                    self.nodes[cur as usize].groups[gi].children.insert(t.value, c);
                    c
                }
            };
        }
        self.nodes[cur as usize].ends.push(id);
    }

    /// Removes filter `id` inserted with `tests`, and every node and
    /// group left empty.
    pub fn remove(&mut self, tests: &[FieldTest], id: u32) {
        let mut path: Vec<(u32, usize)> = Vec::with_capacity(tests.len());
        let mut cur = 0u32;
        for t in tests {
            let node = &self.nodes[cur as usize];
            let Some(gi) = node.groups.iter().position(|g| g.field == t.field && g.mask == t.mask) else {
                return;
            };
            let Some(next) = node.groups[gi].children.get(t.value).0 else { return };
            path.push((cur, gi));
            cur = next;
        }
        self.nodes[cur as usize].ends.retain(|&e| e != id);
        for ((parent, gi), t) in path.into_iter().zip(tests).rev() {
            let node = &self.nodes[cur as usize];
            if !node.ends.is_empty() || !node.groups.is_empty() {
                break;
            }
            self.free.push(cur);
            let group = &mut self.nodes[parent as usize].groups[gi];
            group.children.remove(t.value);
            if group.children.is_empty() {
                self.nodes[parent as usize].groups.remove(gi);
            }
            cur = parent;
        }
    }

    /// Calls `found` with every filter whose tests the frame passes.
    pub fn lookup(&mut self, frame: &[u8], mut found: impl FnMut(u32)) {
        let mut stack = core::mem::take(&mut self.stack);
        stack.clear();
        stack.push(0);
        while let Some(n) = stack.pop() {
            self.work.nodes += 1;
            let node = &self.nodes[n as usize];
            node.ends.iter().for_each(|&e| found(e));
            for g in &node.groups {
                self.work.loads += 1;
                let Some(v) = g.field.load(frame) else { continue };
                let (child, probes) = g.children.get(v & g.mask);
                self.work.probes += u64::from(probes);
                if let Some(c) = child {
                    stack.push(c);
                }
            }
        }
        self.stack = stack;
    }

    /// Nodes in use (for tests: removal gives them all back).
    pub fn live_nodes(&self) -> usize {
        self.nodes.len() - self.free.len()
    }
}
