//! The server's logs: events go to stderr (as before) and to `system.log` in the log
//! directory, in Cassandra's `system.log` layout (`LEVEL [thread] date file:line - message`),
//! rotated by size (`system.log.1` is the newest old file; the oldest beyond the kept count is
//! deleted). Levels are one filter for both, changeable at run time (`nodetool
//! setlogginglevel`/`getlogginglevels` through [`admin::LogLevels`]).
//!
//! Start-up settings (environment): `HELENUS_LOG` (initial levels, `info` by default, in
//! `EnvFilter` syntax), `CASSANDRA_LOG_DIR` (the directory, `./logs` by default, as Cassandra's
//! `$CASSANDRA_HOME/logs`), `HELENUS_LOG_FILE_MAX_BYTES` (50 MiB, logback's `maxFileSize` in
//! Cassandra's configuration) and `HELENUS_LOG_FILES_KEPT` (7, its `maxHistory`).

mod file;
mod format;
mod levels;

use std::path::PathBuf;
use std::sync::Arc;

use std::sync::Mutex;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{reload, EnvFilter, Registry};

pub use file::RotatingFile;
use file::SharedFile;
use levels::Levels;

const DEFAULT_MAX_BYTES: u64 = 50 * 1024 * 1024;
const DEFAULT_FILES_KEPT: usize = 7;

/// The running logger: its level filter and its file.
pub struct Logging {
    filter: reload::Handle<EnvFilter, Registry>,
    initial: Levels,
    current: Mutex<Levels>,
    file: SharedFile,
}

impl Logging {
    /// Installs the global subscriber: stderr now, the file once [`open_file`] is called.
    ///
    /// [`open_file`]: Logging::open_file
    pub fn init() -> Arc<Logging> {
        let initial = Levels::parse(&std::env::var("HELENUS_LOG").unwrap_or_default());
        let (initial, filter) = match initial.filter() {
            Ok(filter) => (initial, filter),
            Err(e) => {
                eprintln!("helenus: HELENUS_LOG ignored: {e}");
                let info = Levels::parse("");
                let filter = info.filter().unwrap_or_else(|_| EnvFilter::new("info"));
                (info, filter)
            }
        };
        let (filter, handle) = reload::Layer::new(filter);
        let file = SharedFile::default();
        let stderr = tracing_subscriber::fmt::layer()
            .with_target(false)
            .with_writer(std::io::stderr);
        let system_log = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .event_format(format::SystemLog)
            .with_writer(file.clone());
        let installed = tracing_subscriber::registry()
            .with(filter)
            .with(stderr)
            .with(system_log)
            .try_init();
        if let Err(e) = installed {
            eprintln!("helenus: logging already set up: {e}");
        }
        Arc::new(Logging {
            filter: handle,
            current: Mutex::new(initial.clone()),
            initial,
            file,
        })
    }

    /// Starts writing `system.log` in the directory the environment names (or `./logs`).
    pub fn open_file(&self) -> Result<PathBuf, String> {
        let dir: PathBuf =
            std::env::var_os("CASSANDRA_LOG_DIR").map_or_else(|| "logs".into(), Into::into);
        let max_bytes = env_number("HELENUS_LOG_FILE_MAX_BYTES", DEFAULT_MAX_BYTES)?;
        let kept = env_number("HELENUS_LOG_FILES_KEPT", DEFAULT_FILES_KEPT as u64)?;
        let file = RotatingFile::open(&dir, max_bytes, kept as usize)?;
        let path = file.path().to_path_buf();
        self.file.set(file);
        Ok(path)
    }

    fn apply(&self, levels: Levels) -> Result<(), String> {
        self.filter
            .reload(levels.filter()?)
            .map_err(|e| format!("cannot change the log levels: {e}"))?;
        *lock(&self.current) = levels;
        Ok(())
    }
}

impl admin::LogLevels for Logging {
    fn levels(&self) -> Vec<(String, String)> {
        lock(&self.current).listed()
    }

    fn set(&self, logger: Option<&str>, level: Option<&str>) -> Result<(), String> {
        let logger = logger.map(str::trim).filter(|l| !l.is_empty());
        let level = level.map(str::trim).filter(|l| !l.is_empty());
        let next = match (logger, level) {
            (None, None) => self.initial.clone(),
            (None, Some(_)) => return Err("a level needs a logger name".into()),
            (Some(logger), level) => lock(&self.current).with(logger, level)?,
        };
        self.apply(next)?;
        if let (Some(logger), Some(level)) = (logger, level) {
            let level = levels::logback_level(level);
            tracing::info!("set log level to {level} for classes under '{logger}'");
        }
        Ok(())
    }
}

/// The lock's value even if a panicking thread held it (levels stay consistent: they are
/// replaced whole).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn env_number(name: &str, default: u64) -> Result<u64, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{name} must be a positive whole number, not {text:?}"
            )),
        },
    }
}
