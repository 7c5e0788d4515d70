//! What the browser-facing checks share: reading the host a request names
//! (its HTTP/2 `:authority` or absolute-form target, and its HTTP/1.1
//! `Host` header) and a web origin (`Origin`, `--grpc-web-allowed-origins`).
//! The gRPC listener's guard against DNS rebinding (`grpc::web`) and the
//! inspector's loopback check both read hosts here, and `--allowed-hosts`
//! is validated with the same rules, so that the three cannot disagree on
//! what a host is.
//!
//! Everything here is strict: a host that is not a well-formed IP literal
//! or DNS name is not read at all (`None`), so a check built on it refuses
//! what it cannot understand.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use http::Request;
use http::header;

/// The longest DNS name (RFC 1035), without a final dot.
const MAX_NAME_LEN: usize = 253;

/// The longest label of a DNS name (RFC 1035).
const MAX_LABEL_LEN: usize = 63;

/// A host as a request or an origin names it: an IP literal, or a DNS name
/// in lower case without a final dot (so `LocalHost.` is `localhost`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// An IPv4 literal, or an IPv6 literal (written bracketed).
    Ip(IpAddr),
    /// A DNS name: labels of ASCII letters, digits, `-` and `_` (Docker's
    /// service names may hold `_`), 1 to 63 characters each, at most 253
    /// in all; lower case, no final dot.
    Name(String),
}

impl Host {
    /// Reads a bare host (no port): `127.0.0.1`, `[::1]`, `Example.COM.`.
    /// `None` for anything else: an empty text, an unbracketed IPv6
    /// literal, a zone id, a name with a character outside the labels'.
    pub fn parse(text: &str) -> Option<Host> {
        if let Some(inner) = text.strip_prefix('[') {
            let ip: Ipv6Addr = inner.strip_suffix(']')?.parse().ok()?;
            return Some(Host::Ip(IpAddr::V6(ip)));
        }
        // One final dot names the same host (the root of the DNS).
        let text = text.strip_suffix('.').unwrap_or(text);
        if let Ok(ip) = text.parse::<Ipv4Addr>() {
            return Some(Host::Ip(IpAddr::V4(ip)));
        }
        if text.is_empty() || text.len() > MAX_NAME_LEN {
            return None;
        }
        let well_formed = text.split('.').all(|label| {
            (1..=MAX_LABEL_LEN).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
        well_formed.then(|| Host::Name(text.to_ascii_lowercase()))
    }

    /// Whether this is `localhost` itself.
    pub fn is_localhost(&self) -> bool {
        matches!(self, Host::Name(name) if name == "localhost")
    }

    /// Whether this names the machine itself: a loopback IP, `localhost`
    /// or a name under it (`app.localhost`, which browsers resolve to
    /// loopback themselves).
    pub fn is_loopback(&self) -> bool {
        match self {
            Host::Ip(ip) => ip.is_loopback(),
            Host::Name(name) => name == "localhost" || name.ends_with(".localhost"),
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Host::Ip(IpAddr::V4(ip)) => write!(f, "{ip}"),
            Host::Name(name) => f.write_str(name),
        }
    }
}

/// A host with the port it was named with, if any: what an HTTP `Host`
/// header or an `:authority` carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    /// The host.
    pub host: Host,
    /// The port, when one was written.
    pub port: Option<u16>,
}

impl HostPort {
    /// Reads `host[:port]` (`localhost:8080`, `[::1]`, `10.0.0.1:50051`).
    /// `None` for anything else, a user name (`user@host`) and an empty or
    /// signed port included.
    pub fn parse(text: &str) -> Option<HostPort> {
        let (host, port) = match text.strip_prefix('[') {
            Some(rest) => {
                let end = rest.find(']')? + 1;
                let (host, after) = text.split_at(end + 1);
                match after {
                    "" => (host, None),
                    _ => (host, Some(after.strip_prefix(':')?)),
                }
            }
            None => match text.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text, None),
            },
        };
        let port = match port {
            None => None,
            Some(digits) => Some(parse_port(digits)?),
        };
        Some(HostPort {
            host: Host::parse(host)?,
            port,
        })
    }
}

/// A port of 1 to 5 ASCII digits (no sign, no space) up to 65535.
fn parse_port(digits: &str) -> Option<u16> {
    let plain = (1..=5).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    plain.then(|| digits.parse().ok()).flatten()
}

/// Why a request's host could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostError {
    /// Neither an authority nor a `Host` header.
    Missing,
    /// More than one `Host` header.
    Several,
    /// A host that is not an IP literal or a DNS name (with a port).
    Garbage,
    /// An authority and a `Host` header naming different hosts.
    Conflicting,
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HostError::Missing => "no host",
            HostError::Several => "several Host headers",
            HostError::Garbage => "a host that is not an IP literal or a DNS name",
            HostError::Conflicting => "an authority and a Host header that differ",
        })
    }
}

/// The host `request` names: the URI's authority (an HTTP/2 request's
/// `:authority`, an HTTP/1.1 absolute-form target), else its one `Host`
/// header; when it has both, they must name the same host and port.
pub fn request_host<B>(request: &Request<B>) -> Result<HostPort, HostError> {
    let mut host_headers = request.headers().get_all(header::HOST).iter();
    let host_header = host_headers.next();
    if host_headers.next().is_some() {
        return Err(HostError::Several);
    }
    let host_header = host_header
        .map(|value| {
            value
                .to_str()
                .ok()
                .and_then(HostPort::parse)
                .ok_or(HostError::Garbage)
        })
        .transpose()?;
    let authority = request
        .uri()
        .authority()
        .map(|authority| HostPort::parse(authority.as_str()).ok_or(HostError::Garbage))
        .transpose()?;
    match (authority, host_header) {
        (Some(authority), Some(host)) if authority != host => Err(HostError::Conflicting),
        (Some(named), _) | (None, Some(named)) => Ok(named),
        (None, None) => Err(HostError::Missing),
    }
}

/// A web origin's scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `http`, default port 80.
    Http,
    /// `https`, default port 443.
    Https,
}

impl Scheme {
    /// The port an origin of this scheme without a port has.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// A web origin (`scheme://host[:port]`) as `Origin` carries it, with its
/// port made explicit: `http://LocalHost` and `http://localhost:80` are the
/// same origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: Scheme,
    /// The host.
    pub host: Host,
    /// The port, the scheme's default when none was written.
    pub port: u16,
}

impl Origin {
    /// Reads `scheme://host[:port]` with scheme `http` or `https` (any
    /// case) and nothing after the authority. `None` for anything else:
    /// `null` (an opaque origin), other schemes, a path, a user name.
    pub fn parse(text: &str) -> Option<Origin> {
        let (scheme, authority) = text.split_once("://")?;
        let scheme = if scheme.eq_ignore_ascii_case("http") {
            Scheme::Http
        } else if scheme.eq_ignore_ascii_case("https") {
            Scheme::Https
        } else {
            return None;
        };
        let HostPort { host, port } = HostPort::parse(authority)?;
        Some(Origin {
            scheme,
            host,
            port: port.unwrap_or(scheme.default_port()),
        })
    }

    /// Whether this origin is the one of a page served at `named` (a
    /// request's host): the same host, and the same port, where a host
    /// named without a port has this origin's scheme's default one. The
    /// scheme is not compared: a listener speaks one (TLS or not) and the
    /// request reached it.
    pub fn is_same_as(&self, named: &HostPort) -> bool {
        self.host == named.host && self.port == named.port.unwrap_or(self.scheme.default_port())
    }
}

/// At most `max` characters of `text`, for a log line about a request
/// whose headers an attacker chose (the logger escapes what it writes
/// with `?`; this bounds its length).
pub fn clipped(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests;
