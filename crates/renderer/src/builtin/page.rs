//! The vocabulary of a laid-out page: positioned drawing operations, the pen that collects
//! them, and the page's size and colours. The invoice's layout ([`super::layout`]) and the
//! payment QR codes' ([`super::qr`]) both write with it; [`super::draw`] draws it.

use billing::document::DocumentQr;

use super::font::{Fonts, Weight, one_line};
use super::shape::{Shaped, TextLine, shape};

pub(super) const PAGE_WIDTH: f32 = 595.28;
pub(super) const PAGE_HEIGHT: f32 = 841.89;

pub(super) type Rgb = (u8, u8, u8);
pub(super) const INK: Rgb = (33, 37, 41);
pub(super) const MUTED: Rgb = (108, 117, 125);
pub(super) const HAIRLINE: Rgb = (222, 226, 230);
pub(super) const HEADER_FILL: Rgb = (241, 243, 245);
pub(super) const PAID_GREEN: Rgb = (25, 135, 84);

/// One drawing operation, already positioned.
#[derive(Debug, Clone)]
pub(super) enum Op {
    /// One shaped line of text with its left end at `x` and its baseline at `y`.
    Text { x: f32, y: f32, line: Shaped, size: f32, color: Rgb },
    /// A horizontal line.
    Rule { y: f32, from: f32, to: f32, width: f32, color: Rgb },
    /// A filled rectangle.
    Rect { x: f32, y: f32, width: f32, height: f32, color: Rgb },
    /// The PAID stamp, centred on (`x`, `y`).
    Stamp { x: f32, y: f32, text: String },
    /// The sender's logo, its top-left corner at (`x`, `y`).
    Logo { x: f32, y: f32, width: f32, height: f32 },
    /// A QR code `size` wide, its top-left corner at (`x`, `y`), with the Swiss cross at
    /// its centre when `cross`.
    Qr { x: f32, y: f32, size: f32, modules: Modules, cross: bool },
    /// A vertical line.
    VRule { x: f32, from: f32, to: f32, width: f32 },
    /// The corner marks of a box to write in.
    Corners { x: f32, y: f32, width: f32, height: f32 },
}

/// A QR code's modules, row by row from the top left, `true` for dark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Modules {
    pub(super) width: usize,
    pub(super) dark: Vec<bool>,
}

impl Modules {
    /// The symbol of `qr`'s payload at error correction level M (which both payment formats
    /// require); `None` when the bytes do not fit a QR code, or the payload is no base64.
    pub(super) fn of(qr: &DocumentQr) -> Option<Self> {
        let payload = qr.decoded()?;
        let code =
            fast_qr::QRBuilder::new(payload).ecl(fast_qr::ECL::M).mode(fast_qr::Mode::Byte).build().ok()?;
        let dark = code.data[..code.size * code.size].iter().map(|module| module.value()).collect();
        Some(Self { width: code.size, dark })
    }
}

/// Collects one page's operations.
pub(super) struct Pen {
    pub(super) fonts: &'static Fonts,
    pub(super) ops: Vec<Op>,
    /// The size the logo is drawn at, if there is one.
    pub(super) logo: Option<(f32, f32)>,
    /// Where the PAID stamp goes, once the first page's header has found it room.
    pub(super) stamp_at: Option<(f32, f32)>,
}

impl Pen {
    pub(super) fn new(fonts: &'static Fonts, logo: Option<(f32, f32)>) -> Self {
        Self { fonts, ops: Vec::new(), logo, stamp_at: None }
    }

    pub(super) fn shape(&self, text: &str, weight: Weight, rtl: Option<bool>) -> Shaped {
        shape(&one_line(text), self.fonts.face(weight), rtl)
    }

    pub(super) fn push(&mut self, x: f32, y: f32, line: Shaped, size: f32, color: Rgb) {
        if !line.text.trim().is_empty() {
            self.ops.push(Op::Text { x, y, line, size, color });
        }
    }

    /// Text starting at `x`, whatever its direction (labels, dates).
    pub(super) fn text(&mut self, x: f32, y: f32, text: &str, weight: Weight, size: f32, color: Rgb) {
        let line = self.shape(text, weight, None);
        self.push(x, y, line, size, color);
    }

    /// Text ending at `right`; returns where it starts.
    pub(super) fn right(
        &mut self,
        right: f32,
        y: f32,
        text: &str,
        weight: Weight,
        size: f32,
        color: Rgb,
    ) -> f32 {
        let line = self.shape(text, weight, None);
        let x = right - line.width(size);
        self.push(x, y, line, size, color);
        x
    }

    /// A line of a paragraph in a column `width` wide from `left`: at its left edge, or at
    /// its right edge when the paragraph runs right to left.
    #[expect(clippy::too_many_arguments, reason = "a position, a box and a style")]
    pub(super) fn line(
        &mut self,
        left: f32,
        width: f32,
        y: f32,
        line: &TextLine,
        weight: Weight,
        size: f32,
        color: Rgb,
    ) {
        let shaped = self.shape(&line.text, weight, Some(line.rtl));
        let x = if shaped.rtl { left + width - shaped.width(size) } else { left };
        self.push(x, y, shaped, size, color);
    }

    pub(super) fn rule(&mut self, y: f32, from: f32, to: f32, width: f32, color: Rgb) {
        self.ops.push(Op::Rule { y, from, to, width, color });
    }
}
