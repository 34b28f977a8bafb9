//! What one execution of a statement sees: its bound values, its timestamps, the
//! consistency level the client asked for and, when the request is traced, its trace.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use coordinator::Trace;
use types::request::{BoundValue, QueryOptions};
use types::{Consistency, CqlError, CqlResult};

use parking_lot::Mutex;

use crate::guardrails::check::Notice;
use crate::guardrails::Warnings;
use crate::json::JsonDocument;
use crate::operand::Resolved;

/// Per-execution context.
pub struct ExecContext {
    values: Vec<BoundValue>,
    pub consistency: Consistency,
    pub serial_consistency: Option<Consistency>,
    pub page_size: Option<i32>,
    pub paging_state: Option<Bytes>,
    pub skip_metadata: bool,
    client_timestamp: Option<i64>,
    pub now_micros: i64,
    pub now_seconds: i32,
    /// The request's trace; `None` unless the request is traced.
    pub trace: Option<Arc<Trace>>,
    /// The request's client warnings (shared by the statements of a batch).
    pub warnings: Warnings,
    /// `INSERT JSON` documents bound to this execution, decoded once for all their columns.
    json_documents: JsonDocuments,
}

/// Decoded `INSERT JSON` documents by statement document and text.
type JsonDocuments = Mutex<Vec<(usize, Bytes, Arc<DecodedDocument>)>>;

/// Each column's value of a decoded document (see `json::decode_document`).
pub type DecodedDocument = Vec<Option<Option<Bytes>>>;

impl ExecContext {
    /// A context at the process's clock (the unit tests').
    #[cfg(test)]
    pub fn new(options: &QueryOptions, values: Vec<BoundValue>) -> ExecContext {
        ExecContext::at(options, values, unique_micros())
    }

    /// A context whose server-side time is `now_micros` (the node's clock).
    pub fn at(options: &QueryOptions, values: Vec<BoundValue>, now_micros: i64) -> ExecContext {
        ExecContext {
            values,
            consistency: options.consistency,
            serial_consistency: options.serial_consistency,
            page_size: options.page_size.filter(|p| *p > 0),
            paging_state: options.paging_state.clone(),
            skip_metadata: options.skip_metadata,
            client_timestamp: options.timestamp,
            now_micros,
            now_seconds: options
                .now_in_seconds
                .unwrap_or((now_micros / 1_000_000) as i32),
            trace: None,
            warnings: Warnings::default(),
            json_documents: Mutex::default(),
        }
    }

    /// The same context, recording its steps in `trace`.
    pub fn traced(mut self, trace: Option<Arc<Trace>>) -> ExecContext {
        self.trace = trace;
        self
    }

    /// The same context, adding its client warnings to `warnings`.
    pub fn warned(mut self, warnings: Warnings) -> ExecContext {
        self.warnings = warnings;
        self
    }

    /// The trace to hand to the layers below.
    pub fn trace(&self) -> Option<&Trace> {
        self.trace.as_deref()
    }

    /// Where the request's guardrails report.
    pub(crate) fn notice(&self) -> Notice<'_> {
        Notice::client(&self.warnings, self.trace())
    }

    pub fn bound(&self, index: usize) -> CqlResult<Resolved> {
        match self.values.get(index) {
            Some(BoundValue::Set(b)) => Ok(Resolved::Value(b.clone())),
            Some(BoundValue::Null) => Ok(Resolved::Null),
            Some(BoundValue::Unset) => Ok(Resolved::Unset),
            None => Err(CqlError::invalid(format!(
                "No value has been specified for bind marker {index}"
            ))),
        }
    }

    /// The same context with `ts` as the default write timestamp.
    pub fn with_timestamp(&self, ts: i64) -> ExecContext {
        ExecContext {
            values: self.values.clone(),
            consistency: self.consistency,
            serial_consistency: self.serial_consistency,
            page_size: self.page_size,
            paging_state: self.paging_state.clone(),
            skip_metadata: self.skip_metadata,
            client_timestamp: Some(ts),
            now_micros: self.now_micros,
            now_seconds: self.now_seconds,
            trace: self.trace.clone(),
            warnings: self.warnings.clone(),
            json_documents: Mutex::default(),
        }
    }

    /// The column values of an `INSERT JSON` document whose text is `text`, decoded on first
    /// use in this execution.
    pub fn json_values(
        &self,
        document: &Arc<JsonDocument>,
        text: Bytes,
    ) -> CqlResult<Arc<DecodedDocument>> {
        let id = Arc::as_ptr(document) as usize;
        let mut cache = self.json_documents.lock();
        if let Some((_, _, values)) = cache.iter().find(|(i, t, _)| *i == id && *t == text) {
            return Ok(values.clone());
        }
        let utf8 = std::str::from_utf8(&text)
            .map_err(|_| CqlError::invalid("Invalid UTF-8 in the INSERT JSON document"))?;
        let values = Arc::new(crate::json::decode_document(utf8, &document.columns)?);
        cache.push((id, text, values.clone()));
        Ok(values)
    }

    /// The write timestamp when the statement gives none: the client's, else the server's.
    pub fn default_timestamp(&self) -> i64 {
        self.client_timestamp.unwrap_or(self.now_micros)
    }
}

pub use mutation::clock::unique_micros;

static UUID_SEQ: AtomicU64 = AtomicU64::new(0);

/// A version-1 UUID for the given time, unique within this process.
pub fn timeuuid(micros: i64) -> [u8; 16] {
    const GREGORIAN_OFFSET: i64 = 0x01B2_1DD2_1381_4000;
    let seq = UUID_SEQ.fetch_add(1, Ordering::Relaxed);
    let t = (micros * 10 + GREGORIAN_OFFSET + (seq % 10) as i64) as u64;
    let mut out = [0u8; 16];
    out[0..4].copy_from_slice(&((t & 0xffff_ffff) as u32).to_be_bytes());
    out[4..6].copy_from_slice(&(((t >> 32) & 0xffff) as u16).to_be_bytes());
    out[6..8].copy_from_slice(&((((t >> 48) & 0x0fff) as u16) | 0x1000).to_be_bytes());
    let node = node_bits();
    let clock = ((seq / 10) as u16 & 0x3fff) | 0x8000;
    out[8..10].copy_from_slice(&clock.to_be_bytes());
    out[10..16].copy_from_slice(&node[..6]);
    out
}

fn node_bits() -> [u8; 8] {
    static NODE: std::sync::OnceLock<[u8; 8]> = std::sync::OnceLock::new();
    *NODE.get_or_init(|| {
        let r = uuid::Uuid::new_v4();
        let mut b = [0u8; 8];
        b.copy_from_slice(&r.as_bytes()[..8]);
        b[0] |= 0x01; // multicast bit: not a real MAC
        b
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_timestamps_strictly_increase() {
        let a = unique_micros();
        let b = unique_micros();
        assert!(b > a);
    }

    #[test]
    fn timeuuids_are_version_1_and_distinct() {
        let a = timeuuid(1_700_000_000_000_000);
        let b = timeuuid(1_700_000_000_000_000);
        assert_ne!(a, b);
        assert_eq!(a[6] >> 4, 1);
        assert_eq!(a[8] & 0xc0, 0x80);
    }
}
