//! Chart layout: a throughput chart with one line per run, then per run a latency chart
//! with its percentiles (median, 95th, 99th, 99.9th, max), on axes with round ticks.

use super::canvas::{Anchor, Canvas, Rgb};
use super::Run;
use crate::timeline::Point;

pub const WIDTH: f64 = 960.0;
pub const CHART_HEIGHT: f64 = 320.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 220.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 40.0;

const PALETTE: [Rgb; 8] = [
    Rgb(31, 119, 180),
    Rgb(214, 39, 40),
    Rgb(44, 160, 44),
    Rgb(255, 127, 14),
    Rgb(148, 103, 189),
    Rgb(140, 86, 75),
    Rgb(227, 119, 194),
    Rgb(23, 190, 207),
];

/// One line of a chart.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// One chart: title, unit of the y axis, lines.
pub struct Chart {
    pub title: String,
    pub unit: &'static str,
    pub lines: Vec<Line>,
}

fn line(label: String, points: &[Point], f: fn(&Point) -> f64) -> Line {
    Line {
        label,
        points: points.iter().map(|p| (p.time, f(p))).collect(),
    }
}

/// The charts of `runs`.
pub fn charts(runs: &[Run]) -> Vec<Chart> {
    let mut throughput = Chart {
        title: "Throughput".into(),
        unit: "op/s",
        lines: Vec::new(),
    };
    let mut latency = Vec::new();
    for run in runs {
        for s in &run.series {
            let name = if run.series.len() > 1 {
                format!("{} ({})", run.revision, s.label)
            } else {
                run.revision.clone()
            };
            throughput
                .lines
                .push(line(name.clone(), &s.points, |p| p.op_rate));
            latency.push(Chart {
                title: format!("Latency percentiles: {name}"),
                unit: "ms",
                lines: vec![
                    line("median".into(), &s.points, |p| p.median),
                    line("95th".into(), &s.points, |p| p.p95),
                    line("99th".into(), &s.points, |p| p.p99),
                    line("99.9th".into(), &s.points, |p| p.p999),
                    line("max".into(), &s.points, |p| p.max),
                ],
            });
        }
    }
    let mut all = vec![throughput];
    all.extend(latency);
    all
}

/// A round step giving about five ticks up to `max`.
fn tick_step(max: f64) -> f64 {
    let raw = (max / 5.0).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    let n = raw / magnitude;
    let nice = if n <= 1.0 {
        1.0
    } else if n <= 2.0 {
        2.0
    } else if n <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

fn label(v: f64) -> String {
    if v >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// Draws `chart` with its top edge at `top`.
pub fn draw(chart: &Chart, c: &mut dyn Canvas, top: f64) {
    let points = chart.lines.iter().flat_map(|l| l.points.iter());
    let x_max = points.clone().map(|p| p.0).fold(1.0, f64::max);
    let y_max = points
        .map(|p| p.1)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let (x_step, y_step) = (tick_step(x_max), tick_step(y_max.max(1e-3)));
    let y_top = (y_max / y_step).ceil().max(1.0) * y_step;
    let (w, h) = (WIDTH - LEFT - RIGHT, CHART_HEIGHT - TOP - BOTTOM);
    let (x0, y0) = (LEFT, top + TOP + h);
    let px = |x: f64| x0 + x / x_max * w;
    let py = |y: f64| y0 - y.min(y_top) / y_top * h;
    c.text(
        WIDTH / 2.0,
        top + 20.0,
        &chart.title,
        Rgb::BLACK,
        Anchor::Middle,
        2,
    );
    let mut y = 0.0;
    while y <= y_top + y_step / 2.0 {
        c.polyline(&[(x0, py(y)), (x0 + w, py(y))], Rgb::GREY, 1.0);
        c.text(x0 - 6.0, py(y) + 4.0, &label(y), Rgb::DARK, Anchor::End, 1);
        y += y_step;
    }
    let mut x = 0.0;
    while x <= x_max + x_step / 2.0 {
        c.text(px(x), y0 + 16.0, &label(x), Rgb::DARK, Anchor::Middle, 1);
        x += x_step;
    }
    c.polyline(&[(x0, top + TOP), (x0, y0), (x0 + w, y0)], Rgb::BLACK, 1.0);
    c.text(
        x0 + w / 2.0,
        y0 + 32.0,
        "time (s)",
        Rgb::DARK,
        Anchor::Middle,
        1,
    );
    c.text(
        x0 - 6.0,
        top + TOP - 10.0,
        chart.unit,
        Rgb::DARK,
        Anchor::End,
        1,
    );
    for (i, l) in chart.lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = l.points.iter().map(|&(x, y)| (px(x), py(y))).collect();
        c.polyline(&pts, color, 2.0);
        // A mark per interval, so that a run of a single interval still shows.
        for &(x, y) in &pts {
            c.fill_rect(x - 2.0, y - 2.0, 4.0, 4.0, color);
        }
        let ly = top + TOP + 16.0 * i as f64;
        c.fill_rect(x0 + w + 14.0, ly, 14.0, 4.0, color);
        c.text(
            x0 + w + 34.0,
            ly + 6.0,
            &l.label,
            Rgb::BLACK,
            Anchor::Start,
            1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(1000.0), 200.0);
        assert_eq!(tick_step(7.0), 2.0);
        assert_eq!(tick_step(0.3), 0.1);
        assert_eq!(label(12345.0), "12345");
        assert_eq!(label(2.5), "2.5");
    }
}
