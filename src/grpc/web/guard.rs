//! The gRPC listener's guard against DNS rebinding: a web page whose DNS
//! name an attacker points at 127.0.0.1 is, to the browser, the page's own
//! origin, so CORS lets it call recapd freely. What gives it away is the
//! host it names: its own DNS name. [`BrowserGuard`] answers a request
//! shaped by a browser only when it names a host recapd is known by, and
//! comes, if it says where from (`Origin`), from an allowed origin.
//!
//! The rules, precisely:
//! - The request's host ([`request_host`]: the `:authority` of HTTP/2, the
//!   `Host` header of HTTP/1.1; exactly one, well formed, both the same
//!   when both are present) is an IP literal (v4, or bracketed v6), or
//!   `localhost`, or a name of `--allowed-hosts`; any port, any case, one
//!   final dot or none.
//! - Its `Origin`, when it has one (exactly one), is one of
//!   `--grpc-web-allowed-origins`, or the request's own origin: the
//!   Origin's host is the request's host and its port (its scheme's
//!   default when it has none) the request's port (the Origin scheme's
//!   default when the request names none). `null` and schemes other than
//!   http and https are no origin of ours.

use std::sync::Arc;

use http::Request;
use http::header::{self, HeaderValue};

use crate::config::{AllowedHost, AllowedOrigin};
use crate::web_host::{Host, HostError, HostPort, Origin, request_host};

/// Why a browser-shaped request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its host could not be read.
    Host(HostError),
    /// Its host is a DNS name that is neither `localhost` nor allowed.
    HostNotAllowed,
    /// More than one `Origin` header.
    SeveralOrigins,
    /// Its `Origin` is neither allowed nor its own.
    OriginNotAllowed,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Host(error) => write!(f, "{error}"),
            Refusal::HostNotAllowed => f.write_str("a host name not in --allowed-hosts"),
            Refusal::SeveralOrigins => f.write_str("several Origin headers"),
            Refusal::OriginNotAllowed => {
                f.write_str("an Origin neither in --grpc-web-allowed-origins nor the request's own")
            }
        }
    }
}

/// The hosts and origins browser-shaped requests must name (see the
/// module's rules). Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct BrowserGuard {
    /// The DNS names of `--allowed-hosts` (its IP literals need no entry).
    hosts: Arc<[String]>,
    /// The origins of `--grpc-web-allowed-origins`, ports made explicit.
    origins: Arc<[Origin]>,
}

impl BrowserGuard {
    /// The guard allowing the names of `hosts` (besides IP literals and
    /// `localhost`) and the pages of `origins` (besides a request's own).
    pub fn new(hosts: &[AllowedHost], origins: &[AllowedOrigin]) -> BrowserGuard {
        let hosts = hosts
            .iter()
            .filter_map(|allowed| match allowed.host() {
                Host::Name(name) => Some(name.clone()),
                Host::Ip(_) => None,
            })
            .collect();
        // An AllowedOrigin is http(s)://host[:port] with a host http::Uri
        // accepted; one that Origin::parse would not read matches nothing.
        let origins = origins
            .iter()
            .filter_map(|allowed| Origin::parse(allowed.as_str()))
            .collect();
        BrowserGuard { hosts, origins }
    }

    /// Whether `host` may be named: an IP literal, `localhost`, or a name
    /// of `--allowed-hosts`.
    fn allows_host(&self, host: &Host) -> bool {
        match host {
            Host::Ip(_) => true,
            Host::Name(name) => host.is_localhost() || self.hosts.iter().any(|h| h == name),
        }
    }

    /// Whether `origin` may call a request naming `named`.
    fn allows_origin(&self, origin: &HeaderValue, named: &HostPort) -> bool {
        let Some(origin) = origin.to_str().ok().and_then(Origin::parse) else {
            return false;
        };
        self.origins.contains(&origin) || origin.is_same_as(named)
    }

    /// Whether `request`, shaped by a browser, may be served.
    pub fn admits<B>(&self, request: &Request<B>) -> Result<(), Refusal> {
        let named = request_host(request).map_err(Refusal::Host)?;
        if !self.allows_host(&named.host) {
            return Err(Refusal::HostNotAllowed);
        }
        let mut origins = request.headers().get_all(header::ORIGIN).iter();
        match (origins.next(), origins.next()) {
            (None, _) => Ok(()),
            (Some(_), Some(_)) => Err(Refusal::SeveralOrigins),
            (Some(origin), None) if self.allows_origin(origin, &named) => Ok(()),
            (Some(_), None) => Err(Refusal::OriginNotAllowed),
        }
    }
}

#[cfg(test)]
mod tests;
