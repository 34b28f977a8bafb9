//! The versioned handshake that opens every internode connection.
//!
//! The connecting side sends a hello, the accepting side answers with its own and a verdict.
//! Both messages: `"HLNS"`, u16 body length, body, u32 CRC32 of the body. Body: u8 tag (the
//! connection class in a hello, the verdict in an answer), u8 messaging version, 16-byte host
//! id, listen address (u8 family 4|6, address, u16 port), u16 length + UTF-8 cluster name.
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::config::HostId;
use crate::verb::Class;

/// The messaging version this node speaks, and the oldest it still accepts. Version 2 carries
/// rows in the mutation codec's compact form, which version 1 nodes cannot read.
pub const MESSAGING_VERSION: u8 = 2;
pub const MIN_MESSAGING_VERSION: u8 = 2;

/// Longer cluster names are refused when messaging starts (the body length is a u16).
pub const MAX_CLUSTER_NAME: usize = 4096;

const MAGIC: [u8; 4] = *b"HLNS";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    pub version: u8,
    pub host_id: HostId,
    pub listen: SocketAddr,
    pub cluster_name: String,
}

#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Accepted = 0,
    WrongCluster = 1,
    WrongVersion = 2,
}

#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("malformed handshake: {0}")]
    Malformed(String),
    /// Refused by either side; the text names both sides' values.
    #[error("{0}")]
    Refused(String),
}

fn malformed(what: &str) -> HandshakeError {
    HandshakeError::Malformed(what.to_string())
}

/// The connecting side: sends our hello for `class`, returns the peer's hello and the
/// version the connection will use.
pub async fn initiate<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    ours: &Hello,
    class: Class,
) -> Result<(Hello, u8), HandshakeError> {
    stream.write_all(&encode(class as u8, ours)).await?;
    stream.flush().await?;
    let (verdict, theirs) = read_message(stream).await?;
    let version = theirs.version.min(ours.version);
    match verdict {
        v if v == Verdict::Accepted as u8 && version >= MIN_MESSAGING_VERSION => {
            Ok((theirs, version))
        }
        v if v == Verdict::WrongCluster as u8 => Err(HandshakeError::Refused(format!(
            "{} refused our internode connection: its cluster name is '{}', ours is '{}'",
            theirs.listen, theirs.cluster_name, ours.cluster_name
        ))),
        v if v == Verdict::WrongVersion as u8 || v == Verdict::Accepted as u8 => {
            Err(HandshakeError::Refused(format!(
                "{} refused our internode connection: its messaging version is {}, ours is {} \
                 (oldest supported {})",
                theirs.listen, theirs.version, ours.version, MIN_MESSAGING_VERSION
            )))
        }
        other => Err(HandshakeError::Malformed(format!(
            "unknown verdict {other}"
        ))),
    }
}

/// The accepting side: reads the peer's hello, answers with ours and a verdict. Returns the
/// class of the connection, the peer's hello and the version the connection will use.
pub async fn accept<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    ours: &Hello,
) -> Result<(Class, Hello, u8), HandshakeError> {
    let (tag, theirs) = read_message(stream).await?;
    let class = Class::from_u8(tag).ok_or_else(|| malformed("unknown connection class"))?;
    let (verdict, refusal) = judge(ours, &theirs);
    stream.write_all(&encode(verdict as u8, ours)).await?;
    stream.flush().await?;
    match refusal {
        None => Ok((class, theirs.clone(), theirs.version.min(ours.version))),
        Some(why) => Err(HandshakeError::Refused(why)),
    }
}

fn judge(ours: &Hello, theirs: &Hello) -> (Verdict, Option<String>) {
    let from = format!("{} (host {})", theirs.listen, theirs.host_id);
    if theirs.cluster_name != ours.cluster_name {
        let why = format!(
            "refused internode connection from {from}: its cluster name is '{}', ours is '{}'",
            theirs.cluster_name, ours.cluster_name
        );
        return (Verdict::WrongCluster, Some(why));
    }
    if theirs.version < MIN_MESSAGING_VERSION {
        let why = format!(
            "refused internode connection from {from}: its messaging version is {}, ours is {} \
             (oldest supported {MIN_MESSAGING_VERSION})",
            theirs.version, ours.version
        );
        return (Verdict::WrongVersion, Some(why));
    }
    (Verdict::Accepted, None)
}

fn encode(tag: u8, hello: &Hello) -> Vec<u8> {
    let mut body = vec![tag, hello.version];
    body.extend_from_slice(hello.host_id.as_bytes());
    match hello.listen.ip() {
        IpAddr::V4(ip) => {
            body.push(4);
            body.extend_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            body.push(6);
            body.extend_from_slice(&ip.octets());
        }
    }
    body.extend_from_slice(&hello.listen.port().to_be_bytes());
    let name = hello.cluster_name.as_bytes();
    debug_assert!(
        name.len() <= MAX_CLUSTER_NAME,
        "checked when messaging starts"
    );
    body.extend_from_slice(&(name.len() as u16).to_be_bytes());
    body.extend_from_slice(name);
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(body.len() as u16).to_be_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    out
}

async fn read_message<R: AsyncRead + Unpin>(input: &mut R) -> Result<(u8, Hello), HandshakeError> {
    let mut prefix = [0u8; 6];
    input.read_exact(&mut prefix).await?;
    if prefix[..4] != MAGIC {
        return Err(malformed("not a Helenus internode connection (bad magic)"));
    }
    let mut body = vec![0u8; u16::from_be_bytes([prefix[4], prefix[5]]) as usize];
    input.read_exact(&mut body).await?;
    let mut crc = [0u8; 4];
    input.read_exact(&mut crc).await?;
    if crc32fast::hash(&body) != u32::from_be_bytes(crc) {
        return Err(malformed("CRC mismatch"));
    }
    decode_body(&body)
}

/// Reads fields off the front of a byte slice.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], HandshakeError> {
        if self.0.len() < n {
            return Err(malformed("body too short"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], HandshakeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, HandshakeError> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, HandshakeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }
}

fn decode_body(body: &[u8]) -> Result<(u8, Hello), HandshakeError> {
    let mut fields = Fields(body);
    let tag = fields.u8()?;
    let version = fields.u8()?;
    let host_id = HostId::from_bytes(fields.array()?);
    let ip = match fields.u8()? {
        4 => IpAddr::V4(Ipv4Addr::from(fields.array::<4>()?)),
        6 => IpAddr::V6(Ipv6Addr::from(fields.array::<16>()?)),
        _ => return Err(malformed("unknown address family")),
    };
    let listen = SocketAddr::new(ip, fields.u16()?);
    let name_len = fields.u16()? as usize;
    let cluster_name = std::str::from_utf8(fields.take(name_len)?)
        .map_err(|_| malformed("cluster name is not UTF-8"))?
        .to_string();
    if !fields.0.is_empty() {
        return Err(malformed("trailing bytes"));
    }
    let hello = Hello {
        version,
        host_id,
        listen,
        cluster_name,
    };
    Ok((tag, hello))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: u8 = MESSAGING_VERSION;
    const OLD: u8 = MIN_MESSAGING_VERSION - 1;

    fn hello(cluster: &str, version: u8, last: u8) -> Hello {
        Hello {
            version,
            host_id: HostId::from_bytes([last; 16]),
            listen: SocketAddr::from(([127, 0, 6, last], 7000)),
            cluster_name: cluster.to_string(),
        }
    }

    /// Runs both sides over an in-memory pipe.
    async fn both(
        requester: Hello,
        acceptor: Hello,
    ) -> (
        Result<(Hello, u8), HandshakeError>,
        Result<(Class, Hello, u8), HandshakeError>,
    ) {
        let (mut a, mut b) = tokio::io::duplex(4096);
        tokio::join!(
            initiate(&mut a, &requester, Class::Large),
            accept(&mut b, &acceptor)
        )
    }

    #[tokio::test]
    async fn matching_hellos_are_accepted_both_ways() {
        let (requester, acceptor) = (hello("Test", V, 1), hello("Test", V, 2));
        let (initiated, accepted) = both(requester.clone(), acceptor.clone()).await;
        assert_eq!(initiated.unwrap(), (acceptor, V));
        assert_eq!(accepted.unwrap(), (Class::Large, requester, V));
    }

    #[tokio::test]
    async fn a_newer_peer_is_spoken_to_in_our_version() {
        let (initiated, accepted) = both(hello("Test", V + 5, 1), hello("Test", V, 2)).await;
        assert_eq!(initiated.unwrap().1, V);
        assert_eq!(accepted.unwrap().2, V);
    }

    fn refusal<T: std::fmt::Debug>(result: Result<T, HandshakeError>) -> String {
        match result {
            Err(HandshakeError::Refused(why)) => why,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn another_cluster_is_refused_on_both_sides_with_both_names() {
        let (initiated, accepted) = both(hello("Alpha", V, 1), hello("Beta", V, 2)).await;
        for why in [refusal(initiated), refusal(accepted)] {
            assert!(why.contains("'Alpha'") && why.contains("'Beta'"), "{why}");
            assert!(why.contains("cluster name"), "{why}");
        }
    }

    #[tokio::test]
    async fn an_old_version_is_refused_on_both_sides() {
        let (initiated, accepted) = both(hello("Test", OLD, 1), hello("Test", V, 2)).await;
        for why in [refusal(initiated), refusal(accepted)] {
            assert!(why.contains("messaging version is"), "{why}");
        }
    }

    #[tokio::test]
    async fn an_old_acceptor_is_refused_by_the_requester() {
        let (initiated, _) = both(hello("Test", V, 1), hello("Test", OLD, 2)).await;
        assert!(refusal(initiated).contains(&format!("messaging version is {OLD}")));
    }

    #[test]
    fn ipv6_addresses_and_long_names_round_trip() {
        let mut ours = hello(&"x".repeat(MAX_CLUSTER_NAME), V, 1);
        ours.listen = "[::1]:7001".parse().unwrap();
        let wire = encode(2, &ours);
        let (tag, decoded) = decode_body(&wire[6..wire.len() - 4]).unwrap();
        assert_eq!((tag, decoded), (2, ours));
    }

    #[tokio::test]
    async fn malformed_hellos_are_errors() {
        let good = encode(0, &hello("Test", V, 1));
        let mut bad_magic = good.clone();
        bad_magic[0] = b'X';
        let mut bad_crc = good.clone();
        let last = bad_crc.len() - 1;
        bad_crc[last] ^= 1;
        for (input, expect) in [(bad_magic, "magic"), (bad_crc, "CRC")] {
            let result = read_message(&mut &input[..]).await;
            assert!(matches!(&result, Err(HandshakeError::Malformed(m)) if m.contains(expect)));
        }
        for cut in 0..good.len() {
            assert!(read_message(&mut &good[..cut]).await.is_err(), "cut {cut}");
        }
    }

    #[test]
    fn malformed_bodies_are_errors() {
        let body = &encode(0, &hello("Test", V, 1))[6..];
        let body = &body[..body.len() - 4];
        for cut in 0..body.len() {
            assert!(decode_body(&body[..cut]).is_err(), "cut {cut}");
        }
        let mut family = body.to_vec();
        family[18] = 5;
        assert!(decode_body(&family).is_err());
        let mut trailing = body.to_vec();
        trailing.push(0);
        assert!(decode_body(&trailing).is_err());
        let mut name = body.to_vec();
        let len = name.len();
        name[len - 1] = 0xff;
        assert!(decode_body(&name).is_err());
    }

    #[tokio::test]
    async fn an_unknown_class_is_refused() {
        let (mut a, mut b) = tokio::io::duplex(4096);
        a.write_all(&encode(9, &hello("Test", V, 1))).await.unwrap();
        let result = accept(&mut b, &hello("Test", V, 2)).await;
        assert!(matches!(result, Err(HandshakeError::Malformed(m)) if m.contains("class")));
    }
}
