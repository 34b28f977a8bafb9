//! A small blocking HTTP/1.1 client for the admin API: one request per connection
//! (`Connection: close`), JSON in and out. It names the address it connected to in `Host`
//! (the API refuses other names) and sends the token when the node requires one.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// How long to wait for the node to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest response accepted.
const MAX_RESPONSE: u64 = 64 * 1024 * 1024;

/// The admin API of one node.
pub struct Client {
    host: String,
    port: u16,
    token: Option<String>,
}

impl Client {
    pub fn new(host: &str, port: u16, token: Option<String>) -> Client {
        Client {
            host: host.to_string(),
            port,
            token,
        }
    }

    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, String> {
        self.call("GET", path, None)
    }

    pub fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, String> {
        self.call("POST", path, Some(encode(body)?))
    }

    pub fn put<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Result<T, String> {
        self.call("PUT", path, Some(encode(body)?))
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> Result<T, String> {
        let (status, body) = self.exchange(method, path, body)?;
        check(status, &body)?;
        serde_json::from_str(&body).map_err(|e| format!("unexpected response from the node: {e}"))
    }

    fn exchange(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> Result<(u16, String), String> {
        let mut stream = self.connect()?;
        let peer = stream.peer_addr().map_err(|e| self.failed(&e))?;
        let body = body.unwrap_or_default();
        let authorization = self
            .token
            .as_ref()
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {peer}\r\nContent-Type: application/json\r\n\
             {authorization}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .map_err(|e| self.failed(&e))?;
        let mut response = Vec::new();
        stream
            .take(MAX_RESPONSE)
            .read_to_end(&mut response)
            .map_err(|e| self.failed(&e))?;
        parse_response(&response)
    }

    fn connect(&self) -> Result<TcpStream, String> {
        let addrs = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| self.failed(&e))?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
                Ok(stream) => return Ok(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => self.failed(&e),
            None => format!(
                "Failed to connect to '{}:{}' - no address",
                self.host, self.port
            ),
        })
    }

    fn failed(&self, e: &std::io::Error) -> String {
        format!("Failed to connect to '{}:{}' - {e}", self.host, self.port)
    }
}

fn encode(body: &impl Serialize) -> Result<String, String> {
    serde_json::to_string(body).map_err(|e| format!("cannot encode the request: {e}"))
}

/// Turns an error response into its message.
fn check(status: u16, body: &str) -> Result<(), String> {
    if (200..300).contains(&status) {
        return Ok(());
    }
    let message = serde_json::from_str::<admin::types::ErrorBody>(body)
        .map(|e| e.error)
        .unwrap_or_else(|_| format!("HTTP {status}: {body}"));
    Err(message)
}

/// Splits a response into its status code and body (which must not be chunked).
fn parse_response(raw: &[u8]) -> Result<(u16, String), String> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| "incomplete HTTP response from the node".to_string())?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| {
            format!(
                "malformed HTTP status line: {}",
                head.lines().next().unwrap_or("")
            )
        })?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase().starts_with("transfer-encoding:")
            && l.to_ascii_lowercase().contains("chunked")
    });
    if chunked {
        return Err("chunked HTTP responses are not supported".into());
    }
    Ok((status, body.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_status_and_body() {
        let raw = b"HTTP/1.1 404 Not Found\r\ncontent-length: 15\r\n\r\n{\"error\":\"no\"}";
        assert_eq!(
            parse_response(raw).unwrap(),
            (404, "{\"error\":\"no\"}".to_string())
        );
        assert!(parse_response(b"HTTP/1.1 200").is_err());
    }

    #[test]
    fn error_bodies_become_messages() {
        assert_eq!(
            check(400, "{\"error\":\"Keyspace [x] does not exist.\"}").unwrap_err(),
            "Keyspace [x] does not exist."
        );
        assert_eq!(check(500, "oops").unwrap_err(), "HTTP 500: oops");
        assert!(check(200, "{}").is_ok());
    }
}
