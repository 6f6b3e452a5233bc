//! A block request's buffer as the device sees it: a run of consecutive
//! sectors whose bytes lie in up to `drvapi::MAX_PAGES` frames anywhere
//! in memory (paper 000 §4: XN's cache pages are wherever the frame
//! allocator put them). The kernel checks a run before any of it is lent
//! (`check`), gathers consecutive blocks into runs (`mergeable`), and
//! keeps a request's pages (`Pages`) to lend them and to make it again
//! after a driver's restart.

use crate::frames::Frame;
use drvapi::MAX_PAGES;

pub const SECTOR: usize = 512;
const PAGE: usize = 4096;

/// Bytes `offset..offset + len` of frame `frame`: a request's buffer, or
/// one page of a run.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    pub frame: Frame,
    pub offset: usize,
    pub len: usize,
}

impl Span {
    pub fn page(frame: Frame) -> Span {
        Span { frame, offset: 0, len: PAGE }
    }

    fn whole(&self) -> bool {
        self.offset == 0 && self.len == PAGE
    }
}

/// Why a block request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockError {
    NoDevice,
    /// Length or offset not whole sectors, past the frame's end, or a
    /// run whose pages are not all whole.
    BadRange,
    /// Past the end of the disk.
    PastEnd,
    /// More pages than one request may carry (`drvapi::Facts::max_pages`).
    TooLong,
    /// A frame is not the caller's.
    NotOwner,
    /// The driver failed or is busy (a `drvapi::status`).
    Driver(i32),
}

/// Checks a request on `bufs` from `sector`, on a disk of `capacity`
/// sectors whose driver takes `max_pages` a request, every frame passing
/// `mine`: its length in bytes. One buffer may be any whole sectors of
/// its frame; a run of several must be whole pages (each a block).
pub fn check(
    bufs: &[Span],
    sector: u64,
    capacity: u64,
    max_pages: usize,
    mine: impl Fn(Frame) -> bool,
) -> Result<usize, BlockError> {
    let sectors = |b: &Span| b.offset.is_multiple_of(SECTOR) && b.len.is_multiple_of(SECTOR);
    let fits = |b: &Span| b.len > 0 && b.offset.checked_add(b.len).is_some_and(|e| e <= PAGE);
    if bufs.is_empty() || !bufs.iter().all(|b| sectors(b) && fits(b)) {
        return Err(BlockError::BadRange);
    }
    if bufs.len() > 1 && !bufs.iter().all(Span::whole) {
        return Err(BlockError::BadRange);
    }
    if bufs.len() > max_pages.min(MAX_PAGES) {
        return Err(BlockError::TooLong);
    }
    let len: usize = bufs.iter().map(|b| b.len).sum();
    let end = sector.checked_add((len / SECTOR) as u64).ok_or(BlockError::PastEnd)?;
    if end > capacity {
        return Err(BlockError::PastEnd);
    }
    if !bufs.iter().all(|b| mine(b.frame)) {
        return Err(BlockError::NotOwner);
    }
    Ok(len)
}

/// How many of `reqs` (buffers and their first sectors), from the first,
/// go in one request: whole pages on consecutive sectors, at most `max`.
pub fn mergeable(reqs: &[(Span, u64)], max: usize) -> usize {
    let Some(&(first, start)) = reqs.first() else { return 0 };
    if !first.whole() {
        return 1;
    }
    let next = |k: usize| start + (k * PAGE / SECTOR) as u64;
    1 + reqs[1..]
        .iter()
        .take(max.saturating_sub(1))
        .enumerate()
        .take_while(|(k, (b, s))| b.whole() && *s == next(k + 1))
        .count()
}

/// Runs `f` on the physical addresses of the buffers of a checked run
/// (`check`): the first may start inside its page; the others are whole
/// pages. A one-page request (the commonest) builds no run's array.
pub fn addrs<R>(bufs: &[Span], f: impl FnOnce(&[u64]) -> R) -> R {
    let at = |b: &Span| b.frame.addr() + b.offset as u64;
    if let [one] = bufs {
        return f(&[at(one)]);
    }
    let mut all = [0; MAX_PAGES];
    for (a, b) in all.iter_mut().zip(bufs) {
        *a = at(b);
    }
    f(&all[..bufs.len().clamp(1, MAX_PAGES)])
}

/// The physical addresses of a request's buffer, kept with it in flight
/// (`pending`) to make it again: the first may start inside its page; the
/// others are whole pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pages {
    addrs: [u64; MAX_PAGES],
    n: usize,
}

impl Pages {
    pub const NONE: Pages = Pages { addrs: [0; MAX_PAGES], n: 0 };

    /// Keeps `pas` (1 to `MAX_PAGES`; the rest are ignored), writing only
    /// as many entries as there are.
    pub fn set(&mut self, pas: &[u64]) {
        self.n = pas.len().min(MAX_PAGES);
        self.addrs[..self.n].copy_from_slice(&pas[..self.n]);
    }

    pub fn addrs(&self) -> &[u64] {
        &self.addrs[..self.n]
    }

    /// Each page's part of a buffer of `len` bytes: its address and
    /// length (every page has one; a flush's only part is empty).
    pub fn parts(&self, len: usize) -> impl Iterator<Item = (u64, usize)> + '_ {
        let mut left = len;
        self.addrs().iter().map(move |&pa| {
            let part = left.min(PAGE - (pa as usize & (PAGE - 1)));
            left -= part;
            (pa, part)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(n: u64) -> Span {
        Span::page(Frame::new(n))
    }

    #[test]
    fn consecutive_whole_pages_merge_up_to_the_bound() {
        // Frames anywhere; sectors 8 apart.
        let reqs: Vec<(Span, u64)> =
            [9, 3, 77, 5].iter().enumerate().map(|(i, &f)| (page(f), 80 + 8 * i as u64)).collect();
        assert_eq!(mergeable(&reqs, 32), 4);
        assert_eq!(mergeable(&reqs, 3), 3);
        assert_eq!(mergeable(&reqs[3..], 32), 1);
        assert_eq!(mergeable(&[], 32), 0);
        // A gap on the disk ends the run.
        let gap = [(page(1), 0), (page(2), 8), (page(3), 24)];
        assert_eq!(mergeable(&gap, 32), 2);
        // A part of a page goes alone.
        let part = [(Span { frame: Frame::new(1), offset: 0, len: 512 }, 0), (page(2), 1)];
        assert_eq!(mergeable(&part, 32), 1);
        assert_eq!(mergeable(&[(page(1), 0), (Span { offset: 512, len: 512, ..page(2) }, 8)], 32), 1);
    }

    #[test]
    fn a_run_is_refused_unless_every_page_is_whole_mine_and_on_the_disk() {
        let run: Vec<Span> = (0..4).map(|f| page(f * 3 + 1)).collect();
        let all = |_| true;
        assert_eq!(check(&run, 0, 64, 32, all), Ok(4 * PAGE));
        assert_eq!(check(&run, 33, 64, 32, all), Err(BlockError::PastEnd));
        assert_eq!(check(&run, u64::MAX - 2, u64::MAX, 32, all), Err(BlockError::PastEnd));
        assert_eq!(check(&run, 0, 64, 3, all), Err(BlockError::TooLong));
        let long: Vec<Span> = (0..MAX_PAGES as u64 + 1).map(page).collect();
        assert_eq!(check(&long, 0, 1 << 20, usize::MAX, all), Err(BlockError::TooLong));
        assert_eq!(check(&run, 0, 64, 32, |f| f != Frame::new(7)), Err(BlockError::NotOwner));
        let mut partial = run.clone();
        partial[2].len = 512;
        assert_eq!(check(&partial, 0, 64, 32, all), Err(BlockError::BadRange));
        assert_eq!(check(&[], 0, 64, 32, all), Err(BlockError::BadRange));
        let one = Span { frame: Frame::new(2), offset: 3584, len: 512 };
        assert_eq!(check(&[one], 63, 64, 1, all), Ok(512));
        assert_eq!(check(&[Span { len: 1024, ..one }], 0, 64, 1, all), Err(BlockError::BadRange));
        assert_eq!(check(&[Span { len: 100, ..one }], 0, 64, 1, all), Err(BlockError::BadRange));
    }

    #[test]
    fn a_requests_pages_are_cut_at_page_boundaries() {
        let mut p = Pages::NONE;
        addrs(&[page(5), page(2)], |a| p.set(a));
        assert_eq!(p.parts(8192).collect::<Vec<_>>(), [(5 * 4096, 4096), (2 * 4096, 4096)]);
        let mut one = Pages::NONE;
        addrs(&[Span { frame: Frame::new(3), offset: 0x200, len: 512 }], |a| one.set(a));
        assert_eq!(one.parts(512).collect::<Vec<_>>(), [(0x3200, 512)]);
        assert_eq!(one.parts(0).collect::<Vec<_>>(), [(0x3200, 0)]);
    }
}
