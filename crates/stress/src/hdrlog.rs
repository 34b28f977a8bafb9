//! `-log hdrfile=`: an HdrHistogram interval log (the format of Java's `HistogramLogWriter`),
//! written with the `hdrhistogram` crate's interval log writer. Each interval adds one
//! histogram per operation type tagged `NAME-st` (service time) and, under `-rate fixed=`,
//! `NAME-rt` (response time from the intended start); values are microseconds, the log's
//! max column milliseconds. A thread owns the file so the reporting loop never blocks on it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;

use crate::metrics::Span;

/// One histogram to log: tag, start (since the log's base time), length.
struct Entry {
    tag: String,
    start: Duration,
    length: Duration,
    histogram: Histogram<u64>,
}

pub struct HdrLog {
    tx: Sender<Entry>,
    writer: JoinHandle<Result<(), String>>,
    base: SystemTime,
}

impl HdrLog {
    pub fn create(path: &str) -> io::Result<HdrLog> {
        let file = File::create(path)?;
        let base = SystemTime::now();
        let (tx, rx) = channel::<Entry>();
        let writer = std::thread::spawn(move || {
            let mut out = BufWriter::new(file);
            let mut serializer = V2DeflateSerializer::new();
            let mut log = IntervalLogWriterBuilder::new()
                .add_comment("Logged with helenus stress")
                .with_start_time(base)
                .with_base_time(base)
                .with_max_value_divisor(1000.0)
                .begin_log_with(&mut out, &mut serializer)
                .map_err(|e| e.to_string())?;
            for e in rx {
                log.write_histogram(&e.histogram, e.start, e.length, Tag::new(&e.tag))
                    .map_err(|e| format!("{e:?}"))?;
            }
            drop(log);
            out.flush().map_err(|e| e.to_string())
        });
        Ok(HdrLog { tx, writer, base })
    }

    /// Logs `span`: one operation type over the interval that has just ended.
    pub fn record(&mut self, name: &str, span: &Span) {
        let start = self
            .base
            .elapsed()
            .unwrap_or_default()
            .saturating_sub(span.elapsed);
        let send = |suffix: &str, h: &Histogram<u64>| {
            if !h.is_empty() {
                // A send fails only if the writer thread stopped; close() reports its error.
                let _ = self.tx.send(Entry {
                    tag: format!("{name}-{suffix}"),
                    start,
                    length: span.elapsed,
                    histogram: h.clone(),
                });
            }
        };
        send("st", &span.stats.service);
        if span.fixed {
            send("rt", &span.stats.response);
        }
    }

    /// Waits for everything to be written.
    pub fn close(self) -> Result<(), String> {
        drop(self.tx);
        self.writer
            .join()
            .map_err(|_| "the HDR log writer panicked".to_string())?
            .map_err(|e| format!("Cannot write the HDR log: {e}"))
    }
}
