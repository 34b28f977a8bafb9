//! Log levels as nodetool sees them: a root level and levels per logger (a target prefix such
//! as `storage::compaction`, also written `storage.compaction`), with logback's level names,
//! turned into the `EnvFilter` that both outputs share.

use std::collections::BTreeMap;

use tracing_subscriber::EnvFilter;

/// The root level, the loggers' levels (logback names: `TRACE` … `OFF`, `ALL`) and any
/// `HELENUS_LOG` directives nodetool cannot show (span filters), kept as they were.
#[derive(Clone, Debug, PartialEq)]
pub struct Levels {
    root: String,
    loggers: BTreeMap<String, String>,
    extra: Vec<String>,
}

const ROOT: &str = "ROOT";

/// Libraries that log their own machinery, with the level they log at unless one is set for
/// them (as Cassandra's logback.xml quiets its libraries). openraft logs every vote at INFO and
/// every failed heartbeat to a down node at WARN and ERROR, five times a second: the metadata
/// crate logs what an operator needs (group founded, joined, members added, quorum lost).
const QUIET_LIBRARIES: [(&str, &str); 2] = [("openraft", "off"), ("chitchat", "warn")];

impl Levels {
    /// Levels from `EnvFilter` directives (`info,storage=debug`); the root is `INFO` unless
    /// a bare level says otherwise.
    pub fn parse(spec: &str) -> Levels {
        let mut levels = Levels {
            root: "INFO".into(),
            loggers: BTreeMap::new(),
            extra: Vec::new(),
        };
        for directive in spec.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            match directive.split_once('=') {
                None if is_level(directive) => levels.root = logback_level(directive).into(),
                Some((target, level)) if !target.contains('[') && is_level(level) => {
                    levels.set(target, logback_level(level));
                }
                _ => levels.extra.push(directive.to_string()),
            }
        }
        levels
    }

    fn set(&mut self, logger: &str, level: &str) {
        if logger.eq_ignore_ascii_case(ROOT) {
            self.root = level.to_string();
        } else {
            self.loggers.insert(logger.to_string(), level.to_string());
        }
    }

    /// These levels with `logger` set to `level` (logback's parse: unknown names are `DEBUG`),
    /// or without its own level when `level` is `None` (the root then keeps its own). Logger
    /// names are class or module paths: letters, digits, `_`, `$`, `-`, `.` and `::`.
    pub fn with(&self, logger: &str, level: Option<&str>) -> Result<Levels, String> {
        let valid = |c: char| c.is_alphanumeric() || "_$-.:".contains(c);
        if !logger.chars().all(valid) {
            return Err(format!("invalid logger name {logger:?}"));
        }
        let mut next = self.clone();
        match level {
            Some(level) => next.set(logger, logback_level(level)),
            None => {
                next.loggers.remove(logger);
            }
        }
        Ok(next)
    }

    /// `ROOT` first, then every logger with a level of its own, by name.
    pub fn listed(&self) -> Vec<(String, String)> {
        std::iter::once((ROOT.to_string(), self.root.clone()))
            .chain(self.loggers.iter().map(|(l, v)| (l.clone(), v.clone())))
            .collect()
    }

    /// The filter: root level, then each logger as a target directive.
    pub fn filter(&self) -> Result<EnvFilter, String> {
        let mut directives = vec![tracing_level(&self.root).to_string()];
        for (library, level) in QUIET_LIBRARIES {
            let named = |d: &String| d.starts_with(library);
            if !self.loggers.keys().any(named) && !self.extra.iter().any(named) {
                directives.push(format!("{library}={level}"));
            }
        }
        for (logger, level) in &self.loggers {
            directives.push(format!(
                "{}={}",
                logger.replace('.', "::"),
                tracing_level(level)
            ));
        }
        directives.extend(self.extra.iter().cloned());
        let spec = directives.join(",");
        EnvFilter::try_new(&spec).map_err(|e| format!("invalid log levels {spec:?}: {e}"))
    }
}

const LEVELS: [&str; 7] = ["ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF"];

fn is_level(text: &str) -> bool {
    LEVELS.iter().any(|l| l.eq_ignore_ascii_case(text.trim()))
}

/// Logback's `Level.toLevel`: a known name in upper case, anything else `DEBUG`.
pub fn logback_level(text: &str) -> &'static str {
    LEVELS
        .iter()
        .find(|l| l.eq_ignore_ascii_case(text.trim()))
        .copied()
        .unwrap_or("DEBUG")
}

/// The `tracing` level of a logback level (`ALL` is everything: `trace`).
fn tracing_level(logback: &str) -> &'static str {
    match logback {
        "ALL" | "TRACE" => "trace",
        "DEBUG" => "debug",
        "WARN" => "warn",
        "ERROR" => "error",
        "OFF" => "off",
        _ => "info",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_env_filter_directives() {
        let levels = Levels::parse("warn, storage=debug,query[span]=trace");
        assert_eq!(
            levels.listed(),
            vec![
                ("ROOT".to_string(), "WARN".to_string()),
                ("storage".to_string(), "DEBUG".to_string())
            ]
        );
        assert_eq!(levels.extra, vec!["query[span]=trace".to_string()]);
        assert_eq!(Levels::parse("").listed()[0].1, "INFO");
        assert!(levels.filter().is_ok());
    }

    #[test]
    fn setting_and_clearing_loggers() {
        let levels = Levels::parse("info");
        let set = levels.with("storage.compaction", Some("trace")).unwrap();
        assert_eq!(
            set.listed()[1],
            ("storage.compaction".into(), "TRACE".into())
        );
        assert_eq!(set.with("storage.compaction", None).unwrap(), levels);
        let root = levels.with("root", Some("error")).unwrap();
        assert_eq!(root.listed()[0].1, "ERROR");
        assert_eq!(logback_level("nonsense"), "DEBUG");
        assert!(set.filter().is_ok());
        assert!(levels.with("bad name!", Some("info")).is_err());
    }

    #[test]
    fn raft_and_gossip_libraries_are_quiet_unless_given_a_level() {
        let quiet = Levels::parse("").filter().unwrap().to_string();
        assert!(quiet.contains("openraft=off") && quiet.contains("chitchat=warn"));
        let loud = Levels::parse("").with("openraft", Some("debug")).unwrap();
        let loud = loud.filter().unwrap().to_string();
        assert!(loud.contains("openraft=debug") && !loud.contains("openraft=off"));
    }
}
