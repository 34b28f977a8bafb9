//! `proxyhistograms`: the coordinator's client-request latencies by percentile, in Cassandra
//! 5.0.4's `ProxyHistograms` layout; `replaybatchlog`.

use admin::types::{HistogramPercentiles, ProxyHistograms};

use super::client::Client;
use super::{no_args, node_error, Output};

pub fn run(client: &Client, args: &[String]) -> Output {
    no_args(args)?;
    let histograms: ProxyHistograms = client.get("/v1/proxyhistograms").map_err(node_error)?;
    Ok(render(&histograms))
}

/// `replaybatchlog`: replays the node's batchlog now and prints nothing, as Cassandra's.
pub fn replay_batchlog(client: &Client, args: &[String]) -> Output {
    no_args(args)?;
    let _: serde_json::Value = client
        .post("/v1/batchlog/replay", &serde_json::json!({}))
        .map_err(node_error)?;
    Ok(String::new())
}

/// `refreshsizeestimates`: records `system.size_estimates` now.
pub fn refresh_size_estimates(client: &Client, args: &[String]) -> Output {
    no_args(args)?;
    let _: serde_json::Value = client
        .post("/v1/size_estimates/refresh", &serde_json::json!({}))
        .map_err(node_error)?;
    Ok(String::new())
}

/// `%-10s%19s%19s%19s%19s%19s%19s` rows, values with two decimals, then a blank line.
pub fn render(h: &ProxyHistograms) -> String {
    let row = |cells: [&str; 7]| {
        let mut line = format!("{:<10}", cells[0]);
        for cell in &cells[1..] {
            line.push_str(&format!("{cell:>19}"));
        }
        line + "\n"
    };
    let mut out = String::from("proxy histograms\n");
    out.push_str(&row([
        "Percentile",
        "Read Latency",
        "Write Latency",
        "Range Latency",
        "CAS Read Latency",
        "CAS Write Latency",
        "View Write Latency",
    ]));
    out.push_str(&row([
        "", "(micros)", "(micros)", "(micros)", "(micros)", "(micros)", "(micros)",
    ]));
    let columns = [
        &h.read_latency_micros,
        &h.write_latency_micros,
        &h.range_latency_micros,
        &h.cas_read_latency_micros,
        &h.cas_write_latency_micros,
        &h.view_write_latency_micros,
    ];
    for (i, label) in ["50%", "75%", "95%", "98%", "99%", "Min", "Max"]
        .iter()
        .enumerate()
    {
        let cells: Vec<String> = columns
            .iter()
            .map(|p| format!("{:.2}", pick(p, i)))
            .collect();
        out.push_str(&row([
            label, &cells[0], &cells[1], &cells[2], &cells[3], &cells[4], &cells[5],
        ]));
    }
    out.push('\n');
    out
}

fn pick(p: &HistogramPercentiles, i: usize) -> f64 {
    [p.p50, p.p75, p.p95, p.p98, p.p99, p.min, p.max][i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxyhistograms_layout() {
        // the header and a row as Cassandra 5.0.4 prints them (`refcass nodetool proxyhistograms`)
        let mut h = ProxyHistograms::default();
        h.read_latency_micros.p50 = 642.0;
        h.range_latency_micros.max = 17084.0;
        let text = render(&h);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "proxy histograms");
        assert_eq!(lines[1], "Percentile       Read Latency      Write Latency      Range Latency   CAS Read Latency  CAS Write Latency View Write Latency");
        assert_eq!(lines[2], "                     (micros)           (micros)           (micros)           (micros)           (micros)           (micros)");
        assert_eq!(lines[3], "50%                    642.00               0.00               0.00               0.00               0.00               0.00");
        assert_eq!(lines[9], "Max                      0.00               0.00           17084.00               0.00               0.00               0.00");
        assert!(text.ends_with("\n\n"));
    }
}
