//! Where a node says it is: the snitch (`endpoint_snitch`) and, for
//! GossipingPropertyFileSnitch, the data center and rack from `cassandra-rackdc.properties`.

use std::fmt;

/// The file GossipingPropertyFileSnitch reads (Helenus looks for it beside cassandra.yaml).
pub const RACKDC_FILE: &str = "cassandra-rackdc.properties";

const PACKAGE: &str = "org.apache.cassandra.locator.";

/// The snitches Helenus implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Snitch {
    /// Every node in `datacenter1`, `rack1`.
    Simple,
    /// Data center and rack from `cassandra-rackdc.properties`, told to the others by gossip.
    GossipingPropertyFile,
}

impl Snitch {
    /// Parses a short or fully-qualified (`org.apache.cassandra.locator.…`) class name.
    pub fn parse(class_name: &str) -> Option<Snitch> {
        let name = class_name.trim();
        match name.strip_prefix(PACKAGE).unwrap_or(name) {
            "SimpleSnitch" => Some(Snitch::Simple),
            "GossipingPropertyFileSnitch" => Some(Snitch::GossipingPropertyFile),
            _ => None,
        }
    }

    /// The short class name, as `endpoint_snitch` accepts it.
    pub fn class_name(self) -> &'static str {
        match self {
            Snitch::Simple => "SimpleSnitch",
            Snitch::GossipingPropertyFile => "GossipingPropertyFileSnitch",
        }
    }

    /// The data center and rack before any properties file is read: SimpleSnitch's fixed
    /// names, or Cassandra's placeholders for a GossipingPropertyFileSnitch without its file.
    pub fn default_location(self) -> Location {
        let (dc, rack) = match self {
            Snitch::Simple => ("datacenter1", "rack1"),
            Snitch::GossipingPropertyFile => ("UNKNOWN_DC", "UNKNOWN_RACK"),
        };
        Location {
            data_center: dc.to_string(),
            rack: rack.to_string(),
            prefer_local: false,
        }
    }
}

impl fmt::Display for Snitch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class_name())
    }
}

/// This node's data center and rack, and whether peers in the same data center are reached
/// on their private address (`prefer_local`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub data_center: String,
    pub rack: String,
    pub prefer_local: bool,
}

impl Location {
    /// Reads `cassandra-rackdc.properties` text: `dc`, `rack` (trimmed, as Cassandra does;
    /// missing ones stay as in `defaults`) and `prefer_local` (`true` in any case, else false).
    pub fn from_properties(text: &str, defaults: Location) -> Result<Location, String> {
        let mut location = defaults;
        for (key, value) in properties(text) {
            match key.as_str() {
                "dc" => location.data_center = non_empty("dc", &value)?,
                "rack" => location.rack = non_empty("rack", &value)?,
                "prefer_local" => location.prefer_local = value.trim().eq_ignore_ascii_case("true"),
                _ => {}
            }
        }
        Ok(location)
    }
}

fn non_empty(key: &str, value: &str) -> Result<String, String> {
    let value = value.trim();
    if value.is_empty() {
        Err(format!("{key} is empty in {RACKDC_FILE}"))
    } else {
        Ok(value.to_string())
    }
}

/// The `key=value` pairs of a Java properties text: `#` and `!` comments, `=`, `:` or blank
/// as the separator, a trailing backslash continuing the line.
fn properties(text: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let mut line = first.trim_start().to_string();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        while line.ends_with('\\') {
            line.pop();
            match lines.next() {
                Some(next) => line.push_str(next.trim_start()),
                None => break,
            }
        }
        pairs.push(split_pair(&line));
    }
    pairs
}

fn split_pair(line: &str) -> (String, String) {
    let end = line
        .find(|c: char| c == '=' || c == ':' || c.is_whitespace())
        .unwrap_or(line.len());
    let (key, rest) = line.split_at(end);
    let rest = rest.trim_start();
    let value = rest.strip_prefix(['=', ':']).map_or(rest, str::trim_start);
    (key.to_string(), value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snitch_names_short_and_qualified() {
        assert_eq!(Snitch::parse("SimpleSnitch"), Some(Snitch::Simple));
        assert_eq!(
            Snitch::parse("org.apache.cassandra.locator.GossipingPropertyFileSnitch"),
            Some(Snitch::GossipingPropertyFile)
        );
        assert_eq!(Snitch::parse("PropertyFileSnitch"), None);
        assert_eq!(Snitch::parse("com.example.SimpleSnitch"), None);
        assert_eq!(
            Snitch::GossipingPropertyFile.to_string(),
            "GossipingPropertyFileSnitch"
        );
    }

    fn gossiping() -> Location {
        Snitch::GossipingPropertyFile.default_location()
    }

    #[test]
    fn rackdc_properties_as_cassandra_ships_them() {
        let text = "# These properties are used with GossipingPropertyFileSnitch\n\
                    dc=dc1\n rack = rack1 \n\n# prefer_local=true\n";
        let location = Location::from_properties(text, gossiping()).unwrap();
        assert_eq!(
            location,
            Location {
                data_center: "dc1".into(),
                rack: "rack1".into(),
                prefer_local: false
            }
        );
    }

    #[test]
    fn rackdc_separators_continuations_and_prefer_local() {
        let text = "dc: east\\\n  2\nrack r7\n! comment\nprefer_local=TRUE\nunused=x\n";
        let location = Location::from_properties(text, gossiping()).unwrap();
        assert_eq!(location.data_center, "east2");
        assert_eq!(location.rack, "r7");
        assert!(location.prefer_local);
    }

    #[test]
    fn rackdc_missing_keys_keep_defaults_and_empty_ones_are_refused() {
        let location = Location::from_properties("rack=r2\n", gossiping()).unwrap();
        assert_eq!(
            (location.data_center.as_str(), location.rack.as_str()),
            ("UNKNOWN_DC", "r2")
        );
        let err = Location::from_properties("dc=\nrack=r1\n", gossiping()).unwrap_err();
        assert_eq!(err, "dc is empty in cassandra-rackdc.properties");
    }

    fn load_beside(yaml: &str, rackdc: Option<&str>) -> Result<crate::Config, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join("cassandra.yaml");
        std::fs::write(&path, yaml).map_err(|e| e.to_string())?;
        if let Some(text) = rackdc {
            std::fs::write(dir.path().join(RACKDC_FILE), text).map_err(|e| e.to_string())?;
        }
        crate::load(&path)
            .map(|loaded| loaded.config)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn gossiping_snitch_reads_rackdc_beside_the_yaml() {
        let yaml = "endpoint_snitch: org.apache.cassandra.locator.GossipingPropertyFileSnitch\n";
        let config = load_beside(yaml, Some("dc=dc2\nrack=rack3\n")).unwrap();
        assert_eq!(config.endpoint_snitch, Snitch::GossipingPropertyFile);
        assert_eq!(
            (
                config.location.data_center.as_str(),
                config.location.rack.as_str()
            ),
            ("dc2", "rack3")
        );
        let missing = load_beside(yaml, None).unwrap();
        assert_eq!(missing.location.data_center, "UNKNOWN_DC");
        let err = load_beside(yaml, Some("dc= \n")).unwrap_err();
        assert_eq!(
            err,
            "Invalid value 'GossipingPropertyFileSnitch' for endpoint_snitch: \
             dc is empty in cassandra-rackdc.properties"
        );
    }

    #[test]
    fn simple_snitch_ignores_rackdc() {
        let config = load_beside("endpoint_snitch: SimpleSnitch\n", Some("dc=dc9\n")).unwrap();
        assert_eq!(config.location, Snitch::Simple.default_location());
        let default = load_beside("cluster_name: c\n", Some("dc=dc9\n")).unwrap();
        assert_eq!(default.location.data_center, "datacenter1");
    }

    #[test]
    fn other_snitches_are_refused() {
        let err = load_beside("endpoint_snitch: Ec2Snitch\n", None).unwrap_err();
        assert_eq!(
            err,
            "Invalid value 'Ec2Snitch' for endpoint_snitch: \
             Helenus supports only SimpleSnitch and GossipingPropertyFileSnitch"
        );
    }
}
