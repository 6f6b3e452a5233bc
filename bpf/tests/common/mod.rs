//! Test support: the shared generator (now `bpf::gen`) and JIT output in an
//! executable host mapping.
#![allow(dead_code, unused_imports)]

pub use bpf::gen::*;

mod exec;
pub use exec::{run_native, Executable};
