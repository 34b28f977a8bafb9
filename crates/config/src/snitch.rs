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
    /// SimpleSnitch's: `datacenter1`, `rack1`.
    pub fn simple() -> Location {
        Location {
            data_center: "datacenter1".into(),
            rack: "rack1".into(),
            prefer_local: false,
        }
    }

    /// Reads `cassandra-rackdc.properties` text as Cassandra 5.0's GossipingPropertyFileSnitch
    /// does: `dc` and `rack` are required and trimmed, `prefer_local` is true when it says
    /// `true` in any case. Unlike Cassandra, an empty `dc` or `rack` is refused.
    pub fn from_properties(text: &str) -> Result<Location, String> {
        let pairs = properties(text);
        let get = |key: &str| {
            pairs
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.trim())
        };
        let (Some(dc), Some(rack)) = (get("dc"), get("rack")) else {
            return Err(NOT_FOUND.to_string());
        };
        Ok(Location {
            data_center: non_empty("dc", dc)?,
            rack: non_empty("rack", rack)?,
            prefer_local: get("prefer_local").is_some_and(|v| v.eq_ignore_ascii_case("true")),
        })
    }
}

/// Cassandra 5.0's refusal when the file or one of its keys is missing.
pub const NOT_FOUND: &str =
    "DC or rack not found in snitch properties, check your configuration in: cassandra-rackdc.properties";

fn non_empty(key: &str, value: &str) -> Result<String, String> {
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

    #[test]
    fn rackdc_properties_as_cassandra_ships_them() {
        let text = "# These properties are used with GossipingPropertyFileSnitch\n\
                    dc=dc1\n rack = rack1 \n\n# prefer_local=true\n";
        let location = Location::from_properties(text).unwrap();
        assert_eq!(
            location,
            Location {
                data_center: "dc1".into(),
                rack: "rack1".into(),
                prefer_local: false
            }
        );
    }

    /// Checked against Cassandra 5.0.4 (refcass with `-Dcassandra-rackdc.properties=`):
    /// `dc= east` and `rack : r2` give data center `east` and rack `r2` in system.local.
    #[test]
    fn rackdc_separators_continuations_and_prefer_local() {
        let text = "dc= east \nrack : r2\n! comment\nprefer_local=TRUE\nunused=x\n";
        let location = Location::from_properties(text).unwrap();
        assert_eq!(
            (location.data_center.as_str(), location.rack.as_str()),
            ("east", "r2")
        );
        assert!(location.prefer_local);
        let continued = Location::from_properties("dc: east\\\n  2\nrack r7\n").unwrap();
        assert_eq!(
            (continued.data_center.as_str(), continued.rack.as_str()),
            ("east2", "r7")
        );
    }

    /// Cassandra 5.0.4 refuses to start without both keys (checked with refcass).
    #[test]
    fn rackdc_needs_dc_and_rack_and_refuses_empty_ones() {
        assert_eq!(
            Location::from_properties("rack=r2\n").unwrap_err(),
            NOT_FOUND
        );
        assert_eq!(Location::from_properties("").unwrap_err(), NOT_FOUND);
        let err = Location::from_properties("dc=\nrack=r1\n").unwrap_err();
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
        let err = load_beside(yaml, Some("dc= \nrack=r1\n")).unwrap_err();
        assert_eq!(
            err,
            "Invalid value 'GossipingPropertyFileSnitch' for endpoint_snitch: \
             dc is empty in cassandra-rackdc.properties"
        );
        let missing = load_beside(yaml, None).unwrap_err();
        assert!(
            missing.starts_with(&format!(
                "Invalid value 'GossipingPropertyFileSnitch' for endpoint_snitch: {NOT_FOUND} ("
            )),
            "{missing}"
        );
        assert!(
            missing.ends_with("cassandra-rackdc.properties does not exist)"),
            "{missing}"
        );
    }

    #[test]
    fn simple_snitch_ignores_rackdc() {
        let config = load_beside("endpoint_snitch: SimpleSnitch\n", Some("dc=dc9\n")).unwrap();
        assert_eq!(config.location, Location::simple());
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
