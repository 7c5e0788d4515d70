use super::*;

fn name(text: &str) -> Host {
    Host::Name(text.into())
}

fn ip(text: &str) -> Host {
    Host::Ip(text.parse().unwrap())
}

#[test]
fn hosts_are_ip_literals_or_dns_names_in_lower_case_without_a_final_dot() {
    for (given, read) in [
        ("127.0.0.1", ip("127.0.0.1")),
        ("127.0.0.1.", ip("127.0.0.1")),
        ("[::1]", ip("::1")),
        ("[0:0:0:0:0:0:0:1]", ip("::1")),
        ("[::ffff:10.0.0.1]", ip("::ffff:10.0.0.1")),
        ("LocalHost", name("localhost")),
        ("localhost.", name("localhost")),
        ("Recapd.Internal", name("recapd.internal")),
        ("some_docker-service", name("some_docker-service")),
        ("2130706433", name("2130706433")),
    ] {
        assert_eq!(Host::parse(given), Some(read), "{given:?}");
    }
    let long_label = "a".repeat(64);
    let long_name = ["a".repeat(63).as_str(); 5].join(".");
    for garbage in [
        "",
        ".",
        "localhost..",
        "a..b",
        ".example",
        "::1",
        "[::1",
        "::1]",
        "[127.0.0.1]",
        "[fe80::1%25eth0]",
        "exa mple.com",
        "example.com\r\nx",
        "user@example.com",
        "*.example.com",
        "bücher.example",
        "example.com/path",
        long_label.as_str(),
        long_name.as_str(),
    ] {
        assert_eq!(Host::parse(garbage), None, "{garbage:?}");
    }
}

#[test]
fn only_loopback_ips_and_localhost_names_are_loopback() {
    for host in [
        "127.0.0.1",
        "127.9.9.9",
        "[::1]",
        "localhost",
        "app.localhost",
    ] {
        assert!(Host::parse(host).unwrap().is_loopback(), "{host}");
    }
    for host in [
        "10.0.0.1",
        "[::]",
        "0.0.0.0",
        "localhost.evil.example",
        "evillocalhost",
    ] {
        assert!(!Host::parse(host).unwrap().is_loopback(), "{host}");
    }
    assert!(name("localhost").is_localhost());
    assert!(!name("app.localhost").is_localhost());
}

#[test]
fn host_headers_carry_an_optional_port() {
    for (given, host, port) in [
        ("localhost:8080", name("localhost"), Some(8080)),
        ("LOCALHOST", name("localhost"), None),
        ("[::1]:50051", ip("::1"), Some(50051)),
        ("[::1]", ip("::1"), None),
        ("127.0.0.1:65535", ip("127.0.0.1"), Some(65535)),
        ("example.com.:443", name("example.com"), Some(443)),
    ] {
        assert_eq!(
            HostPort::parse(given),
            Some(HostPort { host, port }),
            "{given:?}"
        );
    }
    for garbage in [
        "",
        ":80",
        "localhost:",
        "localhost:+80",
        "localhost: 80",
        "localhost:65536",
        "localhost:000080",
        "localhost:80:80",
        "::1:80",
        "[::1]80",
        "[::1]:",
        "user@localhost:80",
        "localhost:80/x",
        " localhost",
    ] {
        assert_eq!(HostPort::parse(garbage), None, "{garbage:?}");
    }
}

fn request(authority: Option<&str>, hosts: &[&[u8]]) -> Request<()> {
    let uri = match authority {
        Some(authority) => format!("http://{authority}/recap.v1.X/Y"),
        None => "/recap.v1.X/Y".to_owned(),
    };
    let mut request = Request::builder().uri(uri);
    for host in hosts {
        request = request.header(header::HOST, http::HeaderValue::from_bytes(host).unwrap());
    }
    request.body(()).unwrap()
}

#[test]
fn a_request_names_one_host_or_it_has_none() {
    let localhost = HostPort {
        host: name("localhost"),
        port: Some(8080),
    };
    assert_eq!(
        request_host(&request(None, &[b"LocalHost:8080"])),
        Ok(localhost.clone())
    );
    assert_eq!(
        request_host(&request(Some("localhost:8080"), &[])),
        Ok(localhost.clone())
    );
    assert_eq!(
        request_host(&request(Some("localhost:8080"), &[b"localhost:8080"])),
        Ok(localhost)
    );
    assert_eq!(
        request_host(&request(Some("localhost:8080"), &[b"evil.example:8080"])),
        Err(HostError::Conflicting)
    );
    assert_eq!(
        request_host(&request(None, &[b"localhost", b"evil.example"])),
        Err(HostError::Several)
    );
    assert_eq!(
        request_host(&request(None, &[b"localhost", b"localhost"])),
        Err(HostError::Several)
    );
    assert_eq!(request_host(&request(None, &[])), Err(HostError::Missing));
    for garbage in [&b""[..], b"evil example", b"local\xffhost", b"[::1"] {
        assert_eq!(
            request_host(&request(None, &[garbage])),
            Err(HostError::Garbage),
            "{garbage:?}"
        );
    }
    assert_eq!(
        request_host(&request(Some("user@localhost"), &[])),
        Err(HostError::Garbage)
    );
}

#[test]
fn origins_make_their_port_explicit_and_compare_to_a_request_host() {
    let origin = Origin::parse("HTTP://LocalHost").unwrap();
    assert_eq!(origin, Origin::parse("http://localhost:80").unwrap());
    assert_eq!(
        Origin::parse("https://[::1]:8443").unwrap(),
        Origin {
            scheme: Scheme::Https,
            host: ip("::1"),
            port: 8443
        }
    );
    for opaque in [
        "null",
        "",
        "localhost:80",
        "file://",
        "chrome-extension://abcdef",
        "http://localhost/",
        "http://user@localhost",
        "http://localhost:80/app",
        "http://evil example",
    ] {
        assert_eq!(Origin::parse(opaque), None, "{opaque:?}");
    }

    let at = |text: &str| HostPort::parse(text).unwrap();
    let page = Origin::parse("http://recapd.internal:8080").unwrap();
    assert!(page.is_same_as(&at("recapd.internal:8080")));
    assert!(page.is_same_as(&at("Recapd.Internal.:8080")));
    assert!(!page.is_same_as(&at("recapd.internal:8081")));
    assert!(!page.is_same_as(&at("recapd.internal")));
    assert!(!page.is_same_as(&at("other.internal:8080")));
    let default_port = Origin::parse("https://recapd.internal").unwrap();
    assert!(default_port.is_same_as(&at("recapd.internal")));
    assert!(default_port.is_same_as(&at("recapd.internal:443")));
    assert!(!default_port.is_same_as(&at("recapd.internal:80")));
}

#[test]
fn log_fields_are_clipped_on_a_character_boundary() {
    assert_eq!(clipped("héllo", 2), "hé");
    assert_eq!(clipped("héllo", 10), "héllo");
    assert_eq!(clipped("", 3), "");
}
