//! Helper for `test_checkpoint_tree`: asks `env_create_in(arg)` for an
//! environment outside its own subtree (its parent) and exits with the
//! error's code, or 0 if the kernel made one there.
#![no_std]
#![no_main]

fn main(parent: u64) -> i32 {
    match user::sys::env_create_in(parent) {
        Ok(_) => 0,
        Err(e) => e as i32,
    }
}

user::entry!(main);
