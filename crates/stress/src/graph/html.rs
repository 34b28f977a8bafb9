//! The HTML page: a heading per run (revision, title, command line), the charts as inline
//! SVG, and the runs as JSON in a `<script type="application/json">` block, which is where
//! the next run with another `revision=` reads them back from.

use super::chart;
use super::svg::{chart_svg, escape};
use super::Run;

const DATA_START: &str = r#"<script type="application/json" id="stress-runs">"#;
const DATA_END: &str = "</script>";

/// The runs stored in an existing page.
pub fn runs(page: &str) -> Result<Vec<Run>, String> {
    let start = page
        .find(DATA_START)
        .ok_or("the existing graph file was not written by helenus stress")?
        + DATA_START.len();
    let len = page[start..]
        .find(DATA_END)
        .ok_or("the existing graph file is truncated")?;
    serde_json::from_str(&page[start..start + len])
        .map_err(|e| format!("the existing graph file has unreadable runs: {e}"))
}

/// The whole page for `runs`.
pub fn page(runs: &[Run]) -> Result<String, String> {
    // `<\/` keeps a `</script>` inside a string from closing the block; JSON reads it as `</`.
    let data = serde_json::to_string(runs)
        .map_err(|e| e.to_string())?
        .replace("</", "<\\/");
    let title = runs.last().map_or("helenus stress", |r| r.title.as_str());
    let mut body = String::new();
    for r in runs {
        body.push_str(&format!(
            "<li><b>{}</b>: {} <code>{}</code></li>\n",
            escape(&r.revision),
            escape(&r.title),
            escape(&r.command)
        ));
    }
    let charts: Vec<String> = chart::charts(runs).iter().map(chart_svg).collect();
    Ok(format!(
        r#"<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:20px}} svg{{display:block;margin:10px 0}} code{{color:#555}}</style>
</head><body>
<h1>{title}</h1>
<ul>
{body}</ul>
{charts}
{DATA_START}{data}{DATA_END}
<script>
// Hovering a line shows its label: no libraries, no network.
document.querySelectorAll("svg polyline[stroke-width='2']").forEach(function (l) {{
  l.addEventListener("mouseenter", function () {{ l.setAttribute("stroke-width", "4"); }});
  l.addEventListener("mouseleave", function () {{ l.setAttribute("stroke-width", "2"); }});
}});
</script>
</body></html>
"#,
        title = escape(title),
        charts = charts.join("\n"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{Point, Series};

    fn run(revision: &str) -> Run {
        let p = |t: f64| Point {
            time: t,
            op_rate: 100.0 * t,
            row_rate: 100.0,
            mean: 1.0,
            median: 1.0,
            p95: 2.0,
            p99: 3.0,
            p999: 4.0,
            max: 5.0,
            errors: 0,
        };
        Run {
            revision: revision.into(),
            title: "t</script>".into(),
            command: "write n=1".into(),
            series: vec![Series {
                label: "4 threads".into(),
                points: vec![p(1.0), p(2.0)],
            }],
        }
    }

    #[test]
    fn pages_read_back_their_runs() {
        let runs = vec![run("a"), run("b")];
        let html = page(&runs).expect("page");
        assert_eq!(super::runs(&html).expect("runs"), runs);
        assert_eq!(html.matches("<svg").count(), 3);
        assert!(!html.contains("http://") || html.matches("http://").count() == 3);
        assert!(super::runs("<html></html>").is_err());
    }
}
