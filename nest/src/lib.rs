//! The nesters (paper 003 §5): operating-system services as ordinary
//! programs stacked around any subtree — the tracer, the debugger stub and
//! the checkpointer here, the demand pager and the do-nothing nester in `src/bin/`
//! (`docs/nesting.md`). They are
//! built on the kernel's nesting calls and the interposer's loop in
//! `user::nest`.
#![no_std]

pub mod capture;
pub mod checkpoint;
pub mod debug;
pub mod offpath;
pub mod pager;
pub mod trace;
