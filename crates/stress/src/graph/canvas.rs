//! What a chart draws with: lines, text and rectangles in pixel coordinates, implemented
//! by the SVG writer and by the PNG rasteriser so that both show the same picture.

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    pub const BLACK: Rgb = Rgb(0, 0, 0);
    pub const GREY: Rgb = Rgb(200, 200, 200);
    pub const DARK: Rgb = Rgb(90, 90, 90);

    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// Where text sits relative to its point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

pub trait Canvas {
    fn polyline(&mut self, points: &[(f64, f64)], color: Rgb, width: f64);
    /// `scale` 1 is small print (8 px), 2 a heading.
    fn text(&mut self, x: f64, y: f64, s: &str, color: Rgb, anchor: Anchor, scale: u32);
    fn fill_rect(&mut self, x: f64, y: f64, w: f64, h: f64, color: Rgb);
}
