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
use super::layout::{STAMP_ANGLE, STAMP_HEIGHT, STAMP_SIZE, STAMP_WIDTH};
use super::logo::Logo;
use super::page::{Modules, Op, PAGE_HEIGHT, PAGE_WIDTH, PAID_GREEN, Rgb};
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
        Op::Qr { x, y, size, modules, cross } => qr(surface, *x, *y, *size, modules, *cross),
        Op::VRule { x, from, to, width } => {
            let mut path = PathBuilder::new();
            path.move_to(*x, *from);
            path.line_to(*x, *to);
            stroke(surface, path, *width);
        }
        Op::Corners { x, y, width, height } => corners(surface, *x, *y, *width, *height),
        Op::Logo { x, y, width, height } => {
            if let Some(logo) = logo {
                surface.push_transform(&Transform::from_translate(*x, *y));
                logo.draw(surface, *width, *height);
                surface.pop();
            }
        }
    }
}

/// `path` stroked in black, `width` thick.
fn stroke(surface: &mut Surface<'_>, path: PathBuilder, width: f32) {
    if let Some(path) = path.finish() {
        surface.set_fill(None);
        surface.set_stroke(Some(Stroke { paint: color((0, 0, 0)).into(), width, ..Stroke::default() }));
        surface.draw_path(&path);
    }
}

/// Rectangles filled with `ink`.
fn fill_rects(surface: &mut Surface<'_>, rects: impl IntoIterator<Item = (f32, f32, f32, f32)>, ink: Rgb) {
    let mut path = PathBuilder::new();
    for (x, y, width, height) in rects {
        if let Some(rect) = Rect::from_xywh(x, y, width, height) {
            path.push_rect(rect);
        }
    }
    if let Some(path) = path.finish() {
        surface.set_stroke(None);
        surface.set_fill(Some(Fill { paint: color(ink).into(), ..Fill::default() }));
        surface.draw_path(&path);
    }
}

/// A QR code's dark modules, each row's runs as one rectangle (so no hairline shows
/// between neighbours), and the Swiss cross on a white ground at its centre: a 7 mm square
/// as SIX draws it (a black square with a white cross, in a white border).
fn qr(surface: &mut Surface<'_>, x: f32, y: f32, size: f32, modules: &Modules, cross: bool) {
    let width = modules.width.max(1);
    let module = size / f32::from(u16::try_from(width).unwrap_or(u16::MAX));
    let at = |n: usize| f32::from(u16::try_from(n).unwrap_or(u16::MAX)) * module;
    let mut runs = Vec::new();
    for (row, line) in modules.dark.chunks(width).enumerate() {
        let mut column = 0;
        while column < line.len() {
            if line[column] {
                let start = column;
                while column < line.len() && line[column] {
                    column += 1;
                }
                runs.push((x + at(start), y + at(row), at(column - start), module));
            } else {
                column += 1;
            }
        }
    }
    fill_rects(surface, runs, (0, 0, 0));
    if cross {
        // SIX's cross in a 20-unit square: the black square from 0.7 to 19.1, the white
        // bars 3.3 wide and 11 long.
        let unit = 7.0 * super::qr::MM / 20.0;
        let (left, top) = (x + size / 2.0 - 10.0 * unit, y + size / 2.0 - 10.0 * unit);
        let box_at =
            |bx: f32, by: f32, bw: f32, bh: f32| (left + bx * unit, top + by * unit, bw * unit, bh * unit);
        fill_rects(surface, [box_at(0.0, 0.0, 20.0, 20.0)], (255, 255, 255));
        fill_rects(surface, [box_at(0.7, 0.7, 18.4, 18.4)], (0, 0, 0));
        fill_rects(surface, [box_at(8.3, 4.0, 3.3, 11.0), box_at(4.0, 8.3, 11.0, 3.3)], (255, 255, 255));
    }
}

/// The corner marks of a box (SIX: 3 mm long, 0.75 pt).
fn corners(surface: &mut Surface<'_>, x: f32, y: f32, width: f32, height: f32) {
    let arm = 3.0 * super::qr::MM;
    let mut path = PathBuilder::new();
    for (cx, cy, dx, dy) in [
        (x, y, 1.0, 1.0),
        (x + width, y, -1.0, 1.0),
        (x, y + height, 1.0, -1.0),
        (x + width, y + height, -1.0, -1.0),
    ] {
        path.move_to(cx + dx * arm, cy);
        path.line_to(cx, cy);
        path.line_to(cx, cy + dy * arm);
    }
    stroke(surface, path, 0.75);
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
