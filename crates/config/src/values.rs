//! Turns one YAML node into a typed setting value, with errors naming the key and the value.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use crate::error::ConfigError;
use crate::spec::{parse_duration, DataRate, DataSize, SizeUnit, TimeUnit};
use crate::yaml::Node;

/// A setting's key and its YAML value.
#[derive(Clone, Copy)]
pub struct Value<'a> {
    pub key: &'a str,
    pub node: &'a Node,
}

impl Value<'_> {
    /// An `Invalid` error for this key and value.
    pub fn invalid(&self, reason: impl ToString) -> ConfigError {
        ConfigError::invalid(self.key, self.node, reason)
    }

    /// A scalar's text (numbers and booleans included).
    pub fn text(&self) -> Result<String, ConfigError> {
        self.node
            .scalar_text()
            .ok_or_else(|| self.invalid("expected a single value"))
    }

    pub fn string(&self) -> Result<String, ConfigError> {
        self.text()
    }

    /// A whole number that fits `T` (quoted numbers accepted).
    pub fn integer<T: TryFrom<i128>>(&self) -> Result<T, ConfigError> {
        let n: i128 = match self.node {
            Node::Int(n) => *n,
            Node::Str(s) => s
                .trim()
                .parse()
                .map_err(|_| self.invalid("expected a whole number"))?,
            _ => return Err(self.invalid("expected a whole number")),
        };
        T::try_from(n).map_err(|_| self.invalid("number out of range"))
    }

    pub fn float(&self) -> Result<f64, ConfigError> {
        match self.node {
            Node::Float(f) => Ok(*f),
            Node::Int(n) => Ok(*n as f64),
            Node::Str(s) => s
                .trim()
                .parse()
                .map_err(|_| self.invalid("expected a number")),
            _ => Err(self.invalid("expected a number")),
        }
    }

    pub fn boolean(&self) -> Result<bool, ConfigError> {
        match self.node {
            Node::Bool(b) => Ok(*b),
            Node::Str(s) if s.eq_ignore_ascii_case("true") => Ok(true),
            Node::Str(s) if s.eq_ignore_ascii_case("false") => Ok(false),
            _ => Err(self.invalid("expected true or false")),
        }
    }

    /// A duration whose smallest unit is milliseconds (`2000ms`, `10s`).
    pub fn millis(&self) -> Result<Duration, ConfigError> {
        let text = self.text()?;
        parse_duration(&text, TimeUnit::Milliseconds).map_err(|e| self.invalid(e))
    }

    pub fn size(&self, min: SizeUnit) -> Result<DataSize, ConfigError> {
        DataSize::parse(&self.text()?, min).map_err(|e| self.invalid(e))
    }

    pub fn rate(&self) -> Result<DataRate, ConfigError> {
        DataRate::parse(&self.text()?).map_err(|e| self.invalid(e))
    }

    /// An IP address, or a host name resolved now (IPv4 preferred).
    pub fn address(&self) -> Result<IpAddr, ConfigError> {
        let text = self.text()?;
        resolve(&text).ok_or_else(|| self.invalid("not an IP address or a resolvable host name"))
    }

    pub fn path(&self) -> Result<PathBuf, ConfigError> {
        let text = self.text()?;
        if text.is_empty() {
            return Err(self.invalid("empty path"));
        }
        Ok(PathBuf::from(text))
    }

    /// A list of paths (a single path is accepted as a one-element list).
    pub fn paths(&self) -> Result<Vec<PathBuf>, ConfigError> {
        match self.node {
            Node::Seq(items) => items
                .iter()
                .map(|node| {
                    Value {
                        key: self.key,
                        node,
                    }
                    .path()
                })
                .collect(),
            _ => Ok(vec![self.path()?]),
        }
    }

    /// The class name of a Cassandra `ParameterizedClass` (a name, or a map with `class_name`),
    /// without its Java package.
    pub fn class_name(&self) -> Result<String, ConfigError> {
        let node = match self.node {
            Node::Seq(items) if items.len() == 1 => &items[0],
            node => node,
        };
        let name = match node {
            Node::Map(_) => node.get("class_name").and_then(Node::scalar_text),
            other => other.scalar_text(),
        };
        let name = name.ok_or_else(|| self.invalid("expected a class name"))?;
        Ok(name
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string())
    }
}

/// Resolves an address or host name to one IP address.
pub fn resolve(host: &str) -> Option<IpAddr> {
    if let Ok(ip) = host.parse() {
        return Some(ip);
    }
    let found: Vec<SocketAddr> = (host, 0).to_socket_addrs().ok()?.collect();
    found
        .iter()
        .find(|a| a.is_ipv4())
        .or(found.first())
        .map(SocketAddr::ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(node: &Node) -> Value<'_> {
        Value { key: "k", node }
    }

    #[test]
    fn integers() {
        assert_eq!(value(&Node::Int(32)).integer::<u32>().ok(), Some(32));
        assert_eq!(
            value(&Node::Str("32".into())).integer::<u32>().ok(),
            Some(32)
        );
        let err = value(&Node::Int(-1)).integer::<u32>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid value '-1' for k: number out of range"
        );
        assert!(value(&Node::Str("x".into())).integer::<u32>().is_err());
    }

    #[test]
    fn booleans_and_floats() {
        assert_eq!(value(&Node::Bool(false)).boolean().ok(), Some(false));
        assert_eq!(value(&Node::Str("TRUE".into())).boolean().ok(), Some(true));
        assert!(value(&Node::Int(1)).boolean().is_err());
        assert_eq!(value(&Node::Float(0.5)).float().ok(), Some(0.5));
    }

    #[test]
    fn addresses() {
        let ip = |s: &str| value(&Node::Str(s.into())).address().ok();
        assert_eq!(ip("10.1.2.3"), Some("10.1.2.3".parse().unwrap()));
        assert_eq!(ip("::1"), Some("::1".parse().unwrap()));
        assert!(ip("localhost").is_some_and(|a| a.is_loopback()));
        assert_eq!(ip("no such host.invalid"), None);
    }

    #[test]
    fn class_names() {
        let plain = Node::Str("org.apache.cassandra.auth.AllowAllAuthenticator".into());
        assert_eq!(
            value(&plain).class_name().ok().as_deref(),
            Some("AllowAllAuthenticator")
        );
        let map = Node::Map(vec![(
            "class_name".into(),
            Node::Str("PasswordAuthenticator".into()),
        )]);
        assert_eq!(
            value(&map).class_name().ok().as_deref(),
            Some("PasswordAuthenticator")
        );
    }

    #[test]
    fn paths() {
        let list = Node::Seq(vec![Node::Str("/a".into()), Node::Str("b".into())]);
        assert_eq!(
            value(&list).paths().ok(),
            Some(vec![PathBuf::from("/a"), PathBuf::from("b")])
        );
        assert!(value(&Node::Str(String::new())).path().is_err());
    }
}
