//! Column metadata: a column's name, type, kind (partition key, clustering, regular, static),
//! position and clustering order, with the text Cassandra stores for each.
use types::CqlType;

/// What part of the primary key (if any) a column belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ColumnKind {
    PartitionKey,
    Clustering,
    Static,
    Regular,
}

/// The order of a clustering column; `None` for every other column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClusteringOrder {
    Asc,
    Desc,
    None,
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnMetadata {
    pub name: String,
    pub ty: CqlType,
    pub kind: ColumnKind,
    /// Index within the partition key or clustering; -1 for regular and static columns.
    pub position: i32,
    pub order: ClusteringOrder,
}

impl ColumnKind {
    /// The text of `system_schema.columns.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnKind::PartitionKey => "partition_key",
            ColumnKind::Clustering => "clustering",
            ColumnKind::Static => "static",
            ColumnKind::Regular => "regular",
        }
    }

    /// The kind named by `system_schema.columns.kind` text.
    pub fn from_text(text: &str) -> Option<ColumnKind> {
        match text {
            "partition_key" => Some(ColumnKind::PartitionKey),
            "clustering" => Some(ColumnKind::Clustering),
            "static" => Some(ColumnKind::Static),
            "regular" => Some(ColumnKind::Regular),
            _ => None,
        }
    }

    /// Whether the column is part of the primary key.
    pub fn is_primary_key(self) -> bool {
        matches!(self, ColumnKind::PartitionKey | ColumnKind::Clustering)
    }
}

impl ClusteringOrder {
    /// The text of `system_schema.columns.clustering_order`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClusteringOrder::Asc => "asc",
            ClusteringOrder::Desc => "desc",
            ClusteringOrder::None => "none",
        }
    }

    /// The order named by `system_schema.columns.clustering_order` text.
    pub fn from_text(text: &str) -> Option<ClusteringOrder> {
        match text {
            "asc" => Some(ClusteringOrder::Asc),
            "desc" => Some(ClusteringOrder::Desc),
            "none" => Some(ClusteringOrder::None),
            _ => None,
        }
    }
}

impl ColumnMetadata {
    /// A partition key column at `position`.
    pub fn partition_key(name: &str, ty: CqlType, position: i32) -> ColumnMetadata {
        ColumnMetadata::new(
            name,
            ty,
            ColumnKind::PartitionKey,
            position,
            ClusteringOrder::None,
        )
    }

    /// A clustering column at `position` with `order`.
    pub fn clustering(
        name: &str,
        ty: CqlType,
        position: i32,
        order: ClusteringOrder,
    ) -> ColumnMetadata {
        ColumnMetadata::new(name, ty, ColumnKind::Clustering, position, order)
    }

    /// A regular column.
    pub fn regular(name: &str, ty: CqlType) -> ColumnMetadata {
        ColumnMetadata::new(name, ty, ColumnKind::Regular, -1, ClusteringOrder::None)
    }

    /// A static column.
    pub fn static_column(name: &str, ty: CqlType) -> ColumnMetadata {
        ColumnMetadata::new(name, ty, ColumnKind::Static, -1, ClusteringOrder::None)
    }

    fn new(
        name: &str,
        ty: CqlType,
        kind: ColumnKind,
        position: i32,
        order: ClusteringOrder,
    ) -> ColumnMetadata {
        ColumnMetadata {
            name: name.to_string(),
            ty,
            kind,
            position,
            order,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::NativeType;

    #[test]
    fn kind_text_round_trips() {
        for kind in [
            ColumnKind::PartitionKey,
            ColumnKind::Clustering,
            ColumnKind::Static,
            ColumnKind::Regular,
        ] {
            assert_eq!(ColumnKind::from_text(kind.as_str()), Some(kind));
        }
        assert_eq!(ColumnKind::from_text("compact_value"), None);
    }

    #[test]
    fn order_text_round_trips() {
        for order in [
            ClusteringOrder::Asc,
            ClusteringOrder::Desc,
            ClusteringOrder::None,
        ] {
            assert_eq!(ClusteringOrder::from_text(order.as_str()), Some(order));
        }
    }

    #[test]
    fn constructors_set_cassandra_positions() {
        let int = CqlType::native(NativeType::Int);
        assert_eq!(ColumnMetadata::regular("v", int.clone()).position, -1);
        assert_eq!(
            ColumnMetadata::static_column("s", int.clone()).kind,
            ColumnKind::Static
        );
        let c = ColumnMetadata::clustering("c", int, 1, ClusteringOrder::Desc);
        assert_eq!((c.position, c.order), (1, ClusteringOrder::Desc));
    }
}
