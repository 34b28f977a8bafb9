//! `system_views.settings`: the node's effective configuration, one row per setting, with
//! Cassandra's key names (the value is null when the setting is unset).
use schema::Row as ValueRow;
use types::CqlResult;

use super::{row, text, NodeView, VirtualTable};

pub(super) struct Settings;

impl VirtualTable for Settings {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_views", "settings")
    }

    fn rows(&self, node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        let Some(settings) = &node.sources.settings else {
            return Ok(Vec::new());
        };
        Ok(settings()
            .iter()
            .map(|(name, value)| {
                row(vec![
                    ("name", text(name)),
                    ("value", value.as_deref().and_then(text)),
                ])
            })
            .collect())
    }
}
