//! The object tracker (paper 004 §3.3): everything a driver holds from the
//! kernel, recorded by the wrappers as they hand it out, so that the
//! kernel can check each later use against it and take it all back when
//! the driver is disabled. Fixed capacity: a driver cannot grow kernel
//! memory by asking for more.

/// One object a driver holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Object {
    /// DMA pages from `dma_alloc`, mapped for the driver at `va`.
    Dma { pa: u64, va: u64, pages: u64 },
    /// A buffer lent with request `tag` until the driver completes it:
    /// `len` bytes mapped for the driver from `va`, on pages anywhere in
    /// memory (the first at `pa`; the domain knows each page's).
    Lent { tag: u64, va: u64, pa: u64, len: u64 },
    /// Device registers at `pa`, mapped for the driver at `va`.
    Mmio { pa: u64, va: u64, len: u64 },
    /// The device's interrupts, delivered to the driver on `vector`.
    Irq { vector: u8 },
}

pub const CAPACITY: usize = 96;

/// Why the tracker refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrackError {
    Full,
    NotHeld,
}

/// The objects one driver holds.
pub struct Tracker {
    slots: [Option<Object>; CAPACITY],
    /// Slots from here on are empty (scans stop here).
    used: usize,
}

impl Default for Tracker {
    fn default() -> Self {
        Tracker { slots: [None; CAPACITY], used: 0 }
    }
}

impl Tracker {
    pub fn add(&mut self, o: Object) -> Result<(), TrackError> {
        let i = self.slots.iter().position(Option::is_none).ok_or(TrackError::Full)?;
        self.slots[i] = Some(o);
        self.used = self.used.max(i + 1);
        Ok(())
    }

    /// Removes exactly `o` (one instance).
    pub fn remove(&mut self, o: Object) -> Result<(), TrackError> {
        let slot = self.slots[..self.used].iter_mut().find(|s| **s == Some(o)).ok_or(TrackError::NotHeld)?;
        *slot = None;
        Ok(())
    }

    /// The lent buffer of request `tag`, removed.
    pub fn take_lent(&mut self, tag: u64) -> Option<Object> {
        let lent = |s: &&mut Option<Object>| matches!(s, Some(Object::Lent { tag: t, .. }) if *t == tag);
        self.slots[..self.used].iter_mut().find(lent)?.take()
    }

    /// The physical address of `va..va + len` if it lies inside one page
    /// of one lent buffer (`page` gives a lent page's address) or inside
    /// one DMA allocation (as the driver sees them).
    pub fn device_address(&self, va: u64, len: u64, page: impl Fn(u64) -> Option<u64>) -> Option<u64> {
        self.iter().find_map(|o| match o {
            Object::Lent { va: b, len: l, .. } => lent_address(va, len, b, l, &page),
            Object::Dma { pa, va: b, pages } if inside(va, len, b, pages * 4096) => Some(pa + (va - b)),
            _ => None,
        })
    }

    /// Whether `va..va + len` lies inside one lent buffer.
    pub fn lent_covers(&self, va: u64, len: u64) -> bool {
        self.iter().any(|o| matches!(o, Object::Lent { va: b, len: l, .. } if inside(va, len, b, l)))
    }

    pub fn iter(&self) -> impl Iterator<Item = Object> + '_ {
        self.slots[..self.used].iter().filter_map(|s| *s)
    }

    /// Everything, removed (the driver is being disabled).
    pub fn drain(&mut self) -> impl Iterator<Item = Object> + '_ {
        let n = core::mem::take(&mut self.used);
        self.slots[..n].iter_mut().filter_map(|s| s.take())
    }

    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.iter().count()
    }
}

/// The device's address of `va..va + len` if it lies inside one page of
/// the buffer lent at `b..b + l` (`page` gives a lent page's address).
pub fn lent_address(va: u64, len: u64, b: u64, l: u64, page: impl Fn(u64) -> Option<u64>) -> Option<u64> {
    // `inside` first: it rules out an overflow of `va + len`.
    if !inside(va, len, b, l) || va & !4095 != (va + len - 1) & !4095 {
        return None;
    }
    page(va & !4095).map(|p| p + (va & 4095))
}

/// Whether `[a, a + n)` is non-empty and lies inside `[b, b + m)`.
pub fn inside(a: u64, n: u64, b: u64, m: u64) -> bool {
    match (a.checked_add(n), b.checked_add(m)) {
        (Some(ae), Some(be)) => n > 0 && a >= b && ae <= be,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lent_buffer_covers_only_its_own_range_until_taken() {
        let mut t = Tracker::default();
        let lent = Object::Lent { tag: 7, va: 0x1000, pa: 0x9000, len: 0x200 };
        t.add(lent).unwrap();
        assert!(t.lent_covers(0x1000, 0x200));
        assert_eq!(t.device_address(0x1100, 0x10, |p| Some(p + 0x8000)), Some(0x9100));
        assert!(!t.lent_covers(0x1100, 0x101));
        assert!(!t.lent_covers(0xFFF, 2));
        assert!(!t.lent_covers(0x1000, 0));
        assert!(!t.lent_covers(u64::MAX, 2));
        assert_eq!(t.take_lent(7), Some(lent));
        assert_eq!(t.device_address(0x1000, 0x200, Some), None);
        assert_eq!(t.take_lent(7), None);
    }

    #[test]
    fn a_run_is_reached_one_page_at_a_time() {
        // A run of two frames far apart, lent at consecutive addresses.
        let mut t = Tracker::default();
        t.add(Object::Lent { tag: 3, va: 0x4000, pa: 0x9_0000, len: 8192 }).unwrap();
        let page = |va| match va {
            0x4000 => Some(0x9_0000),
            0x5000 => Some(0x2_0000),
            _ => None,
        };
        assert_eq!(t.device_address(0x5000, 4096, page), Some(0x2_0000));
        assert_eq!(t.device_address(0x4200, 512, page), Some(0x9_0200));
        // Across the pages: no one device address, refused.
        assert_eq!(t.device_address(0x4800, 4096, page), None);
        assert_eq!(t.device_address(0x5000, 4097, page), None);
    }

    #[test]
    fn only_an_object_held_can_be_given_back() {
        let mut t = Tracker::default();
        t.add(Object::Dma { pa: 0x5000, va: 0x10_0000, pages: 2 }).unwrap();
        assert_eq!(t.remove(Object::Dma { pa: 0x5000, va: 0x10_0000, pages: 1 }), Err(TrackError::NotHeld));
        assert_eq!(t.device_address(0x10_0800, 0x1000, Some), Some(0x5800));
        assert_eq!(t.device_address(0x10_1800, 0x1000, Some), None);
        assert_eq!(t.remove(Object::Dma { pa: 0x5000, va: 0x10_0000, pages: 2 }), Ok(()));
        assert_eq!(t.remove(Object::Dma { pa: 0x5000, va: 0x10_0000, pages: 2 }), Err(TrackError::NotHeld));
    }

    #[test]
    fn a_slot_freed_below_the_high_water_mark_is_reused_and_still_found() {
        let mut t = Tracker::default();
        for v in 0..3 {
            t.add(Object::Irq { vector: v }).unwrap();
        }
        t.remove(Object::Irq { vector: 0 }).unwrap();
        t.add(Object::Lent { tag: 9, va: 0x2000, pa: 0x7000, len: 512 }).unwrap();
        assert_eq!(t.count(), 3);
        assert_eq!(t.device_address(0x2000, 512, |_| Some(0x7000)), Some(0x7000));
        assert!(t.iter().any(|o| o == Object::Irq { vector: 2 }));
    }

    #[test]
    fn the_tracker_is_bounded_and_drains_everything() {
        let mut t = Tracker::default();
        for i in 0..CAPACITY as u64 {
            t.add(Object::Irq { vector: i as u8 }).unwrap();
        }
        assert_eq!(t.add(Object::Irq { vector: 0 }), Err(TrackError::Full));
        assert_eq!(t.drain().count(), CAPACITY);
        assert_eq!(t.count(), 0);
    }
}
