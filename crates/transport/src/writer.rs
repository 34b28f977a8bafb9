//! The single writer task of a connection: encodes queued envelopes with the connection's
//! current framing and coalesces everything ready into one socket write.
use crate::compression::append_compressed;
use crate::segment::SegmentPacker;
use bytes::BytesMut;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Stop coalescing once this much is ready to write.
const COALESCE_LIMIT: usize = 1 << 20;
/// Drop the write buffer after a burst larger than this rather than keep it allocated.
const KEEP_CAPACITY: usize = 4 << 20;

/// How outbound envelopes are framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    Legacy { lz4: bool },
    V5 { lz4: bool },
}

/// A message for the writer task.
#[derive(Debug)]
pub enum Out {
    /// A complete, uncompressed envelope.
    Envelope(BytesMut),
    /// Applies to every envelope queued after it.
    Framing(Framing),
    /// Write what is queued, then close the socket.
    Close,
}

struct Encoder {
    framing: Framing,
    packer: SegmentPacker,
    buf: BytesMut,
}

impl Encoder {
    fn new() -> Encoder {
        Encoder {
            framing: Framing::Legacy { lz4: false },
            packer: SegmentPacker::new(false),
            buf: BytesMut::with_capacity(64 * 1024),
        }
    }

    /// Encodes one message; returns false on `Close`.
    fn handle(&mut self, out: Out) -> bool {
        match out {
            Out::Envelope(env) => self.push(&env),
            Out::Framing(framing) => {
                self.packer.flush(&mut self.buf);
                self.framing = framing;
                self.packer = SegmentPacker::new(matches!(framing, Framing::V5 { lz4: true }));
            }
            Out::Close => return false,
        }
        true
    }

    fn push(&mut self, env: &[u8]) {
        match self.framing {
            Framing::Legacy { lz4: false } => self.buf.extend_from_slice(env),
            Framing::Legacy { lz4: true } => append_compressed(&mut self.buf, env),
            Framing::V5 { .. } => self.packer.push(env, &mut self.buf),
        }
    }

    fn finish(&mut self) -> &[u8] {
        self.packer.flush(&mut self.buf);
        &self.buf
    }

    fn reset(&mut self) {
        if self.buf.capacity() > KEEP_CAPACITY {
            self.buf = BytesMut::with_capacity(64 * 1024);
        } else {
            self.buf.clear();
        }
    }
}

/// Runs until `Close`, until every sender is gone, or until the socket fails.
pub async fn run<W: AsyncWrite + Unpin>(mut wr: W, mut rx: mpsc::Receiver<Out>) {
    let mut enc = Encoder::new();
    let mut open = true;
    while open {
        let Some(first) = rx.recv().await else { break };
        open = enc.handle(first);
        // What is queued now goes in one send. Waiting for more (a yield) would cost a
        // scheduler round, often a sleep and a wake-up of the worker, for every batch: the
        // requests a read carries are answered before this task runs, and those that waited
        // finish at scattered times anyway.
        while open && enc.buf.len() < COALESCE_LIMIT {
            match rx.try_recv() {
                Ok(next) => open = enc.handle(next),
                Err(_) => break,
            }
        }
        if wr.write_all(enc.finish()).await.is_err() {
            return;
        }
        enc.reset();
    }
    let _ = wr.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response;
    use crate::segment::read_segment;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn coalesces_and_switches_framing() {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (tx, rx) = mpsc::channel(16);
        let task = tokio::spawn(run(server, rx));
        let ready = response::ready(5, 0);
        tx.send(Out::Envelope(ready.clone())).await.unwrap();
        tx.send(Out::Framing(Framing::V5 { lz4: false }))
            .await
            .unwrap();
        tx.send(Out::Envelope(response::ready(5, 1))).await.unwrap();
        tx.send(Out::Envelope(response::ready(5, 2))).await.unwrap();
        tx.send(Out::Close).await.unwrap();
        task.await.unwrap();
        let mut got = Vec::new();
        let mut client = client;
        client.read_to_end(&mut got).await.unwrap();
        assert_eq!(&got[..9], &ready[..]);
        let mut rest = BytesMut::from(&got[9..]);
        let seg = read_segment(&mut rest, false).unwrap().unwrap();
        assert!(seg.self_contained);
        assert_eq!(seg.payload.len(), 18, "both envelopes in one segment");
        assert!(rest.is_empty());
    }
}
