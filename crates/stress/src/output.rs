//! Where the run's report goes: the caller's writer (standard output for `helenus stress`),
//! the `-log file=` file, and the per-interval recordings behind `-log hdrfile=` (HDR
//! interval log) and `-graph` (the throughput and latency timeline).

use std::fs::File;
use std::io::{self, Write};
use std::time::Duration;

use crate::hdrlog::HdrLog;
use crate::metrics::Span;
use crate::timeline::Timeline;

pub struct Output<'a> {
    sink: Option<&'a mut dyn Write>,
    file: Option<File>,
    hdr: Option<HdrLog>,
    timeline: Option<Timeline>,
}

impl<'a> Output<'a> {
    /// Writes to `sink` and to the `log` file if given; records the timeline if `timeline`.
    pub fn new(
        sink: &'a mut dyn Write,
        log: Option<&str>,
        hdr: Option<&str>,
        timeline: bool,
    ) -> io::Result<Output<'a>> {
        let file = log.map(File::create).transpose()?;
        let hdr = hdr.map(HdrLog::create).transpose()?;
        Ok(Output {
            sink: Some(sink),
            file,
            hdr,
            timeline: timeline.then(Timeline::default),
        })
    }

    /// An output that drops everything (warm-up runs).
    pub fn quiet() -> Output<'static> {
        Output {
            sink: None,
            file: None,
            hdr: None,
            timeline: None,
        }
    }

    /// Writes one line. A closed stdout (`| head`) or a full disk must not abort a
    /// running benchmark, so write errors are dropped here.
    pub fn line(&mut self, s: &str) {
        if let Some(sink) = self.sink.as_mut() {
            let _ = writeln!(sink, "{s}");
            let _ = sink.flush();
        }
        if let Some(f) = self.file.as_mut() {
            let _ = writeln!(f, "{s}");
        }
    }

    /// Starts a new measured run (a series of the timeline).
    pub fn begin_series(&mut self, label: &str) {
        if let Some(t) = self.timeline.as_mut() {
            t.begin(label);
        }
    }

    /// One operation type's interval that has just ended: its histograms to the HDR log.
    pub fn record_op(&mut self, name: &str, span: &Span) {
        if let Some(h) = self.hdr.as_mut() {
            h.record(name, span);
        }
    }

    /// The interval ending `at` over all operation types: a point of the timeline.
    pub fn record_total(&mut self, at: Duration, span: &Span) {
        if let Some(t) = self.timeline.as_mut() {
            t.record(at, span);
        }
    }

    /// Closes the HDR log and hands over the timeline recorded, if any.
    pub fn finish(&mut self) -> Result<Option<Timeline>, String> {
        if let Some(h) = self.hdr.take() {
            h.close()?;
        }
        Ok(self.timeline.take())
    }
}
