//! `gettraceprobability` and `settraceprobability <trace_probability>`: the fraction of
//! requests the node traces though the client did not ask.

use admin::TraceProbability;

use super::client::Client;
use super::compaction::one_value;
use super::{no_args, node_error, Failure, Output};

const PATH: &str = "/v1/settings/trace_probability";

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    if command == "gettraceprobability" {
        no_args(args)?;
        let current: TraceProbability = client.get(PATH).map_err(node_error)?;
        return Ok(format!(
            "Current trace probability: {:?}\n",
            current.probability
        ));
    }
    let probability = parse(args)?;
    let _: TraceProbability = client
        .put(PATH, &TraceProbability { probability })
        .map_err(node_error)?;
    Ok(String::new())
}

/// The argument of `settraceprobability`, checked as Cassandra's nodetool checks it.
fn parse(args: &[String]) -> Result<f64, Failure> {
    let probability: f64 = one_value(args, "trace_probability", "Double")?;
    if !(0.0..=1.0).contains(&probability) {
        return Err(Failure::Usage(
            "Trace probability must be between 0 and 1".into(),
        ));
    }
    Ok(probability)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn arguments_are_checked_with_cassandras_messages() {
        // matches Cassandra 5.0.4 (`refcass nodetool settraceprobability 1.5|abc|`)
        assert_eq!(parse(&words(&["0.25"])), Ok(0.25));
        assert_eq!(
            parse(&words(&["1.5"])),
            Err(Failure::Usage(
                "Trace probability must be between 0 and 1".into()
            ))
        );
        assert_eq!(
            parse(&words(&["abc"])),
            Err(Failure::Usage(
                "trace_probability: can not convert \"abc\" to a Double".into()
            ))
        );
        assert_eq!(
            parse(&[]),
            Err(Failure::Usage(
                "Required parameters are missing: trace_probability".into()
            ))
        );
    }
}
