//! `HintsDispatcher`: delivers one file of a host's hints, in file order, through the
//! throttle, with up to `WINDOW` hints (`WINDOW_BYTES`) awaiting their acknowledgement.
//! Hints past their gc
//! grace, or of a table that is gone, are dropped unsent. Delivery stops at the first failure
//! (or when told to abort) and reports the start of the first hint not acknowledged, from
//! which the next delivery of the file resumes; hints after it that did arrive are sent again
//! (applying a mutation twice is harmless).
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use bytes::Bytes;
use mutation::TableId;
use tokio::task::JoinHandle;
use tracing::{debug, error, warn};

use crate::deliver::{Deliver, DeliveryError};
use crate::hint::HintHeader;
use crate::metrics::Counters;
use crate::reader::{Ending, HintsReader, OpenError, Page, RawHint};
use crate::store::{Delivered, Lease};
use crate::throttle::Throttle;
use clock::{Clock, SharedClock};

/// Hints read from the file at a time (Cassandra's page).
const PAGE_BYTES: u64 = 512 * 1024;

/// Hints sent and not yet acknowledged, at most.
pub const WINDOW: usize = 128;

/// Bytes of hints sent and not yet acknowledged, at most (one hint may exceed it alone).
pub const WINDOW_BYTES: u64 = 4 * 1024 * 1024;

/// The table's gc grace in seconds; `None` when the table no longer exists.
pub type GcGrace = Arc<dyn Fn(TableId) -> Option<u32> + Send + Sync>;

/// What a delivery needs besides the file.
pub struct HintsDispatcher<'a> {
    pub deliver: Arc<dyn Deliver>,
    pub addr: SocketAddr,
    pub gc_grace: &'a GcGrace,
    pub clock: SharedClock,
    pub counters: &'a Counters,
    pub throttle: &'a mut Throttle,
    /// Checked before each hint is sent: stop (host down, delivery paused, hints truncated).
    pub abort: &'a (dyn Fn() -> bool + Send + Sync),
}

impl HintsDispatcher<'_> {
    pub async fn dispatch(&mut self, dir: &Path, lease: &Lease) -> Delivered {
        let name = lease.file.descriptor.file_name();
        let path = lease.file.descriptor.path(dir);
        let mut reader = match open(&path, lease.offset).await {
            Ok(reader) => reader,
            Err(OpenError::Corrupt(why)) => {
                error!("hints file {name} is unreadable ({why}); dropping it");
                Counters::add(&self.counters.corrupt, 1);
                return Delivered::All;
            }
            Err(OpenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                warn!("hints file {name} has disappeared");
                return Delivered::All;
            }
            Err(OpenError::Io(e)) => {
                error!("cannot read hints file {name}: {e}");
                return Delivered::UpTo(lease.offset);
            }
        };
        let mut pipeline = Pipeline::new(self.counters);
        let mut next = lease.offset;
        loop {
            let page = match read_page(reader).await {
                Ok((back, page)) => {
                    reader = back;
                    page
                }
                Err(e) => {
                    error!("cannot read hints file {name}: {e}");
                    return pipeline.settle(Some(next)).await;
                }
            };
            Counters::add(&self.counters.corrupt, page.bad_records);
            if page.bad_records > 0 {
                warn!("skipped {} corrupt hints in {name}", page.bad_records);
            }
            for hint in page.hints {
                if (self.abort)() || pipeline.failed() {
                    return pipeline.settle(Some(hint.start)).await;
                }
                next = hint.end;
                self.send(&mut pipeline, hint).await;
            }
            if let Some(ending) = page.ending {
                self.report(&name, ending);
                return pipeline.settle(None).await;
            }
        }
    }

    async fn send(&mut self, pipeline: &mut Pipeline<'_>, hint: RawHint) {
        if !self.is_live(&hint.payload) {
            return;
        }
        let len = hint.payload.len() as u64;
        self.throttle.acquire(len).await;
        while pipeline.is_full(len) {
            pipeline.settle_front().await;
        }
        let sent = tokio::spawn(self.deliver.deliver(self.addr, hint.payload));
        pipeline.bytes += len;
        pipeline.in_flight.push_back(InFlight {
            start: hint.start,
            len,
            sent,
        });
    }

    /// Whether the hint may still be delivered; counts it when not.
    fn is_live(&self, payload: &Bytes) -> bool {
        let header = match HintHeader::read(payload) {
            Ok(header) => header,
            Err(e) => {
                warn!("skipping an unreadable hint: {e}");
                Counters::add(&self.counters.corrupt, 1);
                return false;
            }
        };
        let live = match (self.gc_grace)(header.table) {
            Some(gc_grace) => header.is_live(gc_grace, self.clock.now_millis()),
            None => {
                debug!(
                    "dropping a hint for table {}, which no longer exists",
                    header.table
                );
                false
            }
        };
        if !live {
            Counters::add(&self.counters.expired, 1);
        }
        live
    }

    fn report(&self, name: &str, ending: Ending) {
        let why = match ending {
            Ending::Clean => return,
            Ending::Torn => "ends in a record cut short (an unflushed write at a crash)",
            Ending::Corrupt(why) => why,
        };
        warn!("hints file {name} {why}; the rest of the file is skipped");
        Counters::add(&self.counters.corrupt, 1);
    }
}

async fn open(path: &Path, offset: u64) -> Result<HintsReader, OpenError> {
    let path = path.to_path_buf();
    let opened = tokio::task::spawn_blocking(move || {
        let mut reader = HintsReader::open(&path)?;
        reader.seek(offset)?;
        Ok(reader)
    });
    opened
        .await
        .unwrap_or_else(|e| Err(OpenError::Io(std::io::Error::other(e))))
}

async fn read_page(mut reader: HintsReader) -> std::io::Result<(HintsReader, Page)> {
    let read = tokio::task::spawn_blocking(move || {
        let page = reader.read_page(PAGE_BYTES)?;
        Ok((reader, page))
    });
    read.await.unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

struct InFlight {
    /// Where the hint's record starts in the file.
    start: u64,
    len: u64,
    sent: JoinHandle<Result<(), DeliveryError>>,
}

/// Hints sent and awaiting their answer, oldest first.
struct Pipeline<'a> {
    in_flight: VecDeque<InFlight>,
    bytes: u64,
    /// Start of the first hint whose delivery failed.
    failed_at: Option<u64>,
    counters: &'a Counters,
}

impl<'a> Pipeline<'a> {
    fn new(counters: &'a Counters) -> Pipeline<'a> {
        Pipeline {
            in_flight: VecDeque::new(),
            bytes: 0,
            failed_at: None,
            counters,
        }
    }

    fn failed(&self) -> bool {
        self.failed_at.is_some()
    }

    /// Whether a hint of `len` bytes must wait for an answer before it is sent.
    fn is_full(&self, len: u64) -> bool {
        !self.in_flight.is_empty()
            && (self.in_flight.len() >= WINDOW || self.bytes + len > WINDOW_BYTES)
    }

    async fn settle_front(&mut self) {
        let Some(InFlight { start, len, sent }) = self.in_flight.pop_front() else {
            return;
        };
        self.bytes -= len;
        let outcome = sent
            .await
            .unwrap_or_else(|e| Err(DeliveryError::Failed(e.to_string())));
        let counter: &AtomicU64 = match &outcome {
            Ok(()) => &self.counters.dispatched,
            Err(DeliveryError::Timeout) => &self.counters.timed_out,
            Err(DeliveryError::Failed(_)) => &self.counters.failed,
        };
        Counters::add(counter, 1);
        if let Err(e) = outcome {
            if self.failed_at.is_none() {
                debug!("hint delivery failed: {e}");
                self.failed_at = Some(start);
            }
        }
    }

    /// Waits for every answer. `stopped_at` is the start of the first hint not handled,
    /// `None` when the whole file was.
    async fn settle(mut self, stopped_at: Option<u64>) -> Delivered {
        while !self.in_flight.is_empty() {
            self.settle_front().await;
        }
        match self.failed_at.or(stopped_at) {
            Some(start) => Delivered::UpTo(start),
            None => Delivered::All,
        }
    }
}
