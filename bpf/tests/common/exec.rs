//! JIT output in an executable host mapping (shared by the tests and the
//! `fuzz_verifier` example).

// Named for the crate's own no_std unit tests, which have no prelude Vec.
use std::vec::Vec;

/// JIT output copied into an executable mapping.
pub struct Executable {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Executable {
    pub fn new(code: &[u8]) -> Executable {
        let len = code.len().max(1).next_multiple_of(4096);
        // SAFETY: anonymous private mapping; arguments are valid and the
        // result is checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(ptr, libc::MAP_FAILED, "mmap failed");
        // SAFETY: the mapping is `len >= code.len()` bytes and writable.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), ptr as *mut u8, code.len()) };
        // SAFETY: flips our own mapping to read+execute (W^X).
        let rc = unsafe { libc::mprotect(ptr, len, libc::PROT_READ | libc::PROT_EXEC) };
        assert_eq!(rc, 0, "mprotect failed");
        Executable { ptr, len }
    }

    /// Runs the code on `inputs`; the caller guarantees it came from
    /// `bpf::compile` of a program verified against the inputs' spec.
    pub fn call(&self, ctx: &[u8], regions: &[&[u8]], packet: &[u8]) -> u64 {
        self.call_with_len(ctx, regions, packet, packet.len())
    }

    /// Like `call`, with a packet of `len` bytes followed by slack.
    pub fn call_with_len(&self, ctx: &[u8], regions: &[&[u8]], packet: &[u8], len: usize) -> u64 {
        assert!(len <= packet.len());
        let table: Vec<*const u8> = regions.iter().map(|r| r.as_ptr()).collect();
        // SAFETY: the mapping holds code produced by the JIT for a verified
        // program, whose memory accesses stay within the objects passed here.
        unsafe {
            let f: bpf::JitFn = std::mem::transmute(self.ptr);
            f(ctx.as_ptr(), table.as_ptr(), packet.as_ptr(), len)
        }
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `new`.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// Runs JIT output on each input (the campaign's `Native`); packets get
/// the 8 bytes of slack clamped packet loads may touch.
pub fn run_native(code: &[u8], inputs: &[&bpf::gen::Inputs]) -> Vec<u64> {
    let exe = Executable::new(code);
    inputs
        .iter()
        .map(|i| {
            let mut packet = i.packet.clone();
            packet.resize(packet.len() + 8, 0);
            exe.call_with_len(&i.ctx, &i.region_slices(), &packet, i.packet.len())
        })
        .collect()
}
