//! Cross-site requests: a browser's `Origin` must be exactly the address she serves —
//! scheme, host **and port**. A page on another port of the same host (any local dev
//! server, or a page a browser was tricked into) is another site here, whatever
//! cookies think of ports.

use axum::extract::Request;
use axum::http::header;

/// The host a request was addressed to, without its port, in lower case.
pub(super) fn request_host(req: &Request) -> Option<String> {
    host_header(req).map(|raw| strip_port(&raw).to_ascii_lowercase())
}

fn host_header(req: &Request) -> Option<String> {
    req.headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()))
}

/// `host[:port]` (or `[v6]:port`) without its port.
pub(super) fn strip_port(hostport: &str) -> &str {
    if let Some(rest) = hostport.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match hostport.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.chars().all(|c| c.is_ascii_digit()) => {
            host
        }
        _ => hostport,
    }
}

/// Whether a host name is a loopback one: `localhost`, 127.0.0.0/8 or ::1.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Scheme, host (lower case, no brackets) and port of an address, the port filled in
/// from the scheme when it is not written.
#[derive(Debug, PartialEq, Eq)]
struct SchemeHostPort {
    scheme: String,
    host: String,
    port: u16,
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// Split `host[:port]` (`[v6]:port` too) with the scheme's port as the default.
fn host_port(hostport: &str, scheme: &str) -> Option<(String, u16)> {
    let host = strip_port(hostport);
    let after = if let Some(rest) = hostport.strip_prefix('[') {
        rest.split_once(']').map(|(_, after)| after).unwrap_or("")
    } else {
        &hostport[host.len().min(hostport.len())..]
    };
    let port = match after.strip_prefix(':') {
        Some(p) => p.parse().ok()?,
        None if after.is_empty() => default_port(scheme)?,
        None => return None,
    };
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

/// The address a request was sent to: `http` (or `https` behind a proxy that says so in
/// `X-Forwarded-Proto`), with the `Host` header's host and port.
fn served_at(req: &Request) -> Option<SchemeHostPort> {
    let https = req
        .headers()
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"));
    let scheme = if https { "https" } else { "http" };
    let raw = host_header(req)?;
    let (host, port) = host_port(raw.trim(), scheme)?;
    Some(SchemeHostPort {
        scheme: scheme.to_string(),
        host,
        port,
    })
}

/// An `Origin` header's scheme, host and port (`null` and anything else: `None`).
fn origin_of(origin: &str) -> Option<SchemeHostPort> {
    let (scheme, rest) = origin.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split('/').next().unwrap_or(rest);
    let (host, port) = host_port(authority, &scheme)?;
    Some(SchemeHostPort { scheme, host, port })
}

/// A browser's `Origin`, when present, must be exactly the address the request went
/// to: scheme, host **and port** (a page on another port of the same host is another
/// site to us, whatever cookies think).
pub(super) fn same_origin(req: &Request) -> bool {
    let Some(origin) = req.headers().get(header::ORIGIN) else {
        return true;
    };
    let Some(origin) = origin.to_str().ok().and_then(origin_of) else {
        return false;
    };
    served_at(req).is_some_and(|served| served == origin)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    fn req(host: &str, origin: Option<&str>, proto: Option<&str>) -> Request {
        let mut b = axum::http::Request::builder()
            .method("POST")
            .uri("/api/message")
            .header(header::HOST, host);
        if let Some(o) = origin {
            b = b.header(header::ORIGIN, o);
        }
        if let Some(p) = proto {
            b = b.header("x-forwarded-proto", p);
        }
        b.body(Body::empty()).unwrap()
    }

    #[test]
    fn an_origin_passes_only_with_the_same_scheme_host_and_port() {
        let ok = [
            ("127.0.0.1:8000", "http://127.0.0.1:8000"),
            ("localhost:8000", "http://LOCALHOST:8000/"),
            ("[::1]:8000", "http://[::1]:8000"),
            ("kotoba.example", "http://kotoba.example:80"),
        ];
        for (host, origin) in ok {
            assert!(
                same_origin(&req(host, Some(origin), None)),
                "{host} {origin}"
            );
        }
        let refused = [
            ("127.0.0.1:8000", "http://127.0.0.1:21300"),
            ("127.0.0.1:8000", "http://127.0.0.1"),
            ("127.0.0.1:8000", "https://127.0.0.1:8000"),
            ("127.0.0.1:8000", "http://localhost:8000"),
            ("127.0.0.1:8000", "null"),
            ("127.0.0.1:8000", "http://127.0.0.1:8000.evil.com"),
            ("[::1]:8000", "http://[::1]:8001"),
        ];
        for (host, origin) in refused {
            assert!(
                !same_origin(&req(host, Some(origin), None)),
                "{host} {origin}"
            );
        }
        assert!(
            same_origin(&req("127.0.0.1:8000", None, None)),
            "no Origin: not a browser's cross-site request"
        );
    }

    #[test]
    fn behind_a_proxy_that_says_https_the_origin_is_https_on_its_port() {
        let host = "kotoba.example";
        assert!(same_origin(&req(
            host,
            Some("https://kotoba.example"),
            Some("https")
        )));
        assert!(!same_origin(&req(
            host,
            Some("http://kotoba.example"),
            Some("https")
        )));
        assert!(!same_origin(&req(
            host,
            Some("https://kotoba.example"),
            None
        )));
    }

    #[test]
    fn loopback_host_names_with_or_without_a_port() {
        for h in [
            "127.0.0.1:8000",
            "localhost:8000",
            "[::1]:8000",
            "localhost",
            "127.0.0.2",
        ] {
            assert!(is_loopback_host(strip_port(h)), "{h}");
        }
        for h in [
            "kotoba.example:8000",
            "192.168.1.4:8000",
            "10.0.0.1",
            "[::]:8000",
            "localhost.evil.com",
        ] {
            assert!(!is_loopback_host(strip_port(h)), "{h}");
        }
    }
}
