//! Request timeouts: Cassandra 5's `gettimeout`/`settimeout <type> [ms]`, and the
//! `get/set{write,read,range}requesttimeout` forms operators' notes use.

use admin::types::Timeout;

use super::client::Client;
use super::compaction::one_number;
use super::{node_error, unexpected, Failure, Output};

const TYPES: &str = "read, range, write, counterwrite, cascontention, truncate, internodeconnect, \
                     internodeuser, internodestreaminguser, misc (general rpc_timeout_in_ms)";
/// Types Helenus has; the others are accepted by Cassandra but mean nothing here.
const KNOWN: [&str; 4] = ["read", "range", "write", "counterwrite"];

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    let shorthand = ["write", "read", "range"]
        .into_iter()
        .find(|kind| command.ends_with(&format!("{kind}requesttimeout")));
    match (command, shorthand) {
        ("gettimeout", _) => get(client, timeout_type(args, "gettimeout")?, &args[1..]),
        ("settimeout", _) => set(client, timeout_type(args, "settimeout")?, &args[1..]),
        (c, Some(kind)) if c.starts_with("get") => get(client, kind, args),
        (_, Some(kind)) => set(client, kind, args),
        _ => Err(unexpected(&[command.to_string()])),
    }
}

/// The first argument, a timeout type Helenus has.
fn timeout_type<'a>(args: &'a [String], command: &str) -> Result<&'a str, Failure> {
    let Some(kind) = args.first() else {
        return Err(Failure::Usage(format!(
            "{command} requires a timeout type, one of ({TYPES})"
        )));
    };
    if !KNOWN.contains(&kind.as_str()) {
        return Err(Failure::Usage(format!(
            "Timeout type requires one of ({TYPES})"
        )));
    }
    Ok(kind)
}

fn get(client: &Client, kind: &str, rest: &[String]) -> Output {
    super::no_args(rest)?;
    let t: Timeout = client
        .get(&format!("/v1/settings/timeouts/{kind}"))
        .map_err(node_error)?;
    Ok(format!(
        "Current timeout for type {kind}: {} ms\n",
        t.millis
    ))
}

fn set(client: &Client, kind: &str, rest: &[String]) -> Output {
    let millis = one_number(rest, "timeout_in_ms")?;
    let path = format!("/v1/settings/timeouts/{kind}");
    let _: Timeout = client.put(&path, &Timeout { millis }).map_err(node_error)?;
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_types() {
        assert_eq!(
            timeout_type(&["write".into()], "gettimeout").unwrap(),
            "write"
        );
        // matches Cassandra 5.0.4 (`refcass nodetool gettimeout bogus`)
        assert_eq!(
            timeout_type(&["bogus".into()], "gettimeout").unwrap_err(),
            Failure::Usage(format!("Timeout type requires one of ({TYPES})"))
        );
        assert!(timeout_type(&[], "settimeout").is_err());
    }
}
