//! Cheetah's calls on the stack: a listening socket becomes Cheetah's when
//! its first file is published; from then on segments for its port go to
//! the server instead of smoltcp (`Stack::ingress`), and its timers run
//! with the stack's.

use super::{Cheetah, Server, Stats};
use crate::errno::Errno;
use crate::link::Link;
use crate::socket::{SockState, SockType, SocketId};
use crate::stack::Stack;

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
}
