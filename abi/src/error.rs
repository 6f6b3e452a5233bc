//! Error codes returned (negated) by system calls.

/// Why a system call failed. The kernel returns `-(code as i64)` in `rax`.
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The system-call number is not a kernel call and the environment has
    /// no handler for reflected calls.
    NoSuchCall = 1,
    /// A pointer argument does not point to memory the caller has mapped
    /// with the needed rights.
    BadPointer = 2,
    /// A length argument is zero where that is meaningless, or too large.
    BadLength = 3,
    /// A frame number names no physical frame the kernel manages.
    BadFrame = 4,
    /// The named frame is not free (allocation by name).
    FrameTaken = 5,
    /// The frame is not owned by the caller or one of its descendants.
    NotOwner = 6,
    /// No free frame, page-table frame or kernel memory is left.
    NoMemory = 7,
    /// The environment id names no live environment.
    BadEnv = 8,
    /// The environment is neither the caller nor one of its descendants, or
    /// the call is reserved to the first environment.
    NotPermitted = 9,
    /// The virtual address is unaligned, not in the user half, or inside a
    /// region the kernel reserves.
    BadAddress = 10,
    /// Something is already mapped at that address.
    AlreadyMapped = 11,
    /// Nothing is mapped at that address.
    NotMapped = 12,
    /// Unknown bits are set in a flags argument.
    BadFlags = 13,
    /// The environment table is full.
    NoEnvSlots = 14,
    /// A register value is not allowed (non-canonical or kernel address).
    BadRegs = 15,
    /// The frame is still mapped somewhere and cannot be freed.
    FrameMapped = 16,
    /// The environment is not in a state that allows this call.
    BadState = 17,
    /// No free time slice (or not the one named).
    NoSlice = 18,
    /// A downloaded program failed verification (the console says why).
    BadProgram = 19,
    /// The subtree's memory quota or CPU share would be exceeded
    /// (`env_limit`).
    OverQuota = 20,
    /// No such device, or its driver is gone (disabled after a fault).
    NoDevice = 21,
}

impl Error {
    /// Every error, in code order (for tests and documentation).
    pub const ALL: [Error; 21] = [
        Error::NoSuchCall,
        Error::BadPointer,
        Error::BadLength,
        Error::BadFrame,
        Error::FrameTaken,
        Error::NotOwner,
        Error::NoMemory,
        Error::BadEnv,
        Error::NotPermitted,
        Error::BadAddress,
        Error::AlreadyMapped,
        Error::NotMapped,
        Error::BadFlags,
        Error::NoEnvSlots,
        Error::BadRegs,
        Error::FrameMapped,
        Error::BadState,
        Error::NoSlice,
        Error::BadProgram,
        Error::OverQuota,
        Error::NoDevice,
    ];

    /// Decodes a negative system-call result.
    pub fn from_result(r: i64) -> Option<Error> {
        let code = r.checked_neg()?;
        Error::ALL.iter().copied().find(|e| *e as i64 == code)
    }

    /// The value the kernel places in `rax`.
    pub const fn as_result(self) -> i64 {
        -(self as i64)
    }

    /// A short human-readable name.
    pub const fn name(self) -> &'static str {
        match self {
            Error::NoSuchCall => "no such system call",
            Error::BadPointer => "bad pointer",
            Error::BadLength => "bad length",
            Error::BadFrame => "no such frame",
            Error::FrameTaken => "frame is not free",
            Error::NotOwner => "frame not owned by caller",
            Error::NoMemory => "out of memory",
            Error::BadEnv => "no such environment",
            Error::NotPermitted => "not permitted",
            Error::BadAddress => "bad virtual address",
            Error::AlreadyMapped => "address already mapped",
            Error::NotMapped => "address not mapped",
            Error::BadFlags => "unknown flag bits",
            Error::NoEnvSlots => "environment table full",
            Error::BadRegs => "bad register value",
            Error::FrameMapped => "frame still mapped",
            Error::BadState => "environment in wrong state",
            Error::NoSlice => "time slice not available",
            Error::BadProgram => "downloaded program rejected",
            Error::OverQuota => "over the subtree's quota",
            Error::NoDevice => "no such device",
        }
    }
}
