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
    /// XN: the parent does not claim the block (with one template), or is
    /// not a metadata block.
    NotClaimed = 22,
    /// XN: the template's `acl` refused the caller's credentials; a frame
    /// range's owner and mode refused the caller's identity.
    Denied = 23,
    /// XN: an allocation of a block that is not free, or a change that
    /// makes one block claim another twice.
    NotFree = 24,
    /// XN: the change allocates, frees or moves other blocks than the
    /// request declares.
    Undeclared = 25,
    /// XN: metadata is changed only through `xn_modify`; it is never
    /// bound writable.
    ReadOnly = 26,
    /// XN: the block points to one not yet durably initialised.
    Tainted = 27,
    /// XN: another environment holds the block's lock.
    Locked = 28,
    /// XN: the block is not in the buffer cache.
    NotCached = 29,
    /// XN: the block is already in the buffer cache.
    AlreadyCached = 30,
    /// XN: the block was allocated and never written (nothing to read), or
    /// only such a block may be inserted directly, claiming nothing.
    NotFresh = 31,
    /// XN: a template was refused (its name, slots or functions; the
    /// verifier's reason is on the console), or a template function
    /// answered an invalid claim or size.
    BadTemplate = 32,
    /// XN: the change re-types a claimed block or moves one under its own
    /// descendant.
    BadMove = 33,
    /// XN: no template or root of that name, or a root name taken or
    /// malformed.
    BadName = 34,
    /// XN: a block past the disk's end or inside XN's own area.
    BadBlock = 35,
    /// XN: the disk failed the request.
    IoError = 36,
    /// A packet filter could claim frames a filter of another endpoint
    /// claims, which did not consent (`net_filter`).
    Claimed = 37,
}

impl Error {
    /// Every error, in code order (for tests and documentation).
    pub const ALL: [Error; 37] = [
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
        Error::NotClaimed,
        Error::Denied,
        Error::NotFree,
        Error::Undeclared,
        Error::ReadOnly,
        Error::Tainted,
        Error::Locked,
        Error::NotCached,
        Error::AlreadyCached,
        Error::NotFresh,
        Error::BadTemplate,
        Error::BadMove,
        Error::BadName,
        Error::BadBlock,
        Error::IoError,
        Error::Claimed,
    ];

    /// XN's own refusals (produced by `test_xn`, on an XN disk).
    pub const fn is_xn(self) -> bool {
        matches!(self as u64, 22..=36)
    }

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
            Error::NotClaimed => "block not claimed by that parent",
            Error::Denied => "refused by the acl or the owner and mode",
            Error::NotFree => "block not free or claimed twice",
            Error::Undeclared => "change differs from its declaration",
            Error::ReadOnly => "metadata is read-only",
            Error::Tainted => "points to an uninitialised block",
            Error::Locked => "block locked by another",
            Error::NotCached => "block not cached",
            Error::AlreadyCached => "block already cached",
            Error::NotFresh => "block not freshly allocated",
            Error::BadTemplate => "template refused",
            Error::BadMove => "bad move of a claimed block",
            Error::BadName => "bad or unknown name",
            Error::BadBlock => "block out of range",
            Error::IoError => "disk I/O error",
            Error::Claimed => "frames claimed by another endpoint",
        }
    }
}
