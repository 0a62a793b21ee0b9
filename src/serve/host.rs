//! The `Host` header checked against the names this server answers to,
//! so that a page elsewhere cannot read the store through a DNS
//! rebinding (its own name pointed at 127.0.0.1 after the page loaded):
//! `localhost`, the loopback addresses (`127.0.0.1`, `[::1]`), the
//! address listened on, any IP address of this host when listening on
//! all of them (`0.0.0.0`, `[::]`), and the names given with
//! `--allow-host`. The port is not compared: a rebinding needs a name,
//! which the check refuses whatever port follows it. A request whose
//! `Host` is another name is answered 421; an HTTP/1.1 request without
//! one, 400 (HTTP/1.0 had no `Host`: it is served).

use axum::extract::{Request, State};
use axum::http::{StatusCode, Version, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The names a request's `Host` may carry.
#[derive(Clone, Debug)]
pub struct Allowed {
    listen: SocketAddr,
    /// `--allow-host` names, lower case, without a trailing dot.
    names: Vec<String>,
}

impl Allowed {
    /// For a server listening on `listen`, with the `--allow-host` names.
    pub fn new(listen: SocketAddr, names: &[String]) -> Allowed {
        Allowed {
            listen,
            names: names.iter().map(|n| normal(n)).collect(),
        }
    }

    /// Whether `host` (a `Host` header's value: `NAME[:PORT]`,
    /// `IPV4[:PORT]`, `[IPV6][:PORT]`) names this server.
    pub fn allows(&self, host: &str) -> bool {
        let Some(name) = name_of(host) else {
            return false;
        };
        if let Ok(ip) = name.trim_start_matches('[').trim_end_matches(']').parse() {
            return self.allows_ip(ip) && (name.starts_with('[') == matches!(ip, IpAddr::V6(_)));
        }
        let name = normal(name);
        name == "localhost" || self.names.contains(&name)
    }

    fn allows_ip(&self, ip: IpAddr) -> bool {
        let listen = self.listen.ip();
        ip.is_loopback() || ip == listen || listen.is_unspecified()
    }
}

/// Lower case, without the trailing dot of a fully qualified name.
fn normal(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// The name of `NAME[:PORT]` or `[IPV6][:PORT]` (brackets kept), or
/// `None` when it is not one (an empty name, a port that is not one).
fn name_of(host: &str) -> Option<&str> {
    let host = host.trim();
    let (name, port) = if host.starts_with('[') {
        let end = host.find(']')?;
        let rest = &host[end + 1..];
        (
            &host[..=end],
            rest.strip_prefix(':').or(rest.is_empty().then_some("")),
        )
    } else {
        match host.rsplit_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (host, Some("")),
        }
    };
    let port = port?;
    let port_ok = port.is_empty() || port.parse::<u16>().is_ok();
    (!name.is_empty() && port_ok).then_some(name)
}

/// The layer: pass the request on when its `Host` names this server.
pub async fn require(State(allowed): State<Arc<Allowed>>, req: Request, next: Next) -> Response {
    let host = req.headers().get(header::HOST);
    let refusal = match host.map(|h| h.to_str()) {
        None if req.version() >= Version::HTTP_11 => Some((
            StatusCode::BAD_REQUEST,
            "400 bad request: an HTTP/1.1 request must carry a Host header\n".to_string(),
        )),
        None => None,
        Some(Ok(h)) if allowed.allows(h) => None,
        Some(h) => Some((
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "421 misdirected request: Host '{}' is not a name of this rtscope serve \
                 (it answers to localhost, 127.0.0.1, [::1] and the address it listens on); \
                 to reach it by that name, start it with --allow-host NAME\n",
                h.map(|h| h.chars().take(100).collect::<String>())
                    .unwrap_or_else(|_| "(not text)".into())
            ),
        )),
    };
    match refusal {
        None => next.run(req).await,
        Some((status, text)) => (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            text,
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(listen: &str, names: &[&str]) -> Allowed {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        Allowed::new(listen.parse().unwrap(), &names)
    }

    #[test]
    fn loopback_names_and_the_address_listened_on_pass() {
        let a = on("127.0.0.1:8788", &[]);
        for h in [
            "127.0.0.1:8788",
            "127.0.0.1",
            "localhost:8788",
            "LocalHost.:8788",
            "[::1]:8788",
            "[::1]",
            "127.0.0.2:1",
        ] {
            assert!(a.allows(h), "{h}");
        }
        let lan = on("192.168.1.5:8788", &[]);
        assert!(lan.allows("192.168.1.5:8788"));
        assert!(lan.allows("127.0.0.1:8788"));
        assert!(!lan.allows("192.168.1.6:8788"));
    }

    #[test]
    fn other_names_fail_unless_allowed() {
        let a = on("127.0.0.1:8788", &[]);
        for h in [
            "evil.example:8788",
            "evil.example",
            "localhost.evil.example:8788",
            "10.0.0.1:8788",
            "",
            ":8788",
            "127.0.0.1:port",
            "127.0.0.1:99999",
            "[::1",
            "::1",
            "[127.0.0.1]",
            "[::1]x",
        ] {
            assert!(!a.allows(h), "{h}");
        }
        let b = on("127.0.0.1:8788", &["Lab.Example"]);
        assert!(b.allows("lab.example:8788"));
        assert!(b.allows("LAB.example."));
        assert!(!b.allows("evil.example:8788"));
    }

    #[test]
    fn listening_on_every_address_allows_every_ip_but_no_other_name() {
        for listen in ["0.0.0.0:8788", "[::]:8788"] {
            let a = on(listen, &["lab"]);
            assert!(a.allows("10.1.2.3:8788"), "{listen}");
            assert!(a.allows("[fe80::1]:8788"), "{listen}");
            assert!(a.allows("lab:8788"), "{listen}");
            assert!(!a.allows("evil.example:8788"), "{listen}");
        }
    }
}
