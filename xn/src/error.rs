//! Every way XN refuses a request, a template, a UDF's answer or an
//! on-disk structure. A refused call changes nothing.

use crate::disk::DiskError;

/// Which of a template's three functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Udf {
    Owns,
    Acl,
    Size,
}

/// Why a template was refused at install (or found bad in the catalogue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateError {
    /// Names are 1..=31 bytes of printable ASCII.
    BadName,
    /// Another template already has this name.
    DuplicateName,
    /// More slots than `MAX_SLOTS`.
    TooManySlots,
    /// A data template (no slots) carries code, or a metadata template
    /// lacks one of its three functions.
    WrongFunctions,
    /// A function is longer than `MAX_UDF_INSNS`.
    TooLong(Udf),
    /// The verifier refused a function.
    Rejected(Udf, bpf::Reject),
    /// A group of no templates, or of more than `MAX_GROUP`.
    BadGroup,
}

/// Why an `owns` answer is not a valid claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimError {
    /// A claim of zero blocks.
    Empty,
    /// The range reaches past the disk's end.
    PastEnd,
    /// The range covers XN's own blocks (superblock and catalogue).
    Reserved,
    /// The template is not one of the claiming template's group.
    UnknownTemplate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    Disk(DiskError),
    /// The disk is too small for XN, or not a multiple of blocks.
    DiskTooSmall,
    /// Block 0 is not an XN superblock, or it is damaged (the reason).
    BadSuperblock(&'static str),
    /// The type catalogue is damaged at this byte offset.
    BadCatalogue {
        offset: u32,
        why: &'static str,
    },
    /// A template (by name index in the install request, or catalogue id).
    BadTemplate {
        index: u16,
        why: TemplateError,
    },
    CatalogueFull,
    RootCatalogueFull,
    /// A root name is already taken, or malformed.
    BadRootName,
    NoSuchRoot,
    NoSuchTemplate(u16),
    /// A verified UDF stopped with an error: a verifier bug.
    UdfFault {
        tid: u16,
        udf: Udf,
        block: u64,
    },
    /// `owns` of `block` answered an invalid claim in `slot`.
    BadClaim {
        block: u64,
        slot: u32,
        why: ClaimError,
    },
    /// `owns` of `block` claims `at` twice.
    Overlap {
        block: u64,
        at: u64,
    },
    /// `size` of `block` answered more than a block.
    BadSize {
        block: u64,
        size: u64,
    },
    /// The free-map rebuild took more than its step bound.
    RebuildTooLong {
        steps: u64,
    },
    /// A block number past the disk's end, or inside XN's area.
    OutOfRange {
        block: u64,
    },
    NotCached {
        block: u64,
    },
    AlreadyCached {
        block: u64,
    },
    /// The page is not the caller's, or is gone.
    BadPage,
    /// `block` is not metadata (its template has no slots).
    NotMetadata {
        block: u64,
    },
    /// `parent` does not claim `block` (or not with one template).
    NotClaimed {
        block: u64,
        parent: u64,
    },
    /// Metadata blocks are changed only through `modify`.
    MetadataNotWritable {
        block: u64,
    },
    /// The template's `acl` refused.
    Denied {
        block: u64,
    },
    /// Another principal holds the block's lock.
    Locked {
        block: u64,
    },
    /// The caller has no binding (of the needed kind) to the block.
    NotBound {
        block: u64,
    },
    /// An allocation of a block that is not free.
    NotFree {
        block: u64,
    },
    /// The change allocates `block` but the request did not declare it.
    Undeclared {
        block: u64,
    },
    /// The request declares `block` allocated or freed but the change
    /// does not do so.
    NotDone {
        block: u64,
    },
    /// The change re-types a claimed block.
    Retype {
        block: u64,
    },
    /// The change moves a block under its own descendant.
    Cycle {
        block: u64,
    },
    /// `block` points to `child`, which is not yet durably initialised.
    Tainted {
        block: u64,
        child: u64,
    },
    /// The block was allocated and never written: there is nothing to
    /// read.
    Uninitialised {
        block: u64,
    },
    /// Only a block allocated and never written may be inserted directly.
    NotFresh {
        block: u64,
    },
    /// A fresh metadata block must claim nothing.
    FreshClaims {
        block: u64,
    },
    /// No changes, too many, an empty one, or one outside the structure
    /// (`size`).
    BadChange {
        block: u64,
    },
    /// The block is dirty or locked and cannot leave the cache.
    Busy {
        block: u64,
    },
    /// The block is not allocated.
    NotAllocated {
        block: u64,
    },
}

impl From<DiskError> for Error {
    fn from(e: DiskError) -> Error {
        Error::Disk(e)
    }
}
