//! `getlogginglevels` and `setlogginglevel [<logger> [<level>]]` (no arguments: back to the
//! start-up levels; a logger alone: it loses its own level), in Cassandra 5.0.4's layout.

use admin::types::{LogLevelRequest, LogLevelsBody};

use super::client::Client;
use super::{no_args, node_error, unexpected, Output};

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    if command == "getlogginglevels" {
        no_args(args)?;
        let body: LogLevelsBody = client.get("/v1/logging").map_err(node_error)?;
        return Ok(render(&body));
    }
    let request = match args {
        [] => LogLevelRequest::default(),
        [logger] => LogLevelRequest {
            logger: Some(logger.clone()),
            level: None,
        },
        [logger, level] => LogLevelRequest {
            logger: Some(logger.clone()),
            level: Some(level.clone()),
        },
        [_, _, extra @ ..] => return Err(unexpected(extra)),
    };
    let _: LogLevelsBody = client.put("/v1/logging", &request).map_err(node_error)?;
    Ok(String::new())
}

/// A blank line, then `%-50s%10s` rows under `Logger Name` and `Log Level`.
pub fn render(body: &LogLevelsBody) -> String {
    let mut out = format!("\n{:<50}{:>10}\n", "Logger Name", "Log Level");
    for level in &body.levels {
        out.push_str(&format!("{:<50}{:>10}\n", level.logger, level.level));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::types::LogLevel;

    #[test]
    fn getlogginglevels_layout() {
        // as `refcass nodetool getlogginglevels` prints it, plus one logger
        let body = LogLevelsBody {
            levels: vec![
                LogLevel {
                    logger: "ROOT".into(),
                    level: "INFO".into(),
                },
                LogLevel {
                    logger: "storage.compaction".into(),
                    level: "DEBUG".into(),
                },
            ],
        };
        assert_eq!(
            render(&body),
            "\nLogger Name                                        Log Level\n\
             ROOT                                                    INFO\n\
             storage.compaction                                     DEBUG\n"
        );
    }
}
