//! The documents a team issues to its clients (an invoice, a credit note; a quote next), by
//! reference, and the one way each becomes files: its PDF (plain, or a Factur-X PDF that
//! carries its e-invoice) and its e-invoice XML. The PDF link, the e-invoice endpoints and
//! every mail make their files here, so a document of any kind comes out the same way.

use std::sync::Arc;

use accounts::TeamId;
use chrono::{DateTime, Utc};
use kernel::StoreError;
use locale::Language;

use crate::credit::{CreditNote, CreditNoteId};
use crate::document::{InvoiceDocument, InvoiceRenderer, RenderError};
use crate::einvoice::{EInvoice, Format, Parties, Profile, Refusal, XmlWriter};
use crate::{BillingStore, Client, Invoice, InvoiceId, SenderAddress};

/// A document the team issued, by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentRef {
    Invoice(InvoiceId),
    CreditNote(CreditNoteId),
}

/// The kinds of documents, in the words the API and the logs use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentKind {
    Invoice,
    CreditNote,
}

kernel::words!(DocumentKind { Invoice => "invoice", CreditNote => "credit_note" });

impl DocumentRef {
    pub fn kind(self) -> DocumentKind {
        match self {
            Self::Invoice(_) => DocumentKind::Invoice,
            Self::CreditNote(_) => DocumentKind::CreditNote,
        }
    }
}

/// Who reads a document: anyone holding its unguessable id (the public PDF link), or one
/// team, to which another team's document does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    ByLink,
    Team(TeamId),
}

/// How a document's PDF is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PdfFormat {
    /// The document as printed.
    Plain,
    /// A Factur-X / ZUGFeRD PDF/A-3b that carries the document's e-invoice (EN 16931
    /// profile) as `factur-x.xml`.
    FacturX,
}

/// The files asked of a document: its PDF, and an e-invoice as an XML file of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Files {
    pub pdf: Option<PdfFormat>,
    pub xml: Option<Format>,
}

/// What a file made of a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaType {
    Pdf,
    Xml,
}

kernel::words!(MediaType { Pdf => "application/pdf", Xml => "application/xml" });

/// A file made of a document, named after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentFile {
    /// `INV-0001.pdf`, `CN-0001-xrechnung-ubl.xml`.
    pub name: String,
    pub media_type: MediaType,
    pub bytes: Vec<u8>,
}

/// Why a file of a document was not made.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The e-invoice its format needs lacks data the document does not have.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The renderer failed; the cause is for the log, not for the client.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The payment QR code asked for needs what the invoice lacks.
    #[error("the payment QR code cannot be made: {0:?}")]
    Qr(crate::payment_qr::QrRefusal),
}

/// A document as stored, with the invoice it belongs to and the parties it names: all its
/// files are made from this.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The invoice, or the invoice the credit note corrects.
    pub invoice: Invoice,
    pub credit_note: Option<CreditNote>,
    pub client: Client,
    pub sender: SenderAddress,
}

impl Issued {
    pub fn reference(&self) -> DocumentRef {
        match &self.credit_note {
            Some(note) => DocumentRef::CreditNote(note.id),
            None => DocumentRef::Invoice(self.invoice.id),
        }
    }

    /// The language its client reads it in: the client's own, or its sender's (the
    /// team's).
    pub fn language(&self) -> Language {
        self.client.details.language.unwrap_or(self.sender.details.language)
    }

    /// The payment QR code its PDF carries, as `qr` asks (the sender's choice when
    /// `None`); none on a credit note.
    pub fn payment_qr(
        &self,
        qr: Option<crate::payment_qr::QrChoice>,
    ) -> Result<Option<crate::document::DocumentQr>, FileError> {
        if self.credit_note.is_some() {
            return Ok(None);
        }
        let choice = qr.unwrap_or(self.sender.details.payment_qr);
        let code = match crate::payment_qr::chosen(choice, &self.invoice, &self.client, &self.sender) {
            Ok(code) => code,
            Err(refusal) if qr.is_some() => return Err(FileError::Qr(refusal)),
            // The team's standing choice prints what each invoice allows.
            Err(_) => None,
        };
        Ok(code.map(|code| {
            let slip = crate::payment_qr::SwissSlip::of(&code, &self.invoice, &self.client, &self.sender);
            crate::document::DocumentQr::of(self.language(), &code, slip.as_ref())
        }))
    }

    /// The client's page of an invoice, its status as of `now`, with the payment QR code the
    /// team chose; `None` for a credit note, which has no page.
    pub fn page(&self, now: DateTime<Utc>) -> Option<crate::document::InvoicePage> {
        if self.credit_note.is_some() {
            return None;
        }
        let mut document = self.printed(now);
        // The team's standing choice refuses nothing: what it cannot print, it leaves out.
        document.payment_qr = self.payment_qr(None).ok().flatten();
        Some(crate::document::InvoicePage::new(document, &self.invoice, &self.sender, now))
    }

    /// The document put into words for print, its status as of `now`.
    pub fn printed(&self, now: DateTime<Utc>) -> InvoiceDocument {
        let words = self.language();
        match &self.credit_note {
            Some(note) => InvoiceDocument::credit_note(words, note, &self.client, &self.sender),
            None => InvoiceDocument::new(words, &self.invoice, &self.client, &self.sender, now),
        }
    }

    /// The document as an e-invoice of `profile`, or what it lacks for one.
    pub fn e_invoice(&self, profile: Profile) -> Result<EInvoice, Refusal> {
        let parties = Parties { client: &self.client, sender: &self.sender };
        match &self.credit_note {
            Some(note) => EInvoice::of_credit_note(profile, note, &self.invoice, &parties),
            None => EInvoice::of_invoice(profile, &self.invoice, &parties),
        }
    }
}

/// The document `reference` as `reader` may see it; `None` when there is none to them.
pub async fn load(
    store: &dyn BillingStore,
    reference: DocumentRef,
    reader: Reader,
) -> Result<Option<Issued>, StoreError> {
    let (invoice, credit_note) = match reference {
        DocumentRef::Invoice(id) => {
            let invoice = match reader {
                Reader::ByLink => store.find_invoice(id).await?,
                Reader::Team(team) => store.get_invoice(team, id).await?,
            };
            let Some(invoice) = invoice else { return Ok(None) };
            (invoice, None)
        }
        DocumentRef::CreditNote(id) => {
            let note = match reader {
                Reader::ByLink => store.find_credit_note(id).await?,
                Reader::Team(team) => store.get_credit_note(team, id).await?,
            };
            let Some(note) = note else { return Ok(None) };
            let invoice = store.get_invoice(note.team_id, note.invoice_id).await?.ok_or_else(|| {
                StoreError::Unexpected(anyhow::anyhow!("credit note {} refers to a missing invoice", note.id))
            })?;
            (invoice, Some(note))
        }
    };
    let (team, id) = (invoice.team_id, invoice.id);
    let missing =
        |what: &str| StoreError::Unexpected(anyhow::anyhow!("invoice {id} refers to a missing {what}"));
    let client = store.get(team, invoice.client_id).await?.ok_or_else(|| missing("client"))?;
    let sender = store.get_sender(team, invoice.sender_id).await?.ok_or_else(|| missing("sender address"))?;
    Ok(Some(Issued { invoice, credit_note, client, sender }))
}

/// Makes the files of documents: the PDF through the renderer, the e-invoice through the
/// XML writer. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Printer {
    renderer: Arc<dyn InvoiceRenderer>,
    xml: Arc<dyn XmlWriter>,
    pages: Arc<dyn crate::document::PageRenderer>,
}

impl Printer {
    pub fn new(
        renderer: Arc<dyn InvoiceRenderer>,
        xml: Arc<dyn XmlWriter>,
        pages: Arc<dyn crate::document::PageRenderer>,
    ) -> Self {
        Self { renderer, xml, pages }
    }

    /// The client's page of `issued` as HTML, its status as of `now`, with a "Pay by card"
    /// button when its team `takes_cards`, and the notice of how the client `returned` from
    /// the card processor's page; `None` for a credit note.
    pub fn page(
        &self,
        issued: &Issued,
        now: DateTime<Utc>,
        takes_cards: bool,
        returned: Option<crate::document::CardReturn>,
    ) -> Option<String> {
        issued
            .page(now)
            .map(|page| self.pages.invoice_page(&page.with_cards(issued.invoice.id, takes_cards, returned)))
    }

    /// The client's page of `quote`, billed to `client` by `sender`, its status as of
    /// `now`; with `incomplete`, it asks again for what an acceptance lacked.
    pub fn quote_page(
        &self,
        quote: &crate::quote::Quote,
        parties: &Parties<'_>,
        now: DateTime<Utc>,
        incomplete: bool,
    ) -> String {
        let words = parties.client.details.language.unwrap_or(parties.sender.details.language);
        let document = InvoiceDocument::quote(words, quote, parties.client, parties.sender, now);
        let page = crate::document::QuotePage {
            incomplete,
            ..crate::document::QuotePage::new(document, quote, now)
        };
        self.pages.quote_page(&page)
    }

    /// The PDF of `quote`, in its client's language, its status as of `now`.
    pub async fn quote_pdf(
        &self,
        quote: &crate::quote::Quote,
        parties: &Parties<'_>,
        now: DateTime<Utc>,
    ) -> Result<DocumentFile, RenderError> {
        let words = parties.client.details.language.unwrap_or(parties.sender.details.language);
        let document = InvoiceDocument::quote(words, quote, parties.client, parties.sender, now);
        let bytes = self.renderer.render(&document).await?;
        let stem = quote
            .number
            .as_ref()
            .map_or_else(|| "quote".to_owned(), |n| crate::numbering::file_stem(n.as_str()));
        Ok(DocumentFile { name: format!("{stem}.pdf"), media_type: MediaType::Pdf, bytes })
    }

    /// The Content-Security-Policy pages are served with.
    pub fn page_policy(&self) -> String {
        self.pages.content_security_policy()
    }

    /// `issued`'s PDF in `format`, its status as of `now`, with the payment QR code `qr`
    /// asks for: the sender's choice when `None`, which prints what the invoice allows; an
    /// explicit choice the invoice lacks data for is refused.
    pub async fn pdf(
        &self,
        issued: &Issued,
        format: PdfFormat,
        qr: Option<crate::payment_qr::QrChoice>,
        now: DateTime<Utc>,
    ) -> Result<DocumentFile, FileError> {
        let mut document = issued.printed(now);
        document.payment_qr = issued.payment_qr(qr)?;
        if format == PdfFormat::FacturX {
            let e_invoice = issued.e_invoice(Format::FacturX.profile())?;
            document.facturx_xml = Some(self.xml.write(Format::FacturX, &e_invoice));
        }
        let serial = &document.serial;
        let bytes = self
            .renderer
            .render(&document)
            .await
            .map_err(|RenderError(error)| RenderError(error.context(format!("the PDF of {serial}"))))?;
        let name = format!("{}.pdf", crate::numbering::file_stem(&document.serial));
        Ok(DocumentFile { name, media_type: MediaType::Pdf, bytes })
    }

    /// `issued` as an e-invoice of `format`, as XML.
    pub fn xml(&self, issued: &Issued, format: Format) -> Result<DocumentFile, Refusal> {
        let e_invoice = issued.e_invoice(format.profile())?;
        Ok(DocumentFile {
            name: format!("{}-{}.xml", crate::numbering::file_stem(&e_invoice.number), format.as_str()),
            media_type: MediaType::Xml,
            bytes: self.xml.write(format, &e_invoice).into_bytes(),
        })
    }

    /// The `files` asked of `issued`: the PDF first, then the XML. The e-invoice is checked
    /// before anything is rendered, so a refusal costs no rendering.
    pub async fn files(
        &self,
        issued: &Issued,
        files: Files,
        now: DateTime<Utc>,
    ) -> Result<Vec<DocumentFile>, FileError> {
        let xml = files.xml.map(|format| self.xml(issued, format)).transpose()?;
        let pdf = match files.pdf {
            Some(format) => Some(self.pdf(issued, format, None, now).await?),
            None => None,
        };
        Ok(pdf.into_iter().chain(xml).collect())
    }
}
