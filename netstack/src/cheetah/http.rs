//! The request side of HTTP/1.0 and 1.1, as much as a static file server
//! needs: find the end of the header, take a `GET`'s path. Anything else
//! is a bad request; the rest of the header is not looked at.

/// Longest request header taken (a longer one is a bad request).
pub const MAX_REQUEST: usize = 4096;

#[derive(Debug, PartialEq, Eq)]
pub enum Request<'a> {
    /// `GET PATH HTTP/1.x`, the path without its query.
    Get(&'a [u8]),
    Bad,
}

/// The request in `buf`, or `None` while its header is incomplete.
pub fn parse(buf: &[u8]) -> Option<Request<'_>> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let line = buf[..end].split(|&b| b == b'\r').next().unwrap_or(&[]);
    let mut words = line.split(|&b| b == b' ');
    let (Some(b"GET"), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Some(Request::Bad);
    };
    if !matches!(version, b"HTTP/1.0" | b"HTTP/1.1") || target.first() != Some(&b'/') {
        return Some(Request::Bad);
    }
    let path = target.split(|&b| b == b'?').next().unwrap_or(target);
    if path.iter().any(|&b| b < 0x21 || b == 0x7f) {
        return Some(Request::Bad);
    }
    Some(Request::Get(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests() {
        assert_eq!(parse(b"GET /a HTTP/1.1\r\nHost: x\r\n"), None);
        assert_eq!(parse(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"), Some(Request::Get(b"/a")));
        assert_eq!(parse(b"GET /a?x=1 HTTP/1.0\r\n\r\n"), Some(Request::Get(b"/a")));
        assert_eq!(parse(b"POST /a HTTP/1.1\r\n\r\n"), Some(Request::Bad));
        assert_eq!(parse(b"GET a HTTP/1.1\r\n\r\n"), Some(Request::Bad));
        assert_eq!(parse(b"GET /a HTTP/2\r\n\r\n"), Some(Request::Bad));
        assert_eq!(parse(b"GET /a\r\n\r\n"), Some(Request::Bad));
        assert_eq!(parse(b"GET /a b HTTP/1.1\r\n\r\n"), Some(Request::Bad));
        assert_eq!(parse(b"\x00\xff\r\n\r\n"), Some(Request::Bad));
    }
}
