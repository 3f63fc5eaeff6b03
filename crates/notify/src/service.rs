//! The use cases of sending: a document e-mailed with its files, a reminder sent by hand,
//! the policy's reminders worded, and the public links they carry; and webhook endpoints
//! subscribed, changed and rotated ([`create_endpoint`], [`update_endpoint`],
//! [`rotate_secret`]). The REST routes, the tools and the job pass (the invoices of
//! recurring invoices) all send through here.

mod endpoints;

pub use endpoints::{
    EndpointChanges, EndpointError, NewEndpoint, Reach, Resolve, create_endpoint, may_subscribe, reachable,
    rotate_secret, update_endpoint,
};

use accounts::TeamId;
use billing::einvoice::Parties;
use billing::issue::{self, DocumentFile, DocumentRef, FileError, Files, Issued, Printer, Reader};
use billing::quote::{Quote, QuoteId};
use billing::{BillingStore, InvoiceId, InvoiceStatus, RenderError};
use chrono::{DateTime, Utc};
use kernel::{Email, InvalidValue, StoreError};

use crate::mail::{
    Attachment, Concerning, Facts, MailBody, MailRule, MailSubject, Message, MessageKind, NewMessage,
    QueueMessageError, Recipients, Template, money,
};
use crate::reminders::{ComposeReminder, ReminderPolicy, ReminderStep, is_open, reminder_message};
use crate::store::NotifyStore;

/// The public links of documents, on the address clients reach the server at: what
/// `{pdfUrl}` and an invoice's `pdfUrl` say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links {
    /// `https://billing.example.com`, without a trailing slash; empty for links relative
    /// to the server.
    base: String,
}

impl Links {
    pub fn new(base: &str) -> Self {
        Self { base: base.trim_end_matches('/').to_owned() }
    }

    /// Links relative to the server, as the API's own answers carry them.
    pub fn relative() -> Self {
        Self { base: String::new() }
    }

    /// The public link of `document`'s PDF.
    pub fn pdf(&self, document: DocumentRef) -> String {
        match document {
            DocumentRef::Invoice(id) => format!("{}/v1/invoices/pdf?id={id}", self.base),
            DocumentRef::CreditNote(id) => format!("{}/v1/credit-notes/pdf?id={id}", self.base),
        }
    }

    /// `path` (from `/`) on where people reach this server.
    pub fn absolute(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The public link of `invoice`'s page for its client.
    pub fn page(&self, invoice: billing::InvoiceId) -> String {
        format!("{}/invoices/{invoice}", self.base)
    }

    /// The public links of a sent `quote`: its page, where the client accepts or declines
    /// it, and its PDF.
    pub fn quote(&self, quote: QuoteId) -> crate::mail::DocumentLinks {
        crate::mail::DocumentLinks {
            pdf: format!("{}/quotes/{quote}/pdf", self.base),
            page: format!("{}/quotes/{quote}", self.base),
        }
    }

    /// The links a mail of `document`, of `invoice`, carries.
    pub fn of(&self, document: DocumentRef, invoice: billing::InvoiceId) -> crate::mail::DocumentLinks {
        crate::mail::DocumentLinks { pdf: self.pdf(document), page: self.page(invoice) }
    }
}

/// What e-mailing needs: where documents and messages are, how files are made, who mail is
/// from, and the links it carries.
#[derive(Clone, Copy)]
pub struct Mail<'a> {
    pub billing: &'a dyn BillingStore,
    pub store: &'a dyn NotifyStore,
    pub printer: &'a Printer,
    pub from: &'a Email,
    pub links: &'a Links,
}

impl std::fmt::Debug for Mail<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mail").field("from", &self.from).field("links", &self.links).finish_non_exhaustive()
    }
}

/// Whom a message goes to and what it says, as a caller asked: what is left out takes the
/// default (the client's email; the kind's or the policy's wording).
#[derive(Debug, Clone, Default)]
pub struct Asked {
    pub to: Option<Vec<Email>>,
    pub cc: Vec<Email>,
    pub subject: Option<Template>,
    pub body: Option<Template>,
}

/// Which list of recipients broke the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecipientList {
    To,
    Cc,
}

/// Why a message was not queued.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// No such document in the team.
    #[error("not found")]
    NotFound,
    /// An e-invoice asked for lacks data the document does not have.
    #[error(transparent)]
    Refused(#[from] billing::einvoice::Refusal),
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The subject, its placeholders filled in, is no subject.
    #[error("subject: {0}")]
    Subject(MailRule),
    /// The body, its placeholders filled in, is no body.
    #[error("body: {0}")]
    Body(InvalidValue),
    #[error("recipients: {rule}")]
    Recipients { list: RecipientList, rule: MailRule },
    /// A reminder of an invoice with nothing due (paid, credited, written off).
    #[error("nothing is due on {number}")]
    NothingDue { number: billing::DocumentNumber, status: InvoiceStatus },
    /// A reminder to a client who takes none.
    #[error("the client takes no reminders")]
    ClientOptedOut,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<FileError> for SendError {
    fn from(error: FileError) -> Self {
        match error {
            FileError::Refused(refusal) => Self::Refused(refusal),
            FileError::Render(error) => Self::Render(error),
            // Mails carry the team's standing choice, which prints what each invoice allows
            // and refuses nothing; were it to, the PDF could not be made.
            FileError::Qr(refusal) => {
                Self::Render(billing::RenderError::saying(format!("the payment QR code: {refusal:?}")))
            }
        }
    }
}

impl MessageKind {
    /// The kind of message that sends `document` itself.
    pub fn sending(document: DocumentRef) -> Self {
        match document {
            DocumentRef::Invoice(_) => Self::Invoice,
            DocumentRef::CreditNote(_) => Self::CreditNote,
        }
    }
}

impl Facts {
    /// What the placeholders say of `issued`: a credit note's serial and link, and what its
    /// invoice still has due.
    pub fn of_document(issued: &Issued, links: &Links) -> Self {
        let invoice = &issued.invoice;
        let (language, client) = (issued.language(), issued.client.details.name.as_str());
        let facts = Self::of_invoice(language, invoice, client, links.of(issued.reference(), invoice.id));
        match &issued.credit_note {
            Some(note) => Self {
                serial: note.number.to_string(),
                amount_due: money(language, invoice.balance.due(), invoice.currency),
                ..facts
            },
            None => facts,
        }
    }
}

impl From<DocumentFile> for Attachment {
    fn from(file: DocumentFile) -> Self {
        Self { filename: file.name, content_type: file.media_type.as_str().to_owned(), bytes: file.bytes }
    }
}

/// The document a message is about, as its wording needs it: whose, which, and the
/// client's address it goes to unless asked otherwise.
#[derive(Debug, Clone, Copy)]
struct Addressed<'a> {
    team: TeamId,
    about: Concerning,
    client_email: &'a Email,
}

impl<'a> Addressed<'a> {
    fn issued(issued: &'a Issued) -> Self {
        let invoice = issued.invoice.id;
        let about = match &issued.credit_note {
            Some(note) => Concerning::CreditNote { invoice, note: note.id },
            None => Concerning::Invoice(invoice),
        };
        Self { team: issued.invoice.team_id, about, client_email: &issued.client.details.email }
    }
}

impl Asked {
    /// The message of `kind` about `to`, its wording filled with `facts` (the caller's,
    /// else `default`), from `from`, at `now`.
    #[expect(clippy::too_many_arguments, reason = "each part of a message, given once")]
    fn message(
        self,
        kind: MessageKind,
        to: Addressed<'_>,
        facts: &Facts,
        default: (&Template, &Template),
        attachments: &[Attachment],
        from: &Email,
        now: DateTime<Utc>,
    ) -> Result<Message, SendError> {
        let subject = self.subject.as_ref().unwrap_or(default.0).fill(facts);
        let subject = MailSubject::parse(subject).map_err(SendError::Subject)?;
        let body = self.body.as_ref().unwrap_or(default.1).fill(facts);
        let body = MailBody::parse(body).map_err(SendError::Body)?;
        let recipients = self.to.unwrap_or_else(|| vec![to.client_email.clone()]);
        // Too many in `to` alone, or no one there, is `to`'s fault; else `cc` made it too many.
        let list = if recipients.is_empty() || recipients.len() > crate::mail::MAX_RECIPIENTS {
            RecipientList::To
        } else {
            RecipientList::Cc
        };
        let recipients =
            Recipients::new(recipients, self.cc).map_err(|rule| SendError::Recipients { list, rule })?;
        Ok(Message::queued(to.team, to.about, kind, recipients, subject, body, attachments, from, now))
    }
}

/// E-mails the team's `document` with the `files` asked of it, worded as `asked` says or
/// by the kind's default: the message is stored whole with the job that sends it.
pub async fn send(
    mail: Mail<'_>,
    team: TeamId,
    document: DocumentRef,
    files: Files,
    asked: Asked,
    now: DateTime<Utc>,
) -> Result<Message, SendError> {
    let issued = issue::load(mail.billing, document, Reader::Team(team)).await?.ok_or(SendError::NotFound)?;
    let attachments: Vec<Attachment> =
        mail.printer.files(&issued, files, now).await?.into_iter().map(Attachment::from).collect();
    let kind = MessageKind::sending(document);
    let (subject, body) = kind.default_templates(issued.language());
    let facts = Facts::of_document(&issued, mail.links);
    let to = Addressed::issued(&issued);
    let message = asked.message(kind, to, &facts, (&subject, &body), &attachments, mail.from, now)?;
    queue(mail.store, message, attachments).await
}

/// The longest serial a document may have: what a quote's placeholders are checked with
/// before it is numbered.
const LONGEST_SERIAL: usize = 64;

/// A quote to e-mail: the quote as it is (a draft, or numbered already), its parties, and
/// the files and wording asked.
#[derive(Debug)]
pub struct QuoteMail<'a> {
    pub quote: &'a Quote,
    pub parties: Parties<'a>,
}

impl QuoteMail<'_> {
    /// What its placeholders say: its serial, its total as `{amountDue}`, its valid-until
    /// date as `{dueDate}`, its page and PDF.
    fn facts(&self, links: &Links, serial: String) -> Facts {
        let language = self.language();
        let quote = self.quote;
        let links = links.quote(quote.id);
        Facts {
            serial,
            amount_due: money(language, quote.totals.total, quote.currency),
            due_date: quote
                .valid_until
                .map_or_else(|| language.term(locale::Term::NoDueDate), |day| language.day(day.date_naive())),
            client: self.parties.client.details.name.as_str().to_owned(),
            pdf_url: links.pdf,
            payment_reference: String::new(),
            hosted_url: links.page,
        }
    }

    fn language(&self) -> locale::Language {
        self.parties.client.details.language.unwrap_or(self.parties.sender.details.language)
    }

    /// Refuses what `asked` would make of this quote before it is numbered: the message
    /// its longest serial would give. A draft is numbered only once its mail is sure to be
    /// queued, so a refused send leaves it a draft.
    pub fn check(&self, mail: Mail<'_>, asked: &Asked, now: DateTime<Utc>) -> Result<(), SendError> {
        let facts = self.facts(mail.links, "Q".repeat(LONGEST_SERIAL));
        let (subject, body) = MessageKind::Quote.default_templates(self.language());
        let to = self.addressed();
        asked
            .clone()
            .message(MessageKind::Quote, to, &facts, (&subject, &body), &[], mail.from, now)
            .map(drop)
    }

    fn addressed(&self) -> Addressed<'_> {
        Addressed {
            team: self.quote.team_id,
            about: Concerning::Quote(self.quote.id),
            client_email: &self.parties.client.details.email,
        }
    }

    /// E-mails the quote, numbered now, with its PDF (in its client's language) when
    /// `attach_pdf`, worded as `asked` says or by default.
    pub async fn send(
        self,
        mail: Mail<'_>,
        attach_pdf: bool,
        asked: Asked,
        now: DateTime<Utc>,
    ) -> Result<Message, SendError> {
        let Some(number) = &self.quote.number else {
            return Err(SendError::NotFound);
        };
        let attachments: Vec<Attachment> = if attach_pdf {
            vec![mail.printer.quote_pdf(self.quote, &self.parties, now).await?.into()]
        } else {
            Vec::new()
        };
        let facts = self.facts(mail.links, number.to_string());
        let (subject, body) = MessageKind::Quote.default_templates(self.language());
        let to = self.addressed();
        let message =
            asked.message(MessageKind::Quote, to, &facts, (&subject, &body), &attachments, mail.from, now)?;
        queue(mail.store, message, attachments).await
    }
}

/// Reminds the client of the team's `invoice` now, worded as `asked` says or as the team's
/// reminder policy does, beside the policy's own reminders.
pub async fn remind(
    mail: Mail<'_>,
    team: TeamId,
    invoice: InvoiceId,
    asked: Asked,
    now: DateTime<Utc>,
) -> Result<Message, SendError> {
    let document = DocumentRef::Invoice(invoice);
    let issued = issue::load(mail.billing, document, Reader::Team(team)).await?.ok_or(SendError::NotFound)?;
    let invoice = &issued.invoice;
    if !is_open(invoice.balance.due().is_zero(), invoice.status) {
        return Err(SendError::NothingDue { number: invoice.number.clone(), status: invoice.status });
    }
    if !issued.client.details.reminders_enabled {
        return Err(SendError::ClientOptedOut);
    }
    let policy = mail.store.reminder_policy(team).await?;
    let facts = Facts::of_document(&issued, mail.links);
    let message = asked.message(
        MessageKind::Reminder,
        Addressed::issued(&issued),
        &facts,
        (&policy.subject, &policy.body),
        &[],
        mail.from,
        now,
    )?;
    queue(mail.store, message, Vec::new()).await
}

/// Stores `message` with `attachments` and its job.
async fn queue(
    store: &dyn NotifyStore,
    message: Message,
    attachments: Vec<Attachment>,
) -> Result<Message, SendError> {
    for attachment in &message.attachments {
        tracing::info!(
            message = %message.id,
            file = %attachment.filename,
            size = attachment.size,
            sha256 = %attachment.sha256,
            "attachment queued"
        );
    }
    store.queue_message(&NewMessage { message, attachments }).await.map_err(|error| match error {
        QueueMessageError::NotFound => SendError::NotFound,
        QueueMessageError::Store(error) => SendError::Store(error),
    })
}

/// Words the reminders the team's policy sends, as the job pass queues them: the policy's
/// subject and body filled in, the invoice's public PDF link as `{pdfUrl}`.
#[derive(Debug, Clone)]
pub struct PolicyReminders {
    from: Email,
    links: Links,
}

impl PolicyReminders {
    pub fn new(from: Email, links: Links) -> Self {
        Self { from, links }
    }
}

impl ComposeReminder for PolicyReminders {
    fn compose(
        &self,
        policy: &ReminderPolicy,
        invoice: &billing::Invoice,
        client: &billing::Client,
        team_language: locale::Language,
        step: ReminderStep,
        now: DateTime<Utc>,
    ) -> Option<NewMessage> {
        let links = self.links.of(DocumentRef::Invoice(invoice.id), invoice.id);
        reminder_message(policy, invoice, client, team_language, Some(step), &self.from, links, now)
    }
}
