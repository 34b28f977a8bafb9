//! `repair [options] [keyspace [tables...]]`, printed as Cassandra 5.0.4's RepairRunner prints
//! the notifications: `[yyyy-MM-dd HH:mm:ss,SSS] message`, a finished session followed by its
//! progress, and on failure `error: Repair job has failed with the error message: ...`.

use admin::types::{RepairReport, RepairRequest};

use super::client::Client;
use super::compaction::log_date_time;
use super::{node_error, unexpected, Failure, Output};

/// The progress Cassandra 5.0.4 shows for a finished session: the coordinator's state while
/// sessions run (REPAIR_START, the fifth of its six states, plus one for completion: 4/7).
const SESSION_PROGRESS: u32 = 57;

pub fn run(client: &Client, args: &[String]) -> Output {
    let request = request(args)?;
    let report: RepairReport = client.post("/v1/repair", &request).map_err(node_error)?;
    let text = lines(&report);
    match report.error {
        None => Ok(text),
        Some(error) => {
            print!("{text}");
            Err(Failure::Node(format!(
                "Repair job has failed with the error message: {error}. Check the logs on the repair participants for further details"
            )))
        }
    }
}

/// Each notice as RepairRunner prints it.
fn lines(report: &RepairReport) -> String {
    let mut out = String::new();
    for notice in &report.notices {
        let time = log_date_time(i64::try_from(notice.time_ms).unwrap_or(i64::MAX));
        out.push_str(&format!("[{time}] {}", notice.message));
        if notice.kind == "progress" {
            out.push_str(&format!(" (progress: {SESSION_PROGRESS}%)"));
        }
        out.push('\n');
    }
    out
}

/// The request from nodetool's repair options and arguments.
fn request(args: &[String]) -> Result<RepairRequest, Failure> {
    let mut request = RepairRequest::default();
    let mut words = args.iter();
    let mut positional = Vec::new();
    while let Some(word) = words.next() {
        let mut value = || {
            words.next().cloned().ok_or_else(|| {
                Failure::Usage(format!("Required values for option '{word}' not provided"))
            })
        };
        match word.as_str() {
            "-full" | "--full" => request.full = true,
            "-pr" | "--partitioner-range" => request.primary_range = true,
            "-seq" | "--sequential" => request.sequential = true,
            "-local" | "--in-local-dc" => request.local_dc = true,
            "-prv" | "--preview" => request.preview = true,
            "-vd" | "--validate" => request.validate = true,
            "-st" | "--start-token" => request.start_token = Some(token(&value()?)?),
            "-et" | "--end-token" => request.end_token = Some(token(&value()?)?),
            "-dc" | "--in-dc" => request.data_centers.push(value()?),
            "-hosts" | "--in-hosts" => request.hosts.push(value()?),
            "-j" | "--job-threads" => {
                let text = value()?;
                let threads = text
                    .parse()
                    .map_err(|_| Failure::Usage(format!("Invalid value for option -j: {text}")))?;
                request.job_threads = Some(threads);
            }
            flag if flag.starts_with('-') => return Err(unexpected(std::slice::from_ref(word))),
            _ => positional.push(word.clone()),
        }
    }
    let mut positional = positional.into_iter();
    request.keyspace = positional.next();
    request.tables = positional.collect();
    Ok(request)
}

fn token(text: &str) -> Result<i64, Failure> {
    text.parse()
        .map_err(|_| Failure::Node(format!("Invalid token: {text}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::types::RepairNotice;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_and_arguments_make_the_request() {
        let r = request(&words(
            "-full -pr -st -5 -et 10 -dc dc1 -dc dc2 -seq -j 2 ks t1 t2",
        ))
        .unwrap();
        assert!(r.full && r.primary_range && r.sequential && !r.local_dc);
        assert_eq!((r.start_token, r.end_token), (Some(-5), Some(10)));
        assert_eq!(r.data_centers, vec!["dc1", "dc2"]);
        assert_eq!(r.job_threads, Some(2));
        assert_eq!(r.keyspace.as_deref(), Some("ks"));
        assert_eq!(r.tables, vec!["t1", "t2"]);
        let hosts = request(&words("--in-hosts 127.0.0.1 -hosts 127.0.0.2 -local")).unwrap();
        assert_eq!(hosts.hosts, vec!["127.0.0.1", "127.0.0.2"]);
        assert!(hosts.local_dc && hosts.keyspace.is_none());
        assert!(matches!(request(&words("-st")), Err(Failure::Usage(_))));
        let preview = request(&words("--preview -full ks")).unwrap();
        assert!(preview.preview && preview.full && !preview.validate);
        assert!(request(&words("-vd")).unwrap().validate);
        assert!(request(&words("-prv")).unwrap().preview);
        assert!(matches!(request(&words("-x ks")), Err(Failure::Usage(_))));
    }

    #[test]
    fn notices_print_with_their_time_and_sessions_with_progress() {
        let notice = |kind: &str, message: &str| RepairNotice {
            time_ms: 1_765_000_000_123,
            kind: kind.into(),
            message: message.into(),
        };
        let report = RepairReport {
            notices: vec![
                notice(
                    "start",
                    "Starting repair command #1 (x), repairing keyspace ks with o",
                ),
                notice("progress", "Repair session y for range [(1,2]] finished"),
                notice("success", "Repair completed successfully"),
            ],
            error: None,
            repairs: Vec::new(),
        };
        assert_eq!(
            lines(&report),
            "[2025-12-06 05:46:40,123] Starting repair command #1 (x), repairing keyspace ks with o\n\
             [2025-12-06 05:46:40,123] Repair session y for range [(1,2]] finished (progress: 57%)\n\
             [2025-12-06 05:46:40,123] Repair completed successfully\n"
        );
    }
}
