//! `-graph file=report.html title= revision=` and `--png FILE`: the run's throughput and
//! latency percentiles over time as a self-contained HTML page (inline SVG, no network) and
//! as a PNG image. As cassandra-stress does, an existing page keeps its runs: this run is
//! added under its `revision=` (replacing an earlier run of the same revision), so one page
//! compares several runs. The runs are kept in the page as JSON for the next run to read.

mod canvas;
mod chart;
mod html;
mod raster;
mod svg;

use serde::{Deserialize, Serialize};

use crate::settings::Graph;
use crate::timeline::{Series, Timeline};

/// One run of the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub revision: String,
    pub title: String,
    pub command: String,
    pub series: Vec<Series>,
}

/// Writes the page and the image `g` asks for (nothing when it asks for neither).
pub fn write(g: &Graph, command: &str, timeline: Option<Timeline>) -> Result<(), String> {
    let Some(timeline) = timeline else {
        return Ok(());
    };
    let run = Run {
        revision: g.revision.clone(),
        title: g.title.clone().unwrap_or_else(|| "helenus stress".into()),
        command: command.to_string(),
        series: timeline.series,
    };
    if let Some(file) = &g.file {
        let mut runs = match std::fs::read_to_string(file) {
            Ok(text) => html::runs(&text)?,
            Err(_) => Vec::new(),
        };
        runs.retain(|r| r.revision != run.revision);
        runs.push(run.clone());
        std::fs::write(file, html::page(&runs)?)
            .map_err(|e| format!("Cannot write graph {file}: {e}"))?;
    }
    if let Some(file) = &g.png {
        raster::write_png(file, &[run])?;
    }
    Ok(())
}
