use super::*;

fn guard() -> BrowserGuard {
    let hosts: Vec<AllowedHost> = ["recapd.internal", "10.9.9.9"]
        .iter()
        .map(|h| h.parse().unwrap())
        .collect();
    let origins: Vec<AllowedOrigin> = ["https://chat.example.com", "http://[::1]:8000"]
        .iter()
        .map(|o| o.parse().unwrap())
        .collect();
    BrowserGuard::new(&hosts, &origins)
}

fn request(hosts: &[&str], origins: &[&str]) -> Request<()> {
    let mut request = Request::builder().uri("/recap.v1.LorebookService/ExportLorebook");
    for host in hosts {
        request = request.header(header::HOST, *host);
    }
    for origin in origins {
        request = request.header(header::ORIGIN, *origin);
    }
    request.body(()).unwrap()
}

#[test]
fn hosts_are_ip_literals_localhost_or_allowed_names_with_any_port_and_case() {
    for host in [
        "127.0.0.1",
        "127.0.0.1:50051",
        "127.0.0.1.:50051",
        "10.0.0.7:1",
        "[::1]:50051",
        "[2001:db8::1]",
        "localhost",
        "LOCALHOST:50051",
        "localhost.:50051",
        "recapd.internal",
        "RECAPD.Internal.:443",
    ] {
        assert_eq!(guard().admits(&request(&[host], &[])), Ok(()), "{host}");
    }
    for (host, refusal) in [
        ("attacker.example:50051", Refusal::HostNotAllowed),
        ("recapd.internal.attacker.example", Refusal::HostNotAllowed),
        ("app.localhost", Refusal::HostNotAllowed),
        ("localhost.attacker.example", Refusal::HostNotAllowed),
        ("2130706433", Refusal::HostNotAllowed),
        ("::1", Refusal::Host(HostError::Garbage)),
        ("[::1", Refusal::Host(HostError::Garbage)),
        ("localhost:http", Refusal::Host(HostError::Garbage)),
        ("", Refusal::Host(HostError::Garbage)),
    ] {
        assert_eq!(
            guard().admits(&request(&[host], &[])),
            Err(refusal),
            "{host:?}"
        );
    }
    assert_eq!(
        guard().admits(&request(&[], &[])),
        Err(Refusal::Host(HostError::Missing)),
        "HTTP/1.1 with no Host"
    );
    assert_eq!(
        guard().admits(&request(&["localhost", "attacker.example"], &[])),
        Err(Refusal::Host(HostError::Several))
    );
}

#[test]
fn origins_are_listed_or_the_requests_own() {
    for (host, origin) in [
        ("localhost:50051", "https://chat.example.com"),
        ("localhost:50051", "https://chat.example.com:443"),
        ("127.0.0.1:50051", "HTTPS://Chat.Example.Com"),
        ("[::1]:50051", "http://[0:0::1]:8000"),
        ("localhost:50051", "http://localhost:50051"),
        ("127.0.0.1:50051", "http://127.0.0.1:50051"),
        ("recapd.internal", "http://recapd.internal"),
        ("recapd.internal", "https://recapd.internal:443"),
        ("[::1]:8443", "https://[::1]:8443"),
    ] {
        assert_eq!(
            guard().admits(&request(&[host], &[origin])),
            Ok(()),
            "{host} from {origin}"
        );
    }
    for (host, origin) in [
        ("localhost:50051", "http://chat.example.com"),
        ("localhost:50051", "https://chat.example.com:8443"),
        ("localhost:50051", "http://localhost:8000"),
        ("localhost:50051", "http://127.0.0.1:50051"),
        ("127.0.0.1:50051", "http://attacker.example:50051"),
        ("recapd.internal", "http://recapd.internal:8080"),
        ("localhost:50051", "null"),
        ("localhost:50051", "file://"),
        ("localhost:50051", "http://localhost:50051/"),
        ("localhost:50051", ""),
    ] {
        assert_eq!(
            guard().admits(&request(&[host], &[origin])),
            Err(Refusal::OriginNotAllowed),
            "{host} from {origin:?}"
        );
    }
    assert_eq!(
        guard().admits(&request(
            &["localhost"],
            &["https://chat.example.com", "http://attacker.example"]
        )),
        Err(Refusal::SeveralOrigins)
    );
    // The host is checked first: an origin cannot vouch for a foreign host.
    assert_eq!(
        guard().admits(&request(
            &["attacker.example"],
            &["https://chat.example.com"]
        )),
        Err(Refusal::HostNotAllowed)
    );
}

#[test]
fn by_default_only_ip_literals_and_localhost_are_answered() {
    let guard = BrowserGuard::new(&[], &[]);
    assert_eq!(guard.admits(&request(&["localhost:1"], &[])), Ok(()));
    assert_eq!(guard.admits(&request(&["[::1]:1"], &[])), Ok(()));
    assert_eq!(
        guard.admits(&request(&["recapd.internal"], &[])),
        Err(Refusal::HostNotAllowed)
    );
    assert_eq!(
        guard.admits(&request(&["localhost:1"], &["http://localhost:8000"])),
        Err(Refusal::OriginNotAllowed)
    );
}
