//! Whether a node answers CQL: a native-protocol v4 OPTIONS request must get a SUPPORTED
//! response (a paused node accepts the connection but never answers).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// OPTIONS, protocol v4, stream 0, empty body.
const OPTIONS: [u8; 9] = [0x04, 0, 0, 0, 0x05, 0, 0, 0, 0];
const RESPONSE_V4: u8 = 0x84;
const SUPPORTED: u8 = 0x06;

/// True when `addr` answers OPTIONS with SUPPORTED within `timeout` (per step).
pub fn answers_cql(addr: SocketAddr, timeout: Duration) -> bool {
    exchange(addr, timeout).is_ok_and(|header| is_supported(&header))
}

fn exchange(addr: SocketAddr, timeout: Duration) -> std::io::Result<[u8; 9]> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.write_all(&OPTIONS)?;
    let mut header = [0u8; 9];
    stream.read_exact(&mut header)?;
    Ok(header)
}

fn is_supported(header: &[u8; 9]) -> bool {
    header[0] == RESPONSE_V4 && header[4] == SUPPORTED
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;

    /// A one-shot server answering the first request with `reply`.
    fn server(reply: Vec<u8>) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            if let Ok((mut socket, _)) = listener.accept() {
                let mut request = [0u8; 9];
                if socket.read_exact(&mut request).is_ok() && request == OPTIONS {
                    let _ = socket.write_all(&reply);
                }
            }
        });
        addr
    }

    #[test]
    fn supported_is_an_answer() {
        let body = [0u8, 0];
        let mut reply = vec![0x84, 0, 0, 0, 0x06, 0, 0, 0, 2];
        reply.extend_from_slice(&body);
        assert!(answers_cql(server(reply), Duration::from_secs(5)));
    }

    #[test]
    fn errors_silence_and_closed_ports_are_not() {
        let error = vec![0x84, 0, 0, 0, 0x00, 0, 0, 0, 0];
        assert!(!answers_cql(server(error), Duration::from_secs(5)));
        let silent = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = silent.local_addr().unwrap();
        assert!(
            !answers_cql(addr, Duration::from_millis(200)),
            "accepts, never answers"
        );
        drop(silent);
        assert!(!answers_cql(addr, Duration::from_millis(200)), "closed");
    }
}
