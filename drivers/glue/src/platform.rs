//! A virtio transport that accepts `VIRTIO_F_ACCESS_PLATFORM` when the
//! device offers it (virtio 1.x §6): a device behind an IOMMU (QEMU's
//! `iommu_platform=on`) offers it and refuses a driver that does not
//! accept it. `virtio-drivers` 0.13 never accepts it; its devices are
//! generic over the transport, so this wrapper adds the bit and forwards
//! everything else unchanged. Accepting it tells the device that its DMA
//! addresses are translated (by the IOMMU, which the kernel programs with
//! the physical addresses `share` gives: nothing else changes).

use virtio_drivers::transport::{DeviceStatus, DeviceType, InterruptStatus, Transport};
use virtio_drivers::{PhysAddr, Result};
use zerocopy::{FromBytes, Immutable, IntoBytes};

const ACCESS_PLATFORM: u64 = 1 << 33;

pub struct Platform<T> {
    inner: T,
    offered: bool,
}

impl<T: Transport> Platform<T> {
    pub fn new(inner: T) -> Self {
        Platform { inner, offered: false }
    }
}

impl<T: Transport> Transport for Platform<T> {
    fn device_type(&self) -> DeviceType {
        self.inner.device_type()
    }
    fn read_device_features(&mut self) -> u64 {
        let f = self.inner.read_device_features();
        self.offered = f & ACCESS_PLATFORM != 0;
        f
    }
    fn write_driver_features(&mut self, features: u64) {
        let platform = if self.offered { ACCESS_PLATFORM } else { 0 };
        self.inner.write_driver_features(features | platform)
    }
    fn max_queue_size(&mut self, queue: u16) -> u32 {
        self.inner.max_queue_size(queue)
    }
    fn notify(&mut self, queue: u16) {
        self.inner.notify(queue)
    }
    fn get_status(&self) -> DeviceStatus {
        self.inner.get_status()
    }
    fn set_status(&mut self, status: DeviceStatus) {
        self.inner.set_status(status)
    }
    fn set_guest_page_size(&mut self, size: u32) {
        self.inner.set_guest_page_size(size)
    }
    fn requires_legacy_layout(&self) -> bool {
        self.inner.requires_legacy_layout()
    }
    fn queue_set(&mut self, queue: u16, size: u32, desc: PhysAddr, driver: PhysAddr, device: PhysAddr) {
        self.inner.queue_set(queue, size, desc, driver, device)
    }
    fn queue_unset(&mut self, queue: u16) {
        self.inner.queue_unset(queue)
    }
    fn queue_used(&mut self, queue: u16) -> bool {
        self.inner.queue_used(queue)
    }
    fn ack_interrupt(&mut self) -> InterruptStatus {
        self.inner.ack_interrupt()
    }
    fn read_config_generation(&self) -> u32 {
        self.inner.read_config_generation()
    }
    fn read_config_space<V: FromBytes + IntoBytes>(&self, offset: usize) -> Result<V> {
        self.inner.read_config_space(offset)
    }
    fn write_config_space<V: IntoBytes + Immutable>(&mut self, offset: usize, value: V) -> Result<()> {
        self.inner.write_config_space(offset, value)
    }
}
