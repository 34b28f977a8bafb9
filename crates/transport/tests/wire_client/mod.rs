//! A minimal hand-rolled CQL client for the integration tests: legacy frames (optionally LZ4)
//! and v5 segments, with its own CRC code as an independent check of the server's.
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MAX_PAYLOAD: usize = (1 << 17) - 1;

#[derive(Debug)]
pub struct Frame {
    pub version: u8,
    pub stream: i16,
    pub opcode: u8,
    pub body: Vec<u8>,
    pub was_compressed: bool,
}

impl Frame {
    pub fn error_code(&self) -> i32 {
        assert_eq!(self.opcode, 0x00, "expected ERROR, got {self:?}");
        i32::from_be_bytes(self.body[..4].try_into().unwrap())
    }

    pub fn error_message(&self) -> String {
        let len = u16::from_be_bytes([self.body[4], self.body[5]]) as usize;
        String::from_utf8(self.body[6..6 + len].to_vec()).unwrap()
    }

    pub fn body_contains(&self, needle: &[u8]) -> bool {
        self.body.windows(needle.len()).any(|w| w == needle)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Framing {
    Legacy { lz4: bool },
    V5 { lz4: bool },
}

pub struct Client {
    sock: TcpStream,
    version: u8,
    framing: Framing,
    raw: Vec<u8>,
    envelopes: Vec<u8>,
    ready: VecDeque<Frame>,
}

pub fn string(s: &str) -> Vec<u8> {
    let mut out = (s.len() as u16).to_be_bytes().to_vec();
    out.extend_from_slice(s.as_bytes());
    out
}

pub fn long_string(s: &str) -> Vec<u8> {
    let mut out = (s.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(s.as_bytes());
    out
}

/// QUERY body at consistency ONE with no flags (a [byte] before v5, an [int] from v5).
pub fn query_body(version: u8, text: &str) -> Vec<u8> {
    let mut body = long_string(text);
    body.extend_from_slice(&[0, 1]);
    let flag_len = if version >= 5 { 4 } else { 1 };
    body.extend(std::iter::repeat_n(0, flag_len));
    body
}

/// A STARTUP body with `CQL_VERSION`, `DRIVER_NAME` and `extra`.
pub fn startup_body_with(extra: &[(&str, &str)]) -> Vec<u8> {
    let mut pairs = vec![("CQL_VERSION", "3.0.0"), ("DRIVER_NAME", "test-driver")];
    pairs.extend_from_slice(extra);
    let mut body = (pairs.len() as u16).to_be_bytes().to_vec();
    for (k, v) in pairs {
        body.extend_from_slice(&string(k));
        body.extend_from_slice(&string(v));
    }
    body
}

fn envelope(version: u8, flags: u8, stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![version, flags];
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(opcode);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

fn crc24(bytes: &[u8]) -> u32 {
    let mut crc: u32 = 0x875060;
    for &b in bytes {
        crc ^= u32::from(b) << 16;
        for _ in 0..8 {
            crc <<= 1;
            if crc & 0x100_0000 != 0 {
                crc ^= 0x197_4F0B;
            }
        }
    }
    crc & 0xFF_FFFF
}

fn crc32(payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&[0xFA, 0x2D, 0x55, 0xCA]);
    h.update(payload);
    h.finalize()
}

fn segment(payload: &[u8], self_contained: bool, lz4: bool) -> Vec<u8> {
    let sc = u64::from(self_contained);
    let (mut out, body) = if lz4 {
        let compressed = lz4_flex::block::compress(payload);
        let fields = compressed.len() as u64 | (payload.len() as u64) << 17 | sc << 34;
        (fields.to_le_bytes()[..5].to_vec(), compressed)
    } else {
        let fields = payload.len() as u64 | sc << 17;
        (fields.to_le_bytes()[..3].to_vec(), payload.to_vec())
    };
    let crc = crc24(&out);
    out.extend_from_slice(&crc.to_le_bytes()[..3]);
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_le_bytes());
    out
}

impl Client {
    pub async fn connect(addr: SocketAddr, version: u8) -> Client {
        Client {
            sock: TcpStream::connect(addr).await.unwrap(),
            version,
            framing: Framing::Legacy { lz4: false },
            raw: Vec::new(),
            envelopes: Vec::new(),
            ready: VecDeque::new(),
        }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.sock.write_all(bytes).await.unwrap();
    }

    pub async fn send(&mut self, stream: i16, opcode: u8, body: &[u8]) {
        let wire = match self.framing {
            Framing::Legacy { lz4: false } => envelope(self.version, 0, stream, opcode, body),
            Framing::Legacy { lz4: true } => {
                let mut compressed = (body.len() as u32).to_be_bytes().to_vec();
                compressed.extend_from_slice(&lz4_flex::block::compress(body));
                envelope(self.version, 1, stream, opcode, &compressed)
            }
            Framing::V5 { lz4 } => {
                let env = envelope(self.version, 0, stream, opcode, body);
                if env.len() <= MAX_PAYLOAD {
                    segment(&env, true, lz4)
                } else {
                    env.chunks(MAX_PAYLOAD)
                        .flat_map(|c| segment(c, false, lz4))
                        .collect()
                }
            }
        };
        self.send_raw(&wire).await;
    }

    pub async fn request(&mut self, stream: i16, opcode: u8, body: &[u8]) -> Frame {
        self.send(stream, opcode, body).await;
        self.recv().await
    }

    pub async fn startup(&mut self, compression: Option<&str>) {
        let options: Vec<(&str, &str)> = compression
            .map(|c| ("COMPRESSION", c))
            .into_iter()
            .collect();
        self.startup_with(&options).await;
    }

    /// STARTUP with extra options (`COMPRESSION` among them switches compression on).
    pub async fn startup_with(&mut self, options: &[(&str, &str)]) {
        let compression = options
            .iter()
            .find(|(k, _)| *k == "COMPRESSION")
            .map(|(_, v)| *v);
        let ready = self.request(0, 0x01, &startup_body_with(options)).await;
        assert_eq!(ready.opcode, 0x02, "expected READY, got {ready:?}");
        assert!(!ready.was_compressed);
        let lz4 = compression == Some("lz4");
        self.framing = if self.version >= 5 {
            Framing::V5 { lz4 }
        } else {
            Framing::Legacy { lz4 }
        };
    }

    pub async fn send_query(&mut self, stream: i16, text: &str) {
        self.send(stream, 0x07, &query_body(self.version, text))
            .await;
    }

    pub async fn query(&mut self, stream: i16, text: &str) -> Frame {
        self.send_query(stream, text).await;
        let frame = self.recv().await;
        assert_eq!(frame.stream, stream);
        frame
    }

    pub async fn execute(&mut self, stream: i16, id: &[u8]) -> Frame {
        let mut body = (id.len() as u16).to_be_bytes().to_vec();
        body.extend_from_slice(id);
        if self.version >= 5 {
            body.extend_from_slice(&[0, 0]);
            body.extend_from_slice(&[0, 1, 0, 0, 0, 0]);
        } else {
            body.extend_from_slice(&[0, 1, 0]);
        }
        self.request(stream, 0x0A, &body).await
    }

    /// The next response, waiting at most five seconds.
    pub async fn recv(&mut self) -> Frame {
        tokio::time::timeout(Duration::from_secs(5), self.recv_forever())
            .await
            .expect("timed out waiting for a response")
    }

    async fn recv_forever(&mut self) -> Frame {
        loop {
            if let Some(frame) = self.ready.pop_front() {
                return frame;
            }
            self.parse();
            if !self.ready.is_empty() {
                continue;
            }
            let mut chunk = vec![0u8; 64 * 1024];
            let n = self.sock.read(&mut chunk).await.unwrap();
            assert!(n > 0, "connection closed while waiting for a response");
            self.raw.extend_from_slice(&chunk[..n]);
        }
    }

    fn parse(&mut self) {
        match self.framing {
            Framing::V5 { lz4 } => while self.take_segment(lz4) {},
            Framing::Legacy { .. } => self.envelopes.append(&mut self.raw),
        }
        self.take_envelopes();
    }

    fn take_segment(&mut self, lz4: bool) -> bool {
        let hlen = if lz4 { 8 } else { 6 };
        if self.raw.len() < hlen {
            return false;
        }
        let mut fields = [0u8; 8];
        fields[..hlen - 3].copy_from_slice(&self.raw[..hlen - 3]);
        let fields = u64::from_le_bytes(fields);
        let mut crc = [0u8; 4];
        crc[..3].copy_from_slice(&self.raw[hlen - 3..hlen]);
        assert_eq!(
            u32::from_le_bytes(crc),
            crc24(&self.raw[..hlen - 3]),
            "header CRC"
        );
        let len = (fields & MAX_PAYLOAD as u64) as usize;
        if self.raw.len() < hlen + len + 4 {
            return false;
        }
        let payload = self.raw[hlen..hlen + len].to_vec();
        let trailer = u32::from_le_bytes(self.raw[hlen + len..hlen + len + 4].try_into().unwrap());
        assert_eq!(trailer, crc32(&payload), "payload CRC");
        self.raw.drain(..hlen + len + 4);
        let uncompressed = (fields >> 17) as usize & MAX_PAYLOAD;
        if lz4 && uncompressed > 0 {
            let plain = lz4_flex::block::decompress(&payload, uncompressed).unwrap();
            self.envelopes.extend_from_slice(&plain);
        } else {
            self.envelopes.extend_from_slice(&payload);
        }
        true
    }

    fn take_envelopes(&mut self) {
        while self.envelopes.len() >= 9 {
            let len = u32::from_be_bytes(self.envelopes[5..9].try_into().unwrap()) as usize;
            if self.envelopes.len() < 9 + len {
                return;
            }
            let env: Vec<u8> = self.envelopes.drain(..9 + len).collect();
            let compressed = env[1] & 1 == 1;
            let body = if compressed {
                let n = u32::from_be_bytes(env[9..13].try_into().unwrap()) as usize;
                lz4_flex::block::decompress(&env[13..], n).unwrap()
            } else {
                env[9..].to_vec()
            };
            self.ready.push_back(Frame {
                version: env[0],
                stream: i16::from_be_bytes([env[2], env[3]]),
                opcode: env[4],
                body,
                was_compressed: compressed,
            });
        }
    }

    /// True when the server closes the connection within two seconds.
    pub async fn is_closed(&mut self) -> bool {
        let mut chunk = [0u8; 1024];
        loop {
            match tokio::time::timeout(Duration::from_secs(2), self.sock.read(&mut chunk)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                Ok(Ok(_)) => continue,
                Err(_) => return false,
            }
        }
    }
}
