//! The guardrails of Cassandra 5.0's `Guardrails` class that Helenus enforces: names, reasons
//! and messages word for word, with the values cassandra.yaml gives them.
use config::Limit;

use super::check::{Flag, Level, Levels, Threshold};
use super::Limits;

fn amount(value: Option<u64>) -> Option<i64> {
    value.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

fn threshold<T: Limit>(
    name: &'static str,
    reason: Option<&'static str>,
    values: &config::Threshold<T>,
    message: fn(Level, &str, &str, &str) -> String,
) -> Threshold {
    let (warn, fail) = values.amounts();
    Threshold {
        name,
        reason,
        warn: amount(warn),
        fail: amount(fail),
        minimum: false,
        message,
    }
}

fn flag(name: &'static str, enabled: bool, feature: &'static str) -> Flag {
    Flag {
        name,
        reason: None,
        enabled,
        warned: false,
        feature,
    }
}

const ZERO_TTL_ON_TWCS_REASON: &str = "It is suspicious to use default_time_to_live set to 0 with such compaction strategy. Please keep in mind that data will not start to automatically expire after they are older than a respective compaction window unit of a certain size. Please set TTL for your INSERT or UPDATE statements if you expect data to be expired as table settings will not do it. ";

impl Limits {
    pub(crate) fn keyspaces(&self) -> Threshold {
        threshold(
            "keyspaces",
            None,
            &self.guardrails.keyspaces,
            |level, what, value, threshold| {
                match level {
            Level::Warn => format!("Creating keyspace {what}, current number of keyspaces {value} exceeds warning threshold of {threshold}."),
            Level::Fail => format!("Cannot have more than {threshold} keyspaces, aborting the creation of keyspace {what}"),
        }
            },
        )
    }

    pub(crate) fn tables(&self) -> Threshold {
        threshold(
            "tables",
            None,
            &self.guardrails.tables,
            |level, what, value, threshold| {
                match level {
            Level::Warn => format!("Creating table {what}, current number of tables {value} exceeds warning threshold of {threshold}."),
            Level::Fail => format!("Cannot have more than {threshold} tables, aborting the creation of table {what}"),
        }
            },
        )
    }

    pub(crate) fn columns_per_table(&self) -> Threshold {
        threshold(
            "columns_per_table",
            None,
            &self.guardrails.columns_per_table,
            |level, what, value, threshold| {
                match level {
            Level::Warn => format!("The table {what} has {value} columns, this exceeds the warning threshold of {threshold}."),
            Level::Fail => format!("Tables cannot have more than {threshold} columns, but {value} provided for table {what}"),
        }
            },
        )
    }

    pub(crate) fn fields_per_udt(&self) -> Threshold {
        threshold(
            "fields_per_udt",
            None,
            &self.guardrails.fields_per_udt,
            |level, what, value, threshold| {
                match level {
            Level::Warn => format!("The user type {what} has {value} columns, this exceeds the warning threshold of {threshold}."),
            Level::Fail => format!("User types cannot have more than {threshold} columns, but {value} provided for user type {what}."),
        }
            },
        )
    }

    pub(crate) fn page_size(&self) -> Threshold {
        threshold(
            "page_size",
            None,
            &self.guardrails.page_size,
            |level, what, value, threshold| {
                match level {
            Level::Warn => format!("Query for table {what} with page size {value} exceeds warning threshold of {threshold}."),
            Level::Fail => format!("Aborting query for table {what}, page size {value} exceeds fail threshold of {threshold}."),
        }
            },
        )
    }

    pub(crate) fn partition_keys_in_select(&self) -> Threshold {
        threshold(
            "partition_keys_in_select",
            None,
            &self.guardrails.partition_keys_in_select,
            |level, what, value, threshold| {
                match level {
            Level::Warn => format!("Query with partition keys in IN clause on table {what}, with number of partition keys {value} exceeds warning threshold of {threshold}."),
            Level::Fail => format!("Aborting query with partition keys in IN clause on table {what}, number of partition keys {value} exceeds fail threshold of {threshold}."),
        }
            },
        )
    }

    pub(crate) fn in_select_cartesian_product(&self) -> Threshold {
        threshold(
            "in_select_cartesian_product",
            None,
            &self.guardrails.in_select_cartesian_product,
            |level, what, value, threshold| {
                match level {
            Level::Warn => format!("The cartesian product of the IN restrictions on {what} produces {value} values, this exceeds warning threshold of {threshold}."),
            Level::Fail => format!("Aborting query because the cartesian product of the IN restrictions on {what} produces {value} values, this exceeds fail threshold of {threshold}."),
        }
            },
        )
    }

    pub(crate) fn partition_size(&self) -> Threshold {
        threshold(
            "partition_size",
            Some("Too large partitions can cause performance problems."),
            &self.guardrails.partition_size,
            |level, what, value, threshold| {
                format!("Partition {what} has size {value}, this exceeds the {} threshold of {threshold}.", level.word())
            },
        )
    }

    pub(crate) fn partition_tombstones(&self) -> Threshold {
        threshold(
            "partition_tombstones",
            Some("Partitions with too many tombstones can cause performance problems."),
            &self.guardrails.partition_tombstones,
            |level, what, value, threshold| {
                format!("Partition {what} has {value} tombstones, this exceeds the {} threshold of {threshold}.", level.word())
            },
        )
    }

    pub(crate) fn column_value_size(&self) -> Threshold {
        threshold(
            "column_value_size",
            None,
            &self.guardrails.column_value_size,
            |level, what, value, threshold| {
                format!("Value of column '{what}' has size {value}, this exceeds the {} threshold of {threshold}.", level.word())
            },
        )
    }

    pub(crate) fn collection_size(&self) -> Threshold {
        threshold(
            "collection_size",
            None,
            &self.guardrails.collection_size,
            |level, what, value, threshold| {
                format!("Detected collection {what} of size {value}, this exceeds the {} threshold of {threshold}.", level.word())
            },
        )
    }

    pub(crate) fn items_per_collection(&self) -> Threshold {
        threshold(
            "items_per_collection",
            None,
            &self.guardrails.items_per_collection,
            |level, what, value, threshold| {
                format!("Detected collection {what} with {value} items, this exceeds the {} threshold of {threshold}.", level.word())
            },
        )
    }

    pub(crate) fn minimum_replication_factor(&self) -> Threshold {
        let rf = threshold(
            "minimum_replication_factor",
            None,
            &self.guardrails.minimum_replication_factor,
            |level, what, value, threshold| {
                format!("The keyspace {what} has a replication factor of {value}, below the {} threshold of {threshold}.", level.word())
            },
        );
        Threshold {
            minimum: true,
            ..rf
        }
    }

    pub(crate) fn maximum_replication_factor(&self) -> Threshold {
        threshold(
            "maximum_replication_factor",
            None,
            &self.guardrails.maximum_replication_factor,
            |level, what, value, threshold| {
                format!("The keyspace {what} has a replication factor of {value}, above the {} threshold of {threshold}.", level.word())
            },
        )
    }

    /// Timestamps after `now` (microseconds) plus the configured durations.
    pub(crate) fn maximum_timestamp(&self, now: i64) -> Threshold {
        let t = threshold("maximum_timestamp", Some("Timestamps too far in the future can lead to data that can't be easily overwritten"), &self.guardrails.maximum_timestamp, |level, what, value, threshold| {
            format!("The modification to table {what} has a timestamp {value} after the maximum allowable {} threshold {threshold}", level.word())
        });
        let shift = |d: Option<i64>| d.map(|d| now.saturating_add(d));
        Threshold {
            warn: shift(t.warn),
            fail: shift(t.fail),
            ..t
        }
    }

    /// Timestamps before `now` (microseconds) minus the configured durations.
    pub(crate) fn minimum_timestamp(&self, now: i64) -> Threshold {
        let t = threshold(
            "minimum_timestamp",
            Some("Timestamps too far in the past can cause writes can be unexpectedly lost"),
            &self.guardrails.minimum_timestamp,
            |level, what, value, threshold| {
                format!("The modification to table {what} has a timestamp {value} before the minimum allowable {} threshold {threshold}", level.word())
            },
        );
        let shift = |d: Option<i64>| d.map(|d| now.saturating_sub(d));
        Threshold {
            warn: shift(t.warn),
            fail: shift(t.fail),
            minimum: true,
            ..t
        }
    }

    pub(crate) fn user_timestamps(&self) -> Flag {
        flag(
            "user_timestamps",
            self.guardrails.user_timestamps_enabled,
            "User provided timestamps (USING TIMESTAMP)",
        )
    }

    pub(crate) fn group_by(&self) -> Flag {
        flag(
            "group_by",
            self.guardrails.group_by_enabled,
            "GROUP BY functionality",
        )
    }

    pub(crate) fn alter_table(&self) -> Flag {
        flag(
            "alter_table",
            self.guardrails.alter_table_enabled,
            "User access to ALTER TABLE statement for column mutation",
        )
    }

    pub(crate) fn drop_truncate_table(&self) -> Flag {
        flag(
            "drop_truncate_table_enabled",
            self.guardrails.drop_truncate_table_enabled,
            "DROP and TRUNCATE TABLE functionality",
        )
    }

    pub(crate) fn drop_keyspace(&self) -> Flag {
        flag(
            "drop_keyspace_enabled",
            self.guardrails.drop_keyspace_enabled,
            "DROP KEYSPACE functionality",
        )
    }

    pub(crate) fn uncompressed_tables(&self) -> Flag {
        flag(
            "uncompressed_tables_enabled",
            self.guardrails.uncompressed_tables_enabled,
            "Uncompressed table",
        )
    }

    pub(crate) fn compact_tables(&self) -> Flag {
        flag(
            "compact_tables",
            self.guardrails.compact_tables_enabled,
            "Creation of new COMPACT STORAGE tables",
        )
    }

    pub(crate) fn read_before_write_list_operations(&self) -> Flag {
        flag(
            "read_before_write_list_operations",
            self.guardrails.read_before_write_list_operations_enabled,
            "List operation requiring read before write",
        )
    }

    pub(crate) fn simple_strategy(&self) -> Flag {
        flag(
            "simplestrategy",
            self.guardrails.simplestrategy_enabled,
            "SimpleStrategy",
        )
    }

    pub(crate) fn allow_filtering(&self) -> Flag {
        Flag {
            reason: Some("ALLOW FILTERING can potentially visit all the data in the table and have unpredictable performance."),
            ..flag("allow_filtering", self.guardrails.allow_filtering_enabled, "Querying with ALLOW FILTERING")
        }
    }

    pub(crate) fn zero_ttl_on_twcs(&self) -> Flag {
        Flag {
            reason: Some(ZERO_TTL_ON_TWCS_REASON),
            warned: self.guardrails.zero_ttl_on_twcs_warned,
            ..flag("zero_ttl_on_twcs", self.guardrails.zero_ttl_on_twcs_enabled, "0 default_time_to_live on a table with TimeWindowCompactionStrategy compaction strategy")
        }
    }

    pub(crate) fn read_consistency_levels(&self) -> Levels {
        Levels {
            name: "read_consistency_levels",
            warned: self.guardrails.read_consistency_levels_warned,
            disallowed: self.guardrails.read_consistency_levels_disallowed,
            what: "read consistency levels",
        }
    }

    pub(crate) fn write_consistency_levels(&self) -> Levels {
        Levels {
            name: "write_consistency_levels",
            warned: self.guardrails.write_consistency_levels_warned,
            disallowed: self.guardrails.write_consistency_levels_disallowed,
            what: "write consistency levels",
        }
    }
}
