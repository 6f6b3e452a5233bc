//! The stack's side of Cheetah: a listening socket becomes Cheetah's when
//! its first file is published; from then on segments for its port go to
//! the server instead of smoltcp, and its timers run with the stack's.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::net::SocketAddrV4;

use super::{Emit, Server, Stats};
use crate::errno::Errno;
use crate::link::Link;
use crate::socket::{SockState, SockType, SocketId};
use crate::stack::{If, Stack};

/// The listening socket Cheetah serves, its port, and the server.
pub struct Cheetah {
    pub sock: usize,
    pub port: u16,
    pub server: Server,
}

/// The stack's two outputs, for the server's packets.
pub(crate) struct Outputs<'a, L> {
    pub link: &'a mut L,
    pub lo: &'a mut VecDeque<Vec<u8>>,
}

impl<L: Link> Emit for Outputs<'_, L> {
    fn emit(&mut self, eth: bool, frame: Vec<u8>) {
        if eth {
            self.link.send(&frame);
        } else {
            self.lo.push_back(frame);
        }
    }
}

impl<L: Link> Stack<L> {
    /// Publishes `body` as the answer to `GET path` on the listening
    /// socket `s`, which becomes Cheetah's (its connections are no longer
    /// accepted: Cheetah answers them). EINVAL: not a listening stream
    /// socket, or a bad path; EBUSY: another socket is Cheetah's.
    pub fn cheetah_publish(&mut self, s: SocketId, path: &[u8], body: &[u8]) -> Result<(), Errno> {
        let sock = self.socks.get(s.0).and_then(|x| x.as_ref()).ok_or(Errno::EBADF)?;
        let (SockType::Stream, SockState::Listening { .. }, Some(bound)) = (sock.ty, &sock.state, sock.bound)
        else {
            return Err(Errno::EINVAL);
        };
        match &mut self.cheetah {
            Some(c) if c.sock == s.0 => c.server.publish(path, body),
            Some(_) => Err(Errno::EBUSY),
            None => {
                let mut server = Server::new(self.seed.rotate_left(7) ^ 0x5eed);
                server.publish(path, body)?;
                self.cheetah = Some(Cheetah { sock: s.0, port: bound.port(), server });
                Ok(())
            }
        }
    }

    /// What Cheetah did on `s` (EINVAL if `s` is not Cheetah's).
    pub fn cheetah_stats(&mut self, s: SocketId) -> Result<(Stats, usize), Errno> {
        match &self.cheetah {
            Some(c) if c.sock == s.0 => Ok((c.server.stats(), c.server.connections())),
            _ => Err(Errno::EINVAL),
        }
    }

    /// Whether a TCP segment to `local` is Cheetah's.
    pub(crate) fn for_cheetah(&self, iface: If, local: SocketAddrV4) -> bool {
        self.cheetah
            .as_ref()
            .is_some_and(|c| c.port == local.port() && self.listener_for(iface, local) == Some(c.sock))
    }

    pub(crate) fn cheetah_input(&mut self, iface: If, frame: &[u8]) {
        let now = self.now.total_millis();
        if let Some(c) = &mut self.cheetah {
            let mut out = Outputs { link: &mut self.link, lo: &mut self.lo_queue };
            c.server.input(frame, iface == If::Eth, now, &mut out);
        }
    }

    pub(crate) fn cheetah_timers(&mut self) {
        let now = self.now.total_millis();
        if let Some(c) = &mut self.cheetah {
            if c.server.poll_at().is_some_and(|t| t <= now) {
                let mut out = Outputs { link: &mut self.link, lo: &mut self.lo_queue };
                c.server.timers(now, &mut out);
            }
        }
    }
}
