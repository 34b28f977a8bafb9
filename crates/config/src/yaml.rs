//! A plain YAML value tree (read with serde-saphyr) that keeps the top-level key order, so
//! each setting can be parsed and reported by its own key.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One YAML node.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    /// The text of a scalar, as the operator would have written it; `None` for collections.
    pub fn scalar_text(&self) -> Option<String> {
        match self {
            Node::Null => Some(String::new()),
            Node::Bool(b) => Some(b.to_string()),
            Node::Int(i) => Some(i.to_string()),
            Node::Float(f) => Some(f.to_string()),
            Node::Str(s) => Some(s.clone()),
            Node::Seq(_) | Node::Map(_) => None,
        }
    }

    /// The value of `key` when this node is a mapping holding it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Seq(items) => {
                let texts: Vec<String> = items.iter().map(Node::to_string).collect();
                write!(f, "[{}]", texts.join(", "))
            }
            Node::Map(entries) => {
                let texts: Vec<String> = entries.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                write!(f, "{{{}}}", texts.join(", "))
            }
            scalar => f.write_str(&scalar.scalar_text().unwrap_or_default()),
        }
    }
}

/// Parses a document whose top level must be a mapping (an empty document is an empty one).
pub fn parse_top_level(text: &str) -> Result<Vec<(String, Node)>, String> {
    let node: Option<Node> = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    match node {
        None | Some(Node::Null) => Ok(Vec::new()),
        Some(Node::Map(entries)) => Ok(entries),
        Some(other) => Err(format!("expected a mapping of settings, found '{other}'")),
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(Node::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Node>()? {
            let key = key
                .scalar_text()
                .ok_or_else(|| de::Error::custom("mapping keys must be scalars"))?;
            entries.push((key, map.next_value()?));
        }
        Ok(Node::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_keep_their_types() {
        let text = "a: 1\nb: 10s\nc: true\nd:\ne: 0.5\nf: \"2000\"\ng: -9223372036854775808\n";
        let entries = parse_top_level(text).unwrap();
        let values: Vec<Node> = entries.into_iter().map(|(_, v)| v).collect();
        assert_eq!(
            values,
            vec![
                Node::Int(1),
                Node::Str("10s".into()),
                Node::Bool(true),
                Node::Null,
                Node::Float(0.5),
                Node::Str("2000".into()),
                Node::Int(i128::from(i64::MIN)),
            ]
        );
    }

    #[test]
    fn nested_structures_and_order() {
        let text = "z: [a, b]\nseed_provider:\n  - class_name: X\n    parameters:\n      - seeds: \"1.2.3.4\"\n";
        let entries = parse_top_level(text).unwrap();
        assert_eq!(entries[0].0, "z");
        assert_eq!(entries[0].1.to_string(), "[a, b]");
        let Node::Seq(providers) = &entries[1].1 else {
            panic!("not a sequence: {:?}", entries[1].1);
        };
        assert_eq!(providers[0].get("class_name"), Some(&Node::Str("X".into())));
    }

    #[test]
    fn empty_and_comment_only_documents_are_empty() {
        assert_eq!(parse_top_level(""), Ok(Vec::new()));
        assert_eq!(parse_top_level("# nothing\n"), Ok(Vec::new()));
    }

    #[test]
    fn non_mapping_and_broken_documents_are_errors() {
        assert!(parse_top_level("- a\n- b\n").is_err());
        assert!(parse_top_level("a: [1, 2\n").is_err());
        assert!(parse_top_level("a: 1\na: 2\n").is_err());
    }
}
