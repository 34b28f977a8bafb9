//! Settings that promise security or durability Helenus does not provide. Their defaults (and
//! the values Helenus implements) are accepted; any other value stops the node at start-up
//! with an error naming the setting and why, rather than running without what it asks for.

use crate::error::ConfigError;
use crate::values::Value;
use crate::yaml::Node;

/// `Ok(true)` when `v.key` is one of these settings and its value is one Helenus honours.
pub fn check(v: Value) -> Result<bool, ConfigError> {
    match v.key {
        "partitioner" => class(v, "Murmur3Partitioner", "Helenus supports only Murmur3Partitioner"),
        "authenticator" => class(
            v,
            "AllowAllAuthenticator",
            "only AllowAllAuthenticator is supported; password authentication is not yet supported by Helenus",
        ),
        "authorizer" => class(
            v,
            "AllowAllAuthorizer",
            "only AllowAllAuthorizer is supported; authorization is not yet supported by Helenus",
        ),
        "role_manager" => class(
            v,
            "CassandraRoleManager",
            "only CassandraRoleManager is supported; Helenus has no other role managers",
        ),
        "network_authorizer" => class(
            v,
            "AllowAllNetworkAuthorizer",
            "only AllowAllNetworkAuthorizer is supported; network authorization is not yet supported by Helenus",
        ),
        "cidr_authorizer" => class(
            v,
            "AllowAllCIDRAuthorizer",
            "only AllowAllCIDRAuthorizer is supported; CIDR authorization is not yet supported by Helenus",
        ),
        "internode_authenticator" => class(
            v,
            "AllowAllInternodeAuthenticator",
            "only AllowAllInternodeAuthenticator is supported; Helenus has no internode authentication",
        ),
        _ => check_options(v),
    }
}

fn check_options(v: Value) -> Result<bool, ConfigError> {
    match v.key {
        "client_encryption_options" => option_off(
            v,
            "client_encryption_options.enabled",
            "client encryption (TLS) is not supported by Helenus; clients would connect unencrypted",
        ),
        "server_encryption_options" => internode_encryption(v),
        "transparent_data_encryption_options" => option_off(
            v,
            "transparent_data_encryption_options.enabled",
            "transparent data encryption is not supported by Helenus; data would be written unencrypted",
        ),
        "audit_logging_options" => option_off(
            v,
            "audit_logging_options.enabled",
            "audit logging is not implemented by Helenus; nothing would be logged",
        ),
        "native_transport_port_ssl" => Err(v.invalid(
            "client encryption (TLS) is not supported by Helenus; there is no encrypted port",
        )),
        _ => check_flags(v),
    }
}

fn check_flags(v: Value) -> Result<bool, ConfigError> {
    let (honoured, reason) = match v.key {
        "start_native_transport" => (
            true,
            "Helenus always starts the native transport; clients could still connect",
        ),
        "cdc_enabled" => (
            false,
            "change data capture is not implemented by Helenus; no CDC log would be kept",
        ),
        "incremental_backups" => (
            false,
            "incremental backups are not implemented by Helenus; flushed SSTables would not be backed up",
        ),
        "snapshot_before_compaction" => (
            false,
            "snapshots before compaction are not implemented by Helenus; none would be taken",
        ),
        _ => return Ok(false),
    };
    if v.boolean()? == honoured {
        Ok(true)
    } else {
        Err(v.invalid(reason))
    }
}

/// A class setting (a name or a `class_name` map) that must name `accepted`.
fn class(v: Value, accepted: &str, refusal: &str) -> Result<bool, ConfigError> {
    if v.class_name()? == accepted {
        Ok(true)
    } else {
        Err(v.invalid(refusal))
    }
}

/// An options map whose `enabled` must be false (or absent); `key` names it in errors.
fn option_off(v: Value, key: &str, refusal: &str) -> Result<bool, ConfigError> {
    let Some(inner) = nested(v, "enabled", key)? else {
        return Ok(true);
    };
    if inner.boolean()? {
        Err(inner.invalid(refusal))
    } else {
        Ok(true)
    }
}

/// `server_encryption_options.internode_encryption` must be `none` (or absent).
fn internode_encryption(v: Value) -> Result<bool, ConfigError> {
    let key = "server_encryption_options.internode_encryption";
    let Some(inner) = nested(v, "internode_encryption", key)? else {
        return Ok(true);
    };
    if inner.text()? == "none" {
        Ok(true)
    } else {
        Err(inner
            .invalid("internode encryption is not supported by Helenus; only none is accepted"))
    }
}

/// The value of `field` in the map `v`, named `key` in errors; `None` when absent or null.
fn nested<'a>(v: Value<'a>, field: &str, key: &'a str) -> Result<Option<Value<'a>>, ConfigError> {
    if !matches!(v.node, Node::Map(_)) {
        return Err(v.invalid("expected a map of options"));
    }
    Ok(v.node
        .get(field)
        .filter(|n| **n != Node::Null)
        .map(|node| Value { key, node }))
}

#[cfg(test)]
mod tests {
    use crate::load::load_str;
    use std::path::Path;

    fn refusal(yaml: &str) -> String {
        match load_str(yaml, Path::new("/")) {
            Ok(_) => panic!("accepted:\n{yaml}"),
            Err(e) => e.to_string(),
        }
    }

    fn accepted(yaml: &str) -> Vec<String> {
        match load_str(yaml, Path::new("/")) {
            Ok(loaded) => loaded.ignored,
            Err(e) => panic!("refused: {e}\n{yaml}"),
        }
    }

    #[test]
    fn encryption_that_is_asked_for_is_refused_naming_the_setting() {
        assert_eq!(
            refusal("client_encryption_options:\n  enabled: true\n  keystore: conf/.keystore\n"),
            "Invalid value 'true' for client_encryption_options.enabled: client encryption (TLS) \
             is not supported by Helenus; clients would connect unencrypted"
        );
        let internode = refusal("server_encryption_options:\n  internode_encryption: all\n");
        assert!(
            internode.starts_with(
                "Invalid value 'all' for server_encryption_options.internode_encryption"
            ),
            "{internode}"
        );
        let tde = refusal("transparent_data_encryption_options:\n  enabled: \"true\"\n");
        assert!(tde.contains("transparent_data_encryption_options.enabled"));
        assert!(refusal("native_transport_port_ssl: 9142\n").contains("native_transport_port_ssl"));
    }

    #[test]
    fn security_classes_other_than_the_defaults_are_refused() {
        for (key, class) in [
            ("role_manager", "com.example.LdapRoleManager"),
            ("network_authorizer", "CassandraNetworkAuthorizer"),
            ("internode_authenticator", "com.example.Mine"),
        ] {
            let error = refusal(&format!("{key}: {class}\n"));
            assert!(
                error.starts_with(&format!("Invalid value '{class}' for {key}")),
                "{error}"
            );
        }
        let cidr = refusal("cidr_authorizer:\n  class_name: CassandraCIDRAuthorizer\n");
        assert!(cidr.contains("cidr_authorizer"), "{cidr}");
    }

    #[test]
    fn audit_logging_cdc_backups_and_a_stopped_transport_are_refused() {
        let audit = refusal("audit_logging_options:\n  enabled: true\n  logger:\n    - class_name: BinAuditLogger\n");
        assert!(audit.contains("audit_logging_options.enabled"), "{audit}");
        for (line, key) in [
            ("cdc_enabled: true", "cdc_enabled"),
            ("incremental_backups: true", "incremental_backups"),
            (
                "snapshot_before_compaction: true",
                "snapshot_before_compaction",
            ),
            ("start_native_transport: false", "start_native_transport"),
        ] {
            assert!(refusal(&format!("{line}\n")).contains(key), "{line}");
        }
    }

    /// The values of Cassandra 5.0's stock cassandra.yaml are accepted and not reported as
    /// ignored: Helenus honours them.
    #[test]
    fn stock_values_are_accepted() {
        let stock = "client_encryption_options:\n  enabled: false\n  keystore: conf/.keystore\n  \
                     keystore_password: cassandra\n  require_client_auth: false\n\
                     server_encryption_options:\n  internode_encryption: none\n  \
                     legacy_ssl_storage_port_enabled: false\n\
                     transparent_data_encryption_options:\n  enabled: false\n  chunk_length_kb: 64\n\
                     audit_logging_options:\n  enabled: false\n  logger:\n    - class_name: BinAuditLogger\n\
                     role_manager: CassandraRoleManager\n\
                     network_authorizer: AllowAllNetworkAuthorizer\n\
                     cidr_authorizer:\n  class_name: AllowAllCIDRAuthorizer\n\
                     start_native_transport: true\ncdc_enabled: false\nincremental_backups: false\n\
                     snapshot_before_compaction: false\n";
        assert_eq!(accepted(stock), Vec::<String>::new());
        assert!(accepted("client_encryption_options:\n  keystore: k\n").is_empty());
    }

    #[test]
    fn a_scalar_where_options_belong_is_refused() {
        assert!(refusal("client_encryption_options: true\n").contains("expected a map of options"));
    }
}
