//! Charts as a PNG: drawn on an RGB pixel buffer (lines, rectangles, and text in the
//! public-domain 8x8 bitmap font of `font8x8`) and encoded with `png`.

use std::fs::File;
use std::io::BufWriter;

use font8x8::{UnicodeFonts, BASIC_FONTS};

use super::canvas::{Anchor, Canvas, Rgb};
use super::chart::{self, CHART_HEIGHT, WIDTH};
use super::Run;

struct Pixels {
    width: usize,
    height: usize,
    data: Vec<u8>,
}

impl Pixels {
    fn new(width: usize, height: usize) -> Pixels {
        Pixels {
            width,
            height,
            data: vec![255; width * height * 3],
        }
    }

    fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x < 0 || y < 0 || x as usize >= self.width || y as usize >= self.height {
            return;
        }
        let i = (y as usize * self.width + x as usize) * 3;
        self.data[i..i + 3].copy_from_slice(&[c.0, c.1, c.2]);
    }

    /// A line of the given width: a square pen stepped along the segment.
    fn segment(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64), c: Rgb, width: f64) {
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0) as i64;
        let pen = width.round().max(1.0) as i64;
        for s in 0..=steps {
            let t = s as f64 / steps as f64;
            let (x, y) = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
            for dx in 0..pen {
                for dy in 0..pen {
                    self.set(
                        x.round() as i64 + dx - pen / 2,
                        y.round() as i64 + dy - pen / 2,
                        c,
                    );
                }
            }
        }
    }
}

/// Glyph width in pixels at scale 1.
const GLYPH: f64 = 8.0;

impl Canvas for Pixels {
    fn polyline(&mut self, points: &[(f64, f64)], color: Rgb, width: f64) {
        for w in points.windows(2) {
            self.segment(w[0], w[1], color, width);
        }
    }

    fn text(&mut self, x: f64, y: f64, s: &str, color: Rgb, anchor: Anchor, scale: u32) {
        let scale = i64::from(scale.max(1));
        let width = s.chars().count() as f64 * GLYPH * scale as f64;
        let left = match anchor {
            Anchor::Start => x,
            Anchor::Middle => x - width / 2.0,
            Anchor::End => x - width,
        };
        let (left, top) = (
            left.round() as i64,
            (y - GLYPH * scale as f64).round() as i64,
        );
        for (i, ch) in s.chars().enumerate() {
            let glyph = BASIC_FONTS.get(ch).unwrap_or([0; 8]);
            let gx = left + i as i64 * 8 * scale;
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits >> col & 1 == 1 {
                        let (px, py) = (gx + col * scale, top + row as i64 * scale);
                        self.fill_rect(px as f64, py as f64, scale as f64, scale as f64, color);
                    }
                }
            }
        }
    }

    fn fill_rect(&mut self, x: f64, y: f64, w: f64, h: f64, color: Rgb) {
        let (x, y) = (x.round() as i64, y.round() as i64);
        for dy in 0..h.round() as i64 {
            for dx in 0..w.round() as i64 {
                self.set(x + dx, y + dy, color);
            }
        }
    }
}

/// Draws the charts of `runs` one under the other and writes them to `path` as a PNG.
pub fn write_png(path: &str, runs: &[Run]) -> Result<(), String> {
    let charts = chart::charts(runs);
    let mut pixels = Pixels::new(
        WIDTH as usize,
        (CHART_HEIGHT * charts.len() as f64) as usize,
    );
    for (i, c) in charts.iter().enumerate() {
        chart::draw(c, &mut pixels, i as f64 * CHART_HEIGHT);
    }
    let fail = |e: &dyn std::fmt::Display| format!("Cannot write PNG {path}: {e}");
    let file = File::create(path).map_err(|e| fail(&e))?;
    let mut encoder = png::Encoder::new(
        BufWriter::new(file),
        pixels.width as u32,
        pixels.height as u32,
    );
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| fail(&e))?;
    writer
        .write_image_data(&pixels.data)
        .map_err(|e| fail(&e))?;
    writer.finish().map_err(|e| fail(&e))
}
