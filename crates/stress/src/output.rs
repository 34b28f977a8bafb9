//! Where the run's report goes: the caller's writer (standard output for `helenus stress`),
//! and the `-log file=` file too.

use std::fs::File;
use std::io::{self, Write};

pub struct Output<'a> {
    sink: Option<&'a mut dyn Write>,
    file: Option<File>,
}

impl<'a> Output<'a> {
    pub fn new(sink: &'a mut dyn Write, path: Option<&str>) -> io::Result<Output<'a>> {
        let file = path.map(File::create).transpose()?;
        Ok(Output {
            sink: Some(sink),
            file,
        })
    }

    /// An output that drops everything (warm-up runs).
    pub fn quiet() -> Output<'static> {
        Output {
            sink: None,
            file: None,
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
}
