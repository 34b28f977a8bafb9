//! Charts as inline SVG elements.

use std::fmt::Write;

use super::canvas::{Anchor, Canvas, Rgb};
use super::chart::{self, Chart};

/// Escapes text for XML content and attributes.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[derive(Default)]
struct Svg {
    body: String,
}

impl Canvas for Svg {
    fn polyline(&mut self, points: &[(f64, f64)], color: Rgb, width: f64) {
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = writeln!(
            self.body,
            r#"<polyline fill="none" stroke="{}" stroke-width="{width}" points="{}"/>"#,
            color.hex(),
            pts.join(" ")
        );
    }

    fn text(&mut self, x: f64, y: f64, s: &str, color: Rgb, anchor: Anchor, scale: u32) {
        let anchor = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        };
        let _ = writeln!(
            self.body,
            r#"<text x="{x:.1}" y="{y:.1}" fill="{}" text-anchor="{anchor}" font-size="{}">{}</text>"#,
            color.hex(),
            6 + 5 * scale,
            escape(s)
        );
    }

    fn fill_rect(&mut self, x: f64, y: f64, w: f64, h: f64, color: Rgb) {
        let _ = writeln!(
            self.body,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="{}"/>"#,
            color.hex()
        );
    }
}

/// One `<svg>` element for `chart`.
pub fn chart_svg(c: &Chart) -> String {
    let mut svg = Svg::default();
    chart::draw(c, &mut svg, 0.0);
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">
{}</svg>"#,
        svg.body,
        w = chart::WIDTH,
        h = chart::CHART_HEIGHT
    )
}
