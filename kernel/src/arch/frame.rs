//! The two register images the kernel keeps per environment, as plain
//! data (no instructions): what the entry stubs push, and what FXSAVE
//! writes. Compiled on the host too, so the environment table is.

/// Where the registers begin in an exception save area
/// (`abi::exception::ExceptionFrame`), for the delivery stubs.
pub const EXC_REGS: usize = core::mem::offset_of!(abi::exception::ExceptionFrame, regs);

/// An environment's saved user registers, in the order the stubs push them.
/// Offsets are used by assembly: keep them in sync.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TrapFrame {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    pub rbp: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rdx: u64,
    pub rcx: u64,
    pub rbx: u64,
    pub rax: u64,
    pub vector: u64,
    pub error: u64,
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    pub rsp: u64,
    pub ss: u64,
}

const _: () = assert!(core::mem::size_of::<TrapFrame>() == 176);

/// An FXSAVE image.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct FpuState(pub [u8; 512]);

impl FpuState {
    /// The state a new environment starts with: x87 control word 0x37F
    /// (all exceptions masked), MXCSR 0x1F80.
    pub const INITIAL: FpuState = {
        let mut s = [0u8; 512];
        s[0] = 0x7F;
        s[1] = 0x03;
        s[24] = 0x80;
        s[25] = 0x1F;
        FpuState(s)
    };
}
