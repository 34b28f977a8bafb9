//! How deep and how large a resolved type is. A type text is bounded by its parser, but user
//! types nest by reference: a chain of `CREATE TYPE` statements, each shallow, builds a type of
//! any depth, and a type with two fields of the previous one doubles its expanded size at each
//! step. Schema statements check both before they store a type, so that every walk over a
//! type (and over a value of it) stays bounded.
use std::collections::HashMap;
use std::sync::Arc;

use super::{CqlType, UdtType};
use crate::error::TypeError;
use crate::limits::MAX_NESTING;

/// The most nodes a type may have with its user types expanded (each UDT field, collection
/// element, tuple item...). Far above any real schema; it keeps the `[option]` a result carries
/// for a column, and every walk over the type, small.
pub const MAX_TYPE_NODES: usize = 1 << 16;

/// Depth and expanded size of each user type met, by identity (shared `Arc`s).
type Seen = HashMap<*const UdtType, (usize, usize)>;

impl CqlType {
    /// Levels of collections, tuples, user types and vectors (frozen is no level; a native
    /// type is 0). User types shared by several fields are measured once.
    pub fn nesting_depth(&self) -> usize {
        self.measure(&mut Seen::new()).0
    }

    /// Refuses a type nested deeper than `MAX_NESTING` or larger than `MAX_TYPE_NODES`.
    pub fn check_bounds(&self) -> Result<(), TypeError> {
        let (depth, nodes) = self.measure(&mut Seen::new());
        if depth > MAX_NESTING {
            return Err(TypeError(format!(
                "Type nested too deeply: {depth} levels of collections, tuples, user types and \
                 vectors, at most {MAX_NESTING} are allowed"
            )));
        }
        if nodes > MAX_TYPE_NODES {
            return Err(TypeError(format!(
                "Type too large: more than {MAX_TYPE_NODES} component types once its user types \
                 are expanded"
            )));
        }
        Ok(())
    }

    /// (depth, expanded node count), the count saturating.
    fn measure(&self, seen: &mut Seen) -> (usize, usize) {
        match self {
            CqlType::Native(_) | CqlType::Custom(_) => (0, 1),
            CqlType::Frozen(inner) => inner.measure(seen),
            CqlType::List(e) | CqlType::Set(e) | CqlType::Vector(e, _) => {
                composite([e.as_ref()], seen)
            }
            CqlType::Map(k, v) => composite([k.as_ref(), v.as_ref()], seen),
            CqlType::Tuple(items) => composite(items, seen),
            CqlType::Udt(udt) => udt_measure(udt, seen),
        }
    }
}

fn udt_measure(udt: &Arc<UdtType>, seen: &mut Seen) -> (usize, usize) {
    let key = Arc::as_ptr(udt);
    if let Some(&known) = seen.get(&key) {
        return known;
    }
    let measured = composite(udt.fields.iter().map(|(_, t)| t), seen);
    seen.insert(key, measured);
    measured
}

fn composite<'a>(parts: impl IntoIterator<Item = &'a CqlType>, seen: &mut Seen) -> (usize, usize) {
    parts.into_iter().fold((1, 1), |(depth, nodes), part| {
        let (d, n) = part.measure(seen);
        (depth.max(d + 1), nodes.saturating_add(n))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cql_type::NativeType;

    fn int() -> CqlType {
        CqlType::native(NativeType::Int)
    }

    fn frozen_lists(depth: usize) -> CqlType {
        (0..depth).fold(int(), |t, _| CqlType::List(Box::new(t)).freeze())
    }

    fn udt(name: &str, fields: Vec<CqlType>) -> CqlType {
        let fields = fields
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("f{i}"), t))
            .collect();
        CqlType::Udt(Arc::new(UdtType::new("ks", name, fields)))
    }

    #[test]
    fn depth_counts_composites_not_frozen() {
        assert_eq!(int().nesting_depth(), 0);
        assert_eq!(frozen_lists(3).nesting_depth(), 3);
        let map = CqlType::Map(Box::new(int()), Box::new(frozen_lists(2)));
        assert_eq!(map.nesting_depth(), 3);
        assert_eq!(udt("u", vec![int(), frozen_lists(4)]).nesting_depth(), 5);
    }

    #[test]
    fn depth_limit_at_and_past() {
        assert_eq!(frozen_lists(MAX_NESTING).check_bounds(), Ok(()));
        let message = frozen_lists(MAX_NESTING + 1).check_bounds().unwrap_err().0;
        assert!(
            message.starts_with("Type nested too deeply: 101 levels"),
            "{message}"
        );
    }

    #[test]
    fn chained_user_types_are_measured_once_each() {
        // Each type has two fields of the previous one: 2^60 nodes expanded, measured in 60 steps.
        let mut t = udt("u0", vec![int()]);
        for i in 1..=60 {
            let frozen = t.freeze();
            t = udt(&format!("u{i}"), vec![frozen.clone(), frozen]);
        }
        assert_eq!(t.nesting_depth(), 61);
        let message = t.check_bounds().unwrap_err().0;
        assert!(message.starts_with("Type too large"), "{message}");
    }

    #[test]
    fn size_limit_at_and_past() {
        let wide = |n: usize| CqlType::Tuple(vec![int(); n]);
        assert_eq!(wide(MAX_TYPE_NODES - 1).check_bounds(), Ok(()));
        assert!(wide(MAX_TYPE_NODES).check_bounds().is_err());
    }
}
