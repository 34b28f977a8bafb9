//! A request body collected as its bytes arrive. Its buffer grows in steps, each asked of the
//! connection first ([`crate::framer::Inbound::Grow`]) so that the room is reserved before it
//! is allocated: a body holds room for what has arrived (at most twice that), never for what it
//! only declares.
use crate::framer::Inbound;
use crate::header::Header;
use bytes::Bytes;

/// The first step. A body no longer than this gets all its room at once, so it never waits
/// for room midway; a longer one doubles its room as its bytes come, up to its length.
pub const FIRST_STEP: usize = 128 << 10;

#[derive(Debug)]
pub(crate) struct Body {
    header: Header,
    bytes: Vec<u8>,
    /// Room asked for and not yet given.
    asked: Option<usize>,
}

impl Body {
    pub fn new(header: Header) -> Body {
        Body {
            header,
            bytes: Vec::new(),
            asked: None,
        }
    }

    pub fn header(&self) -> Header {
        self.header
    }

    /// Bytes still to come.
    pub fn missing(&self) -> usize {
        declared(&self.header) - self.bytes.len()
    }

    /// Whether room was asked for and not yet given or refused.
    pub fn asking(&self) -> bool {
        self.asked.is_some()
    }

    /// Takes `bytes` (no more than are missing) when they fit. Otherwise the unit for the
    /// framer to yield: the room to ask for, or nothing while the answer is awaited.
    pub fn offer(&mut self, bytes: &[u8]) -> Result<(), Option<Inbound>> {
        if self.asking() {
            return Err(None);
        }
        if let Some(room) = self.ask_room(bytes.len()) {
            let header = self.header;
            return Err(Some(Inbound::Grow {
                header,
                bytes: room,
            }));
        }
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    /// The room to add before `n` more bytes fit (then asked for), or `None` when they fit.
    fn ask_room(&mut self, n: usize) -> Option<usize> {
        let (len, room) = (self.bytes.len(), self.bytes.capacity());
        if len + n <= room {
            return None;
        }
        let grown = (len + n)
            .max(room * 2)
            .max(FIRST_STEP)
            .min(declared(&self.header));
        self.asked = Some(grown - room);
        self.asked
    }

    /// Adds the room asked for (now reserved).
    pub fn give_room(&mut self) {
        if let Some(more) = self.asked.take() {
            let room = self.bytes.capacity() + more;
            self.bytes.reserve_exact(room - self.bytes.len());
        }
    }

    /// The whole body, in the buffer collected (its room is its length by then).
    pub fn into_bytes(self) -> Bytes {
        Bytes::from(self.bytes)
    }
}

/// The declared body length (never negative: the framer refuses that).
pub(crate) fn declared(header: &Header) -> usize {
    usize::try_from(header.length).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(length: usize) -> Header {
        let mut raw = [4u8, 0, 0, 1, 7, 0, 0, 0, 0];
        raw[5..].copy_from_slice(&(length as i32).to_be_bytes());
        Header::parse(&raw)
    }

    /// Feeds `chunk`-byte pieces until the body is in, giving every room asked for: the
    /// steps asked, each followed by the room the buffer really has.
    fn collect(length: usize, chunk: usize) -> (Vec<usize>, Bytes) {
        let mut body = Body::new(header(length));
        let mut steps = Vec::new();
        while body.missing() > 0 {
            let piece = vec![9u8; chunk.min(body.missing())];
            match body.offer(&piece) {
                Ok(()) => {}
                Err(Some(Inbound::Grow { bytes, .. })) => {
                    assert_eq!(body.offer(&piece), Err(None), "awaits the answer");
                    let before = body.bytes.capacity();
                    body.give_room();
                    assert_eq!(body.bytes.capacity(), before + bytes, "room as asked");
                    steps.push(bytes);
                    body.offer(&piece).expect("fits the room given");
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        (steps, body.into_bytes())
    }

    #[test]
    fn a_short_body_gets_all_its_room_at_once() {
        let (steps, bytes) = collect(100_000, 7);
        assert_eq!(steps, vec![100_000]);
        assert_eq!(bytes.len(), 100_000);
    }

    #[test]
    fn a_long_body_doubles_its_room_as_it_arrives_up_to_its_length() {
        let length = (1 << 20) + 5;
        let (steps, bytes) = collect(length, 64 << 10);
        let k = 1024;
        assert_eq!(
            steps,
            vec![128 * k, 128 * k, 256 * k, 512 * k, 5],
            "128 KiB, 256 KiB, 512 KiB, 1 MiB, then the length"
        );
        assert_eq!(steps.iter().sum::<usize>(), length);
        assert!(bytes.iter().all(|b| *b == 9) && bytes.len() == length);
    }

    #[test]
    fn a_half_sent_body_holds_room_for_what_arrived() {
        let mut body = Body::new(header(16 << 20));
        let piece = [1; 64 << 10];
        let asked = body.offer(&piece).unwrap_err();
        assert!(matches!(
            asked,
            Some(Inbound::Grow {
                bytes: FIRST_STEP,
                ..
            })
        ));
        body.give_room();
        body.offer(&piece).expect("the room given");
        body.offer(&piece).expect("the first step still has room");
        assert_eq!(body.missing(), (16 << 20) - (128 << 10));
        assert_eq!(body.bytes.capacity(), FIRST_STEP);
    }
}
