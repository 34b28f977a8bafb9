//! Who may use the admin API. It can drain and stop the node, and a web browser on the same
//! machine can reach a loopback port, so requests a web page could send are refused before
//! anything is read or done:
//!
//! - a `Host` header that does not name the listening address (DNS rebinding: a page whose
//!   name now resolves to 127.0.0.1 still sends its own name), answered 403;
//! - an `Origin` header, or `Sec-Fetch-Site` other than `none` (browsers add them to
//!   requests pages make), answered 403;
//! - a missing or wrong bearer token when `admin_auth_token_file` is set, answered 401;
//! - a POST, PUT or DELETE whose `Content-Type` is not `application/json` (a cross-site form
//!   cannot send that type without a CORS preflight, which the API never grants), answered 415.
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use hyper::header::{HeaderMap, AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN};
use hyper::{Method, StatusCode};

use crate::error::ApiError;

/// The checks made on every request.
#[derive(Debug, Clone)]
pub struct Access {
    bound: SocketAddr,
    token: Option<String>,
}

impl Access {
    /// Checks for a server listening on `bound`, requiring `token` when given.
    pub fn new(bound: SocketAddr, token: Option<String>) -> Access {
        Access { bound, token }
    }

    /// Refuses a request a web page could have sent, or one without the token.
    pub fn check(&self, method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
        self.check_host(headers)?;
        check_not_from_a_page(headers)?;
        self.check_token(headers)?;
        check_content_type(method, headers)
    }

    /// The warnings to log at start: loudly when the API is reachable from other machines.
    pub fn warnings(&self) -> Option<String> {
        if self.bound.ip().is_loopback() {
            return None;
        }
        let guard = if self.token.is_some() {
            "requests must carry the token from admin_auth_token_file"
        } else {
            "it has NO token (admin_auth_token_file is not set): anyone who can reach it can \
             flush, compact, drain and stop this node"
        };
        Some(format!(
            "The admin API listens on {}, which is not a loopback address; {guard}",
            self.bound
        ))
    }

    fn check_host(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let host =
            header(headers, HOST.as_str()).ok_or_else(|| forbidden("a Host header is required"))?;
        if self.names_us(&host.to_ascii_lowercase()) {
            Ok(())
        } else {
            Err(forbidden(format!(
                "Host '{host}' does not name this admin API ({}); use its address",
                self.bound
            )))
        }
    }

    /// `host` is the listening address (with or without the port), or `localhost` when the
    /// address is a loopback one; on a wildcard address, any IP address with our port.
    fn names_us(&self, host: &str) -> bool {
        let (name, port) = split_port(host);
        if port.is_some_and(|p| p != self.bound.port()) {
            return false;
        }
        let ip = self.bound.ip();
        if name == "localhost" {
            return ip.is_loopback() || ip.is_unspecified();
        }
        let literal = name.trim_start_matches('[').trim_end_matches(']');
        match literal.parse::<IpAddr>() {
            Ok(named) => named == ip || ip.is_unspecified(),
            Err(_) => false,
        }
    }

    fn check_token(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(expected) = &self.token else {
            return Ok(());
        };
        let given = header(headers, AUTHORIZATION.as_str()).and_then(|value| {
            let (scheme, token) = value.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
        match given {
            Some(token) if same(token.as_bytes(), expected.as_bytes()) => Ok(()),
            Some(_) => Err(unauthorized("the admin token is wrong")),
            None => Err(unauthorized(
                "this admin API requires a token: Authorization: Bearer <token>",
            )),
        }
    }
}

/// Splits `host[:port]`; IPv6 literals come in brackets. A port that is not a number is 0,
/// which is never ours.
fn split_port(host: &str) -> (&str, Option<u16>) {
    let colon = if host.starts_with('[') {
        host.find("]:").map(|i| i + 1)
    } else if host.matches(':').count() == 1 {
        host.find(':')
    } else {
        None
    };
    match colon {
        Some(i) => (&host[..i], Some(host[i + 1..].parse().unwrap_or(0))),
        None => (host, None),
    }
}

fn check_not_from_a_page(headers: &HeaderMap) -> Result<(), ApiError> {
    if headers.contains_key(ORIGIN) {
        return Err(forbidden(
            "requests with an Origin header (sent by web pages) are refused",
        ));
    }
    match header(headers, "sec-fetch-site") {
        Some(site) if !site.eq_ignore_ascii_case("none") => Err(forbidden(
            "requests a web page makes (Sec-Fetch-Site) are refused",
        )),
        _ => Ok(()),
    }
}

fn check_content_type(method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
    if !matches!(*method, Method::POST | Method::PUT | Method::DELETE) {
        return Ok(());
    }
    let media = header(headers, CONTENT_TYPE.as_str())
        .and_then(|v| v.split(';').next())
        .map(str::trim);
    match media {
        Some(m) if m.eq_ignore_ascii_case("application/json") => Ok(()),
        _ => Err(ApiError {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            message: format!("{method} requests need Content-Type: application/json"),
        }),
    }
}

/// A header's value as text; `None` when absent or not text.
fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Equal bytes, compared in time that depends only on the lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    let longest = a.len().max(b.len());
    let differ = (0..longest).fold(a.len() ^ b.len(), |acc, i| {
        let (x, y) = (a.get(i).copied(), b.get(i).copied());
        acc | usize::from(x.unwrap_or(0) ^ y.unwrap_or(0))
    });
    differ == 0
}

fn forbidden(message: impl Into<String>) -> ApiError {
    ApiError {
        status: StatusCode::FORBIDDEN,
        message: message.into(),
    }
}

fn unauthorized(message: &str) -> ApiError {
    ApiError {
        status: StatusCode::UNAUTHORIZED,
        message: message.to_string(),
    }
}

/// The token in `path` (surrounding white space dropped). Warns when others may read it.
pub fn read_token(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read admin_auth_token_file {}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(format!(
            "admin_auth_token_file {} must hold one token (no spaces)",
            path.display()
        ));
    }
    warn_if_readable_by_others(path);
    Ok(token.to_string())
}

fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "admin_auth_token_file {} can be read by other users (chmod 600 it)",
                path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn status(access: &Access, method: Method, pairs: &[(&'static str, &str)]) -> u16 {
        match access.check(&method, &headers(pairs)) {
            Ok(()) => 200,
            Err(e) => e.status.as_u16(),
        }
    }

    fn loopback() -> Access {
        Access::new("127.0.0.1:7199".parse().unwrap(), None)
    }

    #[test]
    fn the_host_must_name_the_listening_address() {
        let a = loopback();
        for host in ["127.0.0.1:7199", "127.0.0.1", "localhost:7199", "LOCALHOST"] {
            assert_eq!(status(&a, Method::GET, &[("host", host)]), 200, "{host}");
        }
        for host in [
            "evil.example:7199",
            "127.0.0.1:80",
            "10.0.0.1:7199",
            "127.0.0.1:x",
        ] {
            assert_eq!(status(&a, Method::GET, &[("host", host)]), 403, "{host}");
        }
        assert_eq!(status(&a, Method::GET, &[]), 403, "no Host");
        let remote = Access::new("10.1.2.3:7199".parse().unwrap(), None);
        assert_eq!(
            status(&remote, Method::GET, &[("host", "10.1.2.3:7199")]),
            200
        );
        assert_eq!(
            status(&remote, Method::GET, &[("host", "localhost:7199")]),
            403
        );
        let v6 = Access::new("[::1]:7199".parse().unwrap(), None);
        assert_eq!(status(&v6, Method::GET, &[("host", "[::1]:7199")]), 200);
        assert_eq!(status(&v6, Method::GET, &[("host", "[::2]:7199")]), 403);
        let any = Access::new("0.0.0.0:7199".parse().unwrap(), None);
        assert_eq!(
            status(&any, Method::GET, &[("host", "192.168.1.9:7199")]),
            200
        );
        assert_eq!(
            status(&any, Method::GET, &[("host", "rebound.example")]),
            403
        );
    }

    #[test]
    fn requests_from_web_pages_are_refused() {
        let a = loopback();
        let host = ("host", "127.0.0.1:7199");
        let origin = [host, ("origin", "http://127.0.0.1:7199")];
        assert_eq!(status(&a, Method::GET, &origin), 403);
        assert_eq!(
            status(&a, Method::GET, &[host, ("sec-fetch-site", "cross-site")]),
            403
        );
        assert_eq!(
            status(&a, Method::GET, &[host, ("sec-fetch-site", "none")]),
            200
        );
    }

    #[test]
    fn state_changes_need_a_json_content_type() {
        let a = loopback();
        let host = ("host", "127.0.0.1:7199");
        assert_eq!(status(&a, Method::POST, &[host]), 415);
        let form = ("content-type", "application/x-www-form-urlencoded");
        assert_eq!(status(&a, Method::POST, &[host, form]), 415);
        assert_eq!(
            status(&a, Method::PUT, &[host, ("content-type", "text/plain")]),
            415
        );
        let json = ("content-type", "Application/JSON; charset=utf-8");
        assert_eq!(status(&a, Method::DELETE, &[host, json]), 200);
        assert_eq!(status(&a, Method::GET, &[host]), 200);
    }

    #[test]
    fn a_configured_token_is_required() {
        let a = Access::new("127.0.0.1:7199".parse().unwrap(), Some("s3cret".into()));
        let host = ("host", "127.0.0.1:7199");
        assert_eq!(status(&a, Method::GET, &[host]), 401);
        assert_eq!(
            status(&a, Method::GET, &[host, ("authorization", "Bearer nope")]),
            401
        );
        assert_eq!(
            status(&a, Method::GET, &[host, ("authorization", "Basic s3cret")]),
            401
        );
        assert_eq!(
            status(&a, Method::GET, &[host, ("authorization", "bearer s3cret")]),
            200
        );
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"abc", b"ab"));
    }

    #[test]
    fn a_non_loopback_address_is_warned_about() {
        assert_eq!(loopback().warnings(), None);
        let open = Access::new("10.1.2.3:7199".parse().unwrap(), None);
        assert!(open.warnings().is_some_and(|w| w.contains("NO token")));
        let guarded = Access::new("10.1.2.3:7199".parse().unwrap(), Some("t".into()));
        assert!(guarded
            .warnings()
            .is_some_and(|w| w.contains("must carry the token")));
    }

    #[test]
    fn tokens_are_read_from_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "  abc123\n").unwrap();
        assert_eq!(read_token(&path).unwrap(), "abc123");
        std::fs::write(&path, "\n").unwrap();
        assert!(read_token(&path)
            .unwrap_err()
            .contains("must hold one token"));
        assert!(read_token(&dir.path().join("missing")).is_err());
    }
}
