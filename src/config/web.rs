//! The browser-facing options: the origins whose pages may call the gRPC
//! listener over gRPC-Web (`--grpc-web-allowed-origins`), the host names
//! browsers may reach it by besides IP literals and `localhost`
//! (`--allowed-hosts`), and the inspector page's address
//! (`--inspector-listen`).

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

use crate::web_host::Host;

/// Browser-facing options, flattened into [`super::Config`].
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WebOptions {
    /// Origins (scheme://host[:port], comma-separated) whose web pages may
    /// call the gRPC listener over gRPC-Web, e.g.
    /// `https://chat.example.com,http://localhost:8000`. None by default:
    /// gRPC-Web from clients that are not browsers (and from the inspector,
    /// which is served from its own address) works without it.
    #[arg(
        long,
        env = "RECAPD_GRPC_WEB_ALLOWED_ORIGINS",
        value_name = "ORIGINS",
        value_delimiter = ','
    )]
    pub grpc_web_allowed_origins: Vec<AllowedOrigin>,

    /// Host names (comma-separated, any case, no port: any port matches)
    /// by which browsers may reach the gRPC listener, besides IP literals
    /// and `localhost`, which are always answered, e.g.
    /// `recapd.internal,recapd`. Requests from browsers (gRPC-Web, CORS
    /// preflights, HTTP/1.1, anything with an Origin header) naming another
    /// host get 403: a web page whose DNS name was pointed at this machine
    /// (DNS rebinding) cannot call recapd. Native gRPC is answered
    /// whatever host it names. None by default.
    #[arg(
        long,
        env = "RECAPD_ALLOWED_HOSTS",
        value_name = "HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<AllowedHost>,

    /// Address of the inspector, a web page to look at and steer recapd
    /// from a browser (plain HTTP, or HTTPS with --tls-cert). Off unless
    /// set. It calls the same API as any client, with the same tokens.
    #[arg(long, env = "RECAPD_INSPECTOR_LISTEN", value_name = "ADDR:PORT")]
    pub inspector_listen: Option<SocketAddr>,
}

/// One web origin allowed to call over gRPC-Web: `scheme://host[:port]`
/// with scheme `http` or `https`, kept as a browser sends it in `Origin`
/// (lower case, no path, no default port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedOrigin(String);

impl AllowedOrigin {
    /// The origin as a browser's `Origin` header carries it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AllowedOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for AllowedOrigin {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let expected = "expected an origin such as https://chat.example.com or http://localhost:8000 (scheme://host[:port], no path)";
        let uri: http::Uri = text
            .parse()
            .map_err(|e| format!("{text:?}: {e}; {expected}"))?;
        let scheme = uri
            .scheme_str()
            .map(str::to_ascii_lowercase)
            .ok_or_else(|| format!("{text:?}: no scheme; {expected}"))?;
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return Err(format!("{text:?}: the scheme must be http or https")),
        };
        let authority = uri
            .authority()
            .ok_or_else(|| format!("{text:?}: no host; {expected}"))?;
        if authority.as_str().contains('@') {
            return Err(format!("{text:?}: an origin has no user name; {expected}"));
        }
        let has_path = !matches!(uri.path(), "" | "/") || uri.query().is_some();
        if has_path || text.ends_with('/') {
            return Err(format!("{text:?}: an origin has no path; {expected}"));
        }
        let host = authority.host().to_ascii_lowercase();
        let origin = match authority.port_u16() {
            Some(port) if port != default_port => format!("{scheme}://{host}:{port}"),
            _ => format!("{scheme}://{host}"),
        };
        Ok(AllowedOrigin(origin))
    }
}

/// One host name browsers may reach the gRPC listener by
/// (`--allowed-hosts`): a DNS name, kept in lower case without a final dot
/// (an IP literal is accepted too, though every IP literal is answered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHost(Host);

impl AllowedHost {
    /// The host.
    pub fn host(&self) -> &Host {
        &self.0
    }
}

impl fmt::Display for AllowedHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for AllowedHost {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let expected =
            "expected a host name such as recapd.internal (letters, digits, '-', '_' and '.')";
        if text.contains('*') {
            return Err(format!(
                "{text:?}: no wildcards; list each name; {expected}"
            ));
        }
        if let Some(host) = Host::parse(text) {
            return Ok(AllowedHost(host));
        }
        if text.contains("://") || text.contains('/') || text.contains(':') {
            return Err(format!(
                "{text:?}: a host name alone, with no scheme, port or path (any port matches); {expected}"
            ));
        }
        Err(format!("{text:?}: not a host name; {expected}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_hosts_are_names_in_lower_case() {
        for (given, kept) in [
            ("recapd.internal", "recapd.internal"),
            (" Recapd.Internal. ", "recapd.internal"),
            ("my_service", "my_service"),
            ("10.0.0.1", "10.0.0.1"),
            ("[::1]", "[::1]"),
        ] {
            assert_eq!(given.parse::<AllowedHost>().unwrap().to_string(), kept);
        }
        for (given, reason) in [
            ("recapd.internal:50051", "no scheme, port or path"),
            ("http://recapd.internal", "no scheme, port or path"),
            ("recapd.internal/x", "no scheme, port or path"),
            ("*.internal", "no wildcards"),
            ("*", "no wildcards"),
            ("", "not a host name"),
            ("a..b", "not a host name"),
            ("exa mple", "not a host name"),
        ] {
            let error = given.parse::<AllowedHost>().unwrap_err();
            assert!(error.contains(reason), "{given:?}: {error}");
        }
    }

    #[test]
    fn origins_are_kept_as_browsers_send_them() {
        for (given, kept) in [
            ("https://chat.example.com", "https://chat.example.com"),
            ("HTTP://LocalHost:8000", "http://localhost:8000"),
            ("https://chat.example.com:443", "https://chat.example.com"),
            ("http://127.0.0.1:80", "http://127.0.0.1"),
            ("http://[::1]:8000", "http://[::1]:8000"),
            (" http://a.test ", "http://a.test"),
        ] {
            assert_eq!(given.parse::<AllowedOrigin>().unwrap().as_str(), kept);
        }
    }

    #[test]
    fn what_is_not_an_origin_is_refused_with_the_reason() {
        for (given, reason) in [
            ("chat.example.com", "no scheme"),
            ("ftp://chat.example.com", "http or https"),
            ("https://chat.example.com/", "no path"),
            ("https://chat.example.com/app", "no path"),
            ("https://chat.example.com?x=1", "no path"),
            ("https://user@chat.example.com", "no user name"),
            ("*", "expected an origin"),
            ("", "expected an origin"),
        ] {
            let error = given.parse::<AllowedOrigin>().unwrap_err();
            assert!(error.contains(reason), "{given:?}: {error}");
        }
    }
}
