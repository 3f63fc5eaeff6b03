//! The built-in renderer: an [`InvoiceDocument`] on A4 pages, drawn in process with krilla.
//!
//! Rendering is two passes. [`layout`] places everything on pages (measuring text with the
//! embedded font, wrapping descriptions, splitting the table across pages) and numbers the
//! pages once their count is known; [`draw`] then writes the PDF.

mod draw;
mod facturx;
mod fallback;
mod font;
mod layout;
mod logo;
mod page;
mod qr;
mod shape;

pub use fallback::FONT_DIRS_VARIABLE;

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use billing::{InvoiceDocument, InvoiceRenderer, RenderError};
use unicode_script::UnicodeScript;

use font::Fonts;
use logo::Logo;

/// The PDF of `document`: a few milliseconds of CPU work.
///
/// Characters that no font on the machine has print as U+FFFD and are logged once per
/// invoice, by script, with the Debian package that provides a font for them.
pub fn render_pdf(document: &InvoiceDocument) -> anyhow::Result<Vec<u8>> {
    let fonts = Fonts::get()?;
    let logo = read_logo(document);
    let pages = layout::lay_out(document, fonts, logo.as_ref().map(Logo::size));
    report_missing(document, &pages);
    draw::draw(document, &pages, fonts, logo.as_ref())
}

/// Whether `bytes` is a logo the renderer can draw: a PNG, or an SVG that usvg reads. The
/// error says why not.
pub fn check_logo(bytes: &[u8]) -> Result<(), String> {
    Logo::read(bytes).map(|_| ())
}

/// The sender's logo, if the document has one that can be drawn. One that cannot (sent by
/// an older or foreign client of the renderer service) is left out, and logged.
fn read_logo(document: &InvoiceDocument) -> Option<Logo> {
    let bytes = document.logo.as_ref()?.decoded();
    let read = bytes.ok_or_else(|| "not base64".to_owned()).and_then(|bytes| Logo::read(&bytes));
    read.inspect_err(
        |error| tracing::warn!(invoice = %document.serial, %error, "the sender's logo is left out"),
    )
    .ok()
}

fn report_missing(document: &InvoiceDocument, pages: &[Vec<page::Op>]) {
    let missing: BTreeSet<char> = pages
        .iter()
        .flatten()
        .filter_map(|op| match op {
            page::Op::Text { line, .. } => Some(&line.missing),
            _ => None,
        })
        .flatten()
        .copied()
        .collect();
    if missing.is_empty() {
        return;
    }
    let mut by_script: BTreeMap<&'static str, String> = BTreeMap::new();
    for c in missing {
        by_script.entry(c.script().full_name()).or_default().push(c);
    }
    let scripts = by_script
        .iter()
        .map(|(script, chars)| format!("{script} {chars:?} (Debian package {})", font_package(script)))
        .collect::<Vec<_>>()
        .join(", ");
    tracing::warn!(
        invoice = %document.serial,
        %scripts,
        "no font has these characters: they print as placeholders; install the package, or put a \
         font that has them in a directory named by {FONT_DIRS_VARIABLE}"
    );
}

/// The Debian package with a Noto font for `script`.
fn font_package(script: &str) -> &'static str {
    match script {
        "Han" | "Hiragana" | "Katakana" | "Hangul" | "Bopomofo" => "fonts-noto-cjk",
        "Common" | "Inherited" | "Unknown" => "fonts-noto-core or fonts-noto-color-emoji",
        _ => "fonts-noto-core",
    }
}

/// How many pages [`render_pdf`] makes of `document`, without drawing them.
pub fn page_count(document: &InvoiceDocument) -> anyhow::Result<usize> {
    let logo = read_logo(document);
    Ok(layout::lay_out(document, Fonts::get()?, logo.as_ref().map(Logo::size)).len())
}

/// [`InvoiceRenderer`] in process, with [`render_pdf`].
///
/// A page takes well under a millisecond and a long invoice a few, so rendering runs on
/// the blocking pool only from `BLOCKING_FROM` lines on, and inline below that: moving a
/// small job to another thread would cost about as much as doing it.
#[derive(Debug, Default, Clone, Copy)]
pub struct BuiltinRenderer;

/// Documents with at least this many lines are rendered on tokio's blocking pool.
const BLOCKING_FROM: usize = 50;

#[async_trait]
impl InvoiceRenderer for BuiltinRenderer {
    async fn render(&self, document: &InvoiceDocument) -> Result<Vec<u8>, RenderError> {
        if document.lines.len() < BLOCKING_FROM {
            return render_pdf(document).map_err(RenderError);
        }
        let document = document.clone();
        tokio::task::spawn_blocking(move || render_pdf(&document))
            .await
            .map_err(|error| RenderError(anyhow::Error::new(error).context("the rendering task failed")))?
            .map_err(RenderError)
    }
}
