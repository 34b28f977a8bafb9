//! Cassandra's `system.log` line: `%-5level [%thread] %date{ISO8601} %F:%L - %msg%n`, e.g.
//! `INFO  [main] 2026-11-22 16:01:02,345 server.rs:76 - configuration loaded`. Times are UTC.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use types::value::calendar::{format_date, MILLIS_PER_DAY};

pub struct SystemLog;

impl<S, N> FormatEvent<S, N> for SystemLog
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let thread = std::thread::current();
        let file = meta
            .file()
            .map_or("?", |f| f.rsplit('/').next().unwrap_or(f));
        write!(
            writer,
            "{:<5} [{}] {} {file}:{} - ",
            meta.level().as_str(),
            thread.name().unwrap_or("unnamed"),
            timestamp(now_millis()),
            meta.line().unwrap_or(0)
        )?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Logback's ISO8601 date: `2026-11-22 16:01:02,345`.
fn timestamp(millis: i64) -> String {
    let in_day = millis.rem_euclid(MILLIS_PER_DAY);
    format!(
        "{} {:02}:{:02}:{:02},{:03}",
        format_date(millis.div_euclid(MILLIS_PER_DAY)),
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logback_iso8601() {
        assert_eq!(timestamp(0), "1970-01-01 00:00:00,000");
        assert_eq!(timestamp(1_795_363_262_345), "2026-11-22 16:01:02,345");
    }
}
