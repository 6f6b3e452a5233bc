//! Socket options: what each one changes and when it takes effect.
//! Buffer sizes apply to connections made after they are set (smoltcp's
//! buffers are fixed per socket); the TCP behaviours (Nagle, delayed ACK,
//! keep-alive) also to the live connection. Timeouts are kept for the
//! personality, which does the blocking.

use alloc::vec;

use smoltcp::socket::{tcp, udp};
use smoltcp::time::Duration;

use crate::errno::Errno;
use crate::link::Link;
use crate::socket::SocketId;
use crate::stack::Stack;

/// One option and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opt {
    ReuseAddr(bool),
    ReusePort(bool),
    KeepAlive(bool),
    /// `SO_LINGER`: `Some(0)` resets the connection on close.
    Linger(Option<u16>),
    /// `TCP_NODELAY`: Nagle off.
    NoDelay(bool),
    /// `TCP_QUICKACK`: no delayed ACK.
    QuickAck(bool),
    RcvBuf(usize),
    SndBuf(usize),
    /// Milliseconds, `None` for none.
    RcvTimeo(Option<u64>),
    SndTimeo(Option<u64>),
    /// `IPV6_V6ONLY`: an IPv6 socket takes no IPv4 peers (set before bind).
    V6Only(bool),
    /// `IPV6_UNICAST_HOPS`: the hop limit (TTL) of what the socket sends,
    /// `None` for the default (64).
    HopLimit(Option<u8>),
    /// `IPV6_RECVHOPLIMIT`, `IPV6_RECVTCLASS`: what recvmsg reports
    /// (kept for the personality).
    RecvHopLimit(bool),
    RecvTClass(bool),
}

/// An option's name, to read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptName {
    ReuseAddr,
    ReusePort,
    KeepAlive,
    Linger,
    NoDelay,
    QuickAck,
    RcvBuf,
    SndBuf,
    RcvTimeo,
    SndTimeo,
    V6Only,
    HopLimit,
    RecvHopLimit,
    RecvTClass,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opts {
    pub reuse_addr: bool,
    pub reuse_port: bool,
    pub keep_alive: bool,
    pub linger: Option<u16>,
    pub no_delay: bool,
    pub quick_ack: bool,
    pub rcvbuf: usize,
    pub sndbuf: usize,
    pub rcvtimeo: Option<u64>,
    pub sndtimeo: Option<u64>,
    pub v6only: bool,
    pub hop_limit: Option<u8>,
    pub recv_hop_limit: bool,
    pub recv_tclass: bool,
}

pub const MIN_BUF: usize = 2048;
pub const MAX_BUF: usize = 4 << 20;
pub const DEFAULT_BUF: usize = 64 << 10;
/// Keep-alive probe interval when `SO_KEEPALIVE` is on (Linux waits 2 h
/// before the first; smoltcp has one interval).
pub const KEEPALIVE_MS: u64 = 75_000;
/// smoltcp's delayed-ACK time when on.
pub const ACK_DELAY_MS: u64 = 10;
/// Data segments a new connection ACKs at once before it delays its
/// ACKs (Linux's quick-ACK mode at a connection's start,
/// `TCP_MAX_QUICKACKS`): a request-response exchange never waits for a
/// delayed ACK, which with Nagle on at the sender would hold its second
/// segment back for the whole delay.
pub const QUICK_ACKS: u8 = 16;
/// Datagrams a UDP socket queues each way.
const UDP_PACKETS: usize = 64;

impl Default for Opts {
    fn default() -> Opts {
        Opts {
            reuse_addr: false,
            reuse_port: false,
            keep_alive: false,
            linger: None,
            no_delay: false,
            quick_ack: false,
            rcvbuf: DEFAULT_BUF,
            sndbuf: DEFAULT_BUF,
            rcvtimeo: None,
            sndtimeo: None,
            v6only: false,
            hop_limit: None,
            recv_hop_limit: false,
            recv_tclass: false,
        }
    }
}

impl Opts {
    /// Sets `t` as these options say; `quick`: the connection is still in
    /// its quick-ACK start (`QUICK_ACKS`).
    pub(crate) fn apply(&self, t: &mut tcp::Socket, quick: bool) {
        t.set_nagle_enabled(!self.no_delay);
        self.set_ack_delay(t, quick);
        t.set_keep_alive(self.keep_alive.then(|| Duration::from_millis(KEEPALIVE_MS)));
        t.set_hop_limit(self.hops());
    }

    pub(crate) fn set_ack_delay(&self, t: &mut tcp::Socket, quick: bool) {
        let delayed = !(self.quick_ack || quick);
        t.set_ack_delay(delayed.then(|| Duration::from_millis(ACK_DELAY_MS)));
    }

    /// The hop limit for smoltcp, which refuses 0 (a packet that may not
    /// leave the host: loopback, the only place it could go, delivers it
    /// with 1 all the same).
    pub(crate) fn hops(&self) -> Option<u8> {
        self.hop_limit.map(|h| h.max(1))
    }

    pub(crate) fn tcp_socket(&self) -> tcp::Socket<'static> {
        let mut t = tcp::Socket::new(
            tcp::SocketBuffer::new(vec![0; self.rcvbuf]),
            tcp::SocketBuffer::new(vec![0; self.sndbuf]),
        );
        self.apply(&mut t, true);
        t
    }

    pub(crate) fn udp_socket(&self) -> udp::Socket<'static> {
        let buf =
            |bytes| udp::PacketBuffer::new(vec![udp::PacketMetadata::EMPTY; UDP_PACKETS], vec![0; bytes]);
        let mut u = udp::Socket::new(buf(self.rcvbuf), buf(self.sndbuf));
        u.set_hop_limit(self.hops());
        u
    }
}

impl<L: Link> Stack<L> {
    pub fn set_option(&mut self, s: SocketId, opt: Opt) -> Result<(), Errno> {
        let buf = |n: usize| n.clamp(MIN_BUF, MAX_BUF);
        if let Opt::V6Only(_) = opt {
            let sock = self.sock(s)?;
            if !sock.v6 {
                return Err(Errno::ENOPROTOOPT);
            }
            if sock.bound.is_some() {
                return Err(Errno::EINVAL); // Linux: only before bind
            }
        }
        let o = self.sock_opts(s)?;
        match opt {
            Opt::ReuseAddr(v) => o.reuse_addr = v,
            Opt::ReusePort(v) => o.reuse_port = v,
            Opt::KeepAlive(v) => o.keep_alive = v,
            Opt::Linger(v) => o.linger = v,
            Opt::NoDelay(v) => o.no_delay = v,
            Opt::QuickAck(v) => o.quick_ack = v,
            Opt::RcvBuf(n) => o.rcvbuf = buf(n),
            Opt::SndBuf(n) => o.sndbuf = buf(n),
            Opt::RcvTimeo(t) => o.rcvtimeo = t,
            Opt::SndTimeo(t) => o.sndtimeo = t,
            Opt::V6Only(v) => o.v6only = v,
            Opt::HopLimit(h) => o.hop_limit = h,
            Opt::RecvHopLimit(v) => o.recv_hop_limit = v,
            Opt::RecvTClass(v) => o.recv_tclass = v,
        }
        let o = *o;
        if matches!(opt, Opt::KeepAlive(_) | Opt::NoDelay(_) | Opt::QuickAck(_) | Opt::HopLimit(_)) {
            for c in self.sock_conns(s)? {
                let conn = self.conn(c);
                if conn.udp_port.is_none() {
                    let quick = conn.quick_acks > 0;
                    o.apply(conn.tcp(), quick);
                    self.dirty.push(c); // Nagle off flushes what it held back
                } else {
                    // Datagrams already sent keep the limit they were sent with.
                    self.after(c);
                    self.conn(c).udp().set_hop_limit(o.hops());
                }
            }
        }
        Ok(())
    }

    pub fn option(&mut self, s: SocketId, name: OptName) -> Result<Opt, Errno> {
        let o = *self.sock_opts(s)?;
        Ok(match name {
            OptName::ReuseAddr => Opt::ReuseAddr(o.reuse_addr),
            OptName::ReusePort => Opt::ReusePort(o.reuse_port),
            OptName::KeepAlive => Opt::KeepAlive(o.keep_alive),
            OptName::Linger => Opt::Linger(o.linger),
            OptName::NoDelay => Opt::NoDelay(o.no_delay),
            OptName::QuickAck => Opt::QuickAck(o.quick_ack),
            OptName::RcvBuf => Opt::RcvBuf(o.rcvbuf),
            OptName::SndBuf => Opt::SndBuf(o.sndbuf),
            OptName::RcvTimeo => Opt::RcvTimeo(o.rcvtimeo),
            OptName::SndTimeo => Opt::SndTimeo(o.sndtimeo),
            OptName::V6Only => Opt::V6Only(o.v6only),
            OptName::HopLimit => Opt::HopLimit(o.hop_limit),
            OptName::RecvHopLimit => Opt::RecvHopLimit(o.recv_hop_limit),
            OptName::RecvTClass => Opt::RecvTClass(o.recv_tclass),
        })
    }
}
