//! The built-in renderer: an [`InvoiceDocument`] on A4 pages, drawn in process with krilla.
//!
//! Rendering is two passes. [`layout`] places everything on pages (measuring text with the
//! embedded font, wrapping descriptions, splitting the table across pages) and numbers the
//! pages once their count is known; [`draw`] then writes the PDF.

mod draw;
mod font;
mod layout;

use async_trait::async_trait;
use billing::{InvoiceDocument, InvoiceRenderer, RenderError};

use font::Fonts;

/// The PDF of `document`: a few milliseconds of CPU work.
pub fn render_pdf(document: &InvoiceDocument) -> anyhow::Result<Vec<u8>> {
    let fonts = Fonts::get()?;
    let pages = layout::lay_out(document, fonts);
    draw::draw(document, &pages, fonts)
}

/// How many pages [`render_pdf`] makes of `document`, without drawing them.
pub fn page_count(document: &InvoiceDocument) -> anyhow::Result<usize> {
    Ok(layout::lay_out(document, Fonts::get()?).len())
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
