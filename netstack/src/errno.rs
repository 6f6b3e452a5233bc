//! Errors of the socket calls, as the Linux errno each one means (the
//! Linux personality returns `-(e as i32)`).

/// A socket call's failure; the value is Linux's errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Errno {
    /// No such socket.
    EBADF = 9,
    /// Nothing to do now; retry when `readiness` says so.
    EAGAIN = 11,
    /// The resource is taken (another socket is Cheetah's).
    EBUSY = 16,
    /// Bad argument (e.g. `listen` on an unbound UDP socket, a bad option value).
    EINVAL = 22,
    /// The connection was shut for writing, or the peer is gone.
    EPIPE = 32,
    /// `send` on an unconnected datagram socket without an address.
    EDESTADDRREQ = 89,
    /// Datagram larger than the socket's buffer.
    EMSGSIZE = 90,
    /// Option not known at that level.
    ENOPROTOOPT = 92,
    /// Operation not supported by this kind of socket.
    EOPNOTSUPP = 95,
    /// An IPv6 address for an IPv4 socket.
    EAFNOSUPPORT = 97,
    /// Address (port) taken.
    EADDRINUSE = 98,
    /// Not an address of this machine.
    EADDRNOTAVAIL = 99,
    /// No route (no address configured yet).
    ENETUNREACH = 101,
    /// The peer reset the connection.
    ECONNRESET = 104,
    /// Out of buffers, ports or sockets.
    ENOBUFS = 105,
    EISCONN = 106,
    ENOTCONN = 107,
    ETIMEDOUT = 110,
    ECONNREFUSED = 111,
    /// A connect is already under way.
    EALREADY = 114,
    /// The connect has started; wait for `POLLOUT`.
    EINPROGRESS = 115,
}

impl Errno {
    pub fn linux(self) -> i32 {
        self as i32
    }
}
