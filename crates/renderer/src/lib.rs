//! Invoice PDFs, behind billing's [`billing::InvoiceRenderer`] port:
//!
//! - [`BuiltinRenderer`]: in process, the default (krilla, the embedded `DejaVu Sans` font);
//! - [`ProxyRenderer`]: forwards to a renderer service over HTTP;
//! - [`service`]: that service ([`serve`]), drawing with the built-in renderer, so the two
//!   can be deployed apart.
//!
//! See `docs/pdf.md`.

mod builtin;
mod proxy;
mod sample;
pub mod service;

pub use builtin::{BuiltinRenderer, FONT_DIRS_VARIABLE, check_logo, page_count, render_pdf};
pub use proxy::ProxyRenderer;
#[doc(hidden)]
pub use sample::{
    SCRIPT_SAMPLES, multilingual_document, sample_document, sample_epc_code, sample_swiss_bill,
};
pub use service::serve;
