//! Draws laid-out pages with krilla.

use billing::InvoiceDocument;
use krilla::color::rgb;
use krilla::configure::{Configuration, Validator};
use krilla::geom::{PathBuilder, Point, Rect, Transform};
use krilla::metadata::Metadata;
use krilla::num::NormalizedF32;
use krilla::page::PageSettings;
use krilla::paint::{Fill, Stroke};
use krilla::surface::Surface;
use krilla::{Document, SerializeSettings};

use super::font::Fonts;
use super::layout::{
    Op, PAGE_HEIGHT, PAGE_WIDTH, PAID_GREEN, Rgb, STAMP_ANGLE, STAMP_HEIGHT, STAMP_SIZE, STAMP_WIDTH,
};
use super::logo::Logo;
use super::shape::Shaped;

/// The PDF of `pages`, with `document`'s serial and sender in its metadata.
pub(super) fn draw(
    document: &InvoiceDocument,
    pages: &[Vec<Op>],
    fonts: &'static Fonts,
    logo: Option<&Logo>,
) -> anyhow::Result<Vec<u8>> {
    let facturx = document.facturx_xml.as_deref();
    let mut settings = SerializeSettings::default();
    if facturx.is_some() {
        settings.configuration = Configuration::new_with_validator(Validator::A3_B);
    }
    let mut pdf = Document::new_with(settings);
    let mut metadata = Metadata::new()
        .title(format!("{} {}", super::layout::document_title(document), document.serial))
        .authors(vec![document.sender.name.clone()])
        .creator("billable".to_owned());
    if let Some(xml) = facturx {
        // Dated by the document, not the clock, so the same invoice makes the same bytes.
        let issued = super::facturx::issue_date(&document.issue_date)?;
        metadata = metadata.creation_date(issued);
        pdf.embed_file(super::facturx::embedded(xml, issued))
            .ok_or_else(|| anyhow::anyhow!("factur-x.xml was embedded twice"))?;
    }
    pdf.set_metadata(metadata);
    let size = PageSettings::from_wh(PAGE_WIDTH, PAGE_HEIGHT)
        .ok_or_else(|| anyhow::anyhow!("A4 is a valid page size"))?;
    for ops in pages {
        let mut page = pdf.start_page_with(size.clone());
        let mut surface = page.surface();
        for op in ops {
            draw_op(&mut surface, op, fonts, logo);
        }
        surface.finish();
        page.finish();
    }
    let bytes = pdf.finish().map_err(|error| anyhow::anyhow!("krilla could not write the PDF: {error:?}"))?;
    match facturx {
        Some(_) => super::facturx::with_facturx_metadata(&bytes),
        None => Ok(bytes),
    }
}

fn color((r, g, b): Rgb) -> rgb::Color {
    rgb::Color::new(r, g, b)
}

fn draw_op(surface: &mut Surface<'_>, op: &Op, fonts: &'static Fonts, logo: Option<&Logo>) {
    match op {
        Op::Text { x, y, line, size, color: ink } => {
            surface.set_stroke(None);
            surface.set_fill(Some(Fill { paint: color(*ink).into(), ..Fill::default() }));
            text_at(surface, *x, *y, line, *size);
        }
        Op::Rule { y, from, to, width, color: ink } => {
            let mut path = PathBuilder::new();
            path.move_to(*from, *y);
            path.line_to(*to, *y);
            if let Some(path) = path.finish() {
                surface.set_fill(None);
                surface.set_stroke(Some(Stroke {
                    paint: color(*ink).into(),
                    width: *width,
                    ..Stroke::default()
                }));
                surface.draw_path(&path);
            }
        }
        Op::Rect { x, y, width, height, color: ink } => {
            let mut path = PathBuilder::new();
            if let Some(rect) = Rect::from_xywh(*x, *y, *width, *height) {
                path.push_rect(rect);
            }
            if let Some(path) = path.finish() {
                surface.set_stroke(None);
                surface.set_fill(Some(Fill { paint: color(*ink).into(), ..Fill::default() }));
                surface.draw_path(&path);
            }
        }
        Op::Stamp { x, y, text } => stamp(surface, fonts, *x, *y, text),
        Op::Logo { x, y, width, height } => {
            if let Some(logo) = logo {
                surface.push_transform(&Transform::from_translate(*x, *y));
                logo.draw(surface, *width, *height);
                surface.pop();
            }
        }
    }
}

/// A shaped line, run by run: each run's glyphs map back to ranges of the line's text, so
/// the PDF's text can be copied and searched in logical order.
fn text_at(surface: &mut Surface<'_>, x: f32, y: f32, line: &Shaped, size: f32) {
    for run in &line.runs {
        let start = Point::from_xy(x + run.offset * size, y);
        surface.draw_glyphs(start, &run.glyphs, run.face.font.clone(), &line.text, size, false);
    }
}

/// A green frame with `word` (PAID) in it, turned about its centre (`x`, `y`), slightly
/// see-through.
fn stamp(surface: &mut Surface<'_>, fonts: &'static Fonts, x: f32, y: f32, word: &str) {
    let opacity = NormalizedF32::new(0.85).unwrap_or(NormalizedF32::ONE);
    surface.push_transform(&Transform::from_rotate_at(STAMP_ANGLE, x, y));
    let mut frame = PathBuilder::new();
    if let Some(rect) =
        Rect::from_xywh(x - STAMP_WIDTH / 2.0, y - STAMP_HEIGHT / 2.0, STAMP_WIDTH, STAMP_HEIGHT)
    {
        frame.push_rect(rect);
    }
    if let Some(frame) = frame.finish() {
        surface.set_fill(None);
        surface.set_stroke(Some(Stroke {
            paint: color(PAID_GREEN).into(),
            width: 3.0,
            opacity,
            ..Stroke::default()
        }));
        surface.draw_path(&frame);
    }
    surface.set_stroke(None);
    surface.set_fill(Some(Fill { paint: color(PAID_GREEN).into(), opacity, ..Fill::default() }));
    let text = fonts.bold.shape(word);
    // DejaVu's capitals are 0.73 em high: centre them on the frame.
    text_at(surface, x - text.width(STAMP_SIZE) / 2.0, y + STAMP_SIZE * 0.73 / 2.0, &text, STAMP_SIZE);
    surface.pop();
}
