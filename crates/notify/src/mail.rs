//! E-mail: the messages billable sends about invoices (the invoice itself, reminders of it,
//! its credit notes) and quotes, what they say, and the port that queues, sends and logs
//! them.
//!
//! A message is written whole when it is queued: its recipients, its subject and body with
//! every placeholder filled in, its `Message-ID` and the bytes of its attachments. Each
//! attempt sends exactly that, so a retry is the same mail, which a mail server or a
//! recipient's client recognises by its `Message-ID`.

use std::fmt;

use accounts::TeamId;
use async_trait::async_trait;
use billing::credit::CreditNoteId;
use billing::money::round_to_minor;
use billing::quote::QuoteId;
use billing::{Invoice, InvoiceId};
use chrono::{DateTime, Utc};
use kernel::{Email, StoreError, Text, define_id, words};
use locale::{Language, Term};
use sha2::{Digest, Sha256};

use crate::jobs::{ClaimedJob, Finish};

define_id!(
    /// A message (one e-mail, however many times it is attempted).
    MessageId
);

/// What a message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    Invoice,
    Reminder,
    CreditNote,
    Quote,
}

words!(MessageKind { Invoice => "invoice", Reminder => "reminder", CreditNote => "credit_note", Quote => "quote" });

/// The document a message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Concerning {
    /// An invoice (the invoice itself, or a reminder of it).
    Invoice(InvoiceId),
    /// A credit note, and the invoice it corrects.
    CreditNote {
        invoice: InvoiceId,
        note: CreditNoteId,
    },
    Quote(QuoteId),
}

impl Concerning {
    /// The invoice: the one it is about, or the one its credit note corrects.
    pub fn invoice(self) -> Option<InvoiceId> {
        match self {
            Self::Invoice(invoice) | Self::CreditNote { invoice, .. } => Some(invoice),
            Self::Quote(_) => None,
        }
    }

    pub fn credit_note(self) -> Option<CreditNoteId> {
        match self {
            Self::CreditNote { note, .. } => Some(note),
            Self::Invoice(_) | Self::Quote(_) => None,
        }
    }

    pub fn quote(self) -> Option<QuoteId> {
        match self {
            Self::Quote(quote) => Some(quote),
            Self::Invoice(_) | Self::CreditNote { .. } => None,
        }
    }

    /// What a stored message's columns name: an invoice (with a credit note of it, or
    /// none) or a quote; `None` for any other mix.
    pub fn from_columns(
        invoice: Option<InvoiceId>,
        note: Option<CreditNoteId>,
        quote: Option<QuoteId>,
    ) -> Option<Self> {
        match (invoice, note, quote) {
            (Some(invoice), None, None) => Some(Self::Invoice(invoice)),
            (Some(invoice), Some(note), None) => Some(Self::CreditNote { invoice, note }),
            (None, None, Some(quote)) => Some(Self::Quote(quote)),
            _ => None,
        }
    }

    /// The thread of events it belongs to: its invoice's, or its quote's.
    pub fn thread(self) -> String {
        match self {
            Self::Invoice(invoice) | Self::CreditNote { invoice, .. } => format!("invoice:{invoice}"),
            Self::Quote(quote) => format!("quote:{quote}"),
        }
    }
}

/// Where a message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageStatus {
    /// Waiting for its (next) attempt.
    Queued,
    /// Being handed to the mail server now.
    Sending,
    /// The mail server took it.
    Sent,
    /// The mail server refused it for good, or every attempt failed.
    Failed,
}

words!(MessageStatus { Queued => "queued", Sending => "sending", Sent => "sent", Failed => "failed" });

/// A subject line: 1 to 255 characters, one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailSubject(Text<1, 255>);

impl MailSubject {
    pub fn parse(text: impl Into<String>) -> Result<Self, MailRule> {
        let text = text.into();
        if text.contains(['\r', '\n']) {
            return Err(MailRule::SubjectLines);
        }
        Text::parse(text).map(Self).map_err(|e| MailRule::Subject(e.to_string()))
    }

    /// `text` made a subject: its line breaks turned into spaces, what no text may hold
    /// dropped, cut to 255 characters; `None` when nothing is left.
    pub fn clipped(text: &str) -> Option<Self> {
        let one_line = text.replace(['\r', '\n'], " ");
        let one_line: String = kernel::xml_safe(&one_line).chars().take(255).collect();
        Self::parse(one_line.trim()).ok()
    }

    /// A subject as storage holds it, read back: see [`Text::from_stored`].
    pub fn from_stored(text: impl Into<String>) -> Result<Self, MailRule> {
        Self::parse(kernel::xml_safe(&text.into()).into_owned())
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

/// A plain-text body: 1 to 20,000 characters.
pub type MailBody = Text<1, 20_000>;

/// `text` cut to the longest body; `None` when it is empty.
pub fn clip_body(text: &str) -> Option<MailBody> {
    MailBody::parse(kernel::xml_safe(text).chars().take(20_000).collect::<String>()).ok()
}

/// Most addresses on one message, `to` and `cc` together.
pub const MAX_RECIPIENTS: usize = 20;

/// Why a message's fields were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailRule {
    #[error("must be one line")]
    SubjectLines,
    #[error("subject {0}")]
    Subject(String),
    #[error("body {0}")]
    Body(String),
    #[error("at least one recipient is needed")]
    NoRecipient,
    #[error("at most {MAX_RECIPIENTS} recipients in all")]
    TooManyRecipients,
    /// A template names a placeholder that does not exist.
    #[error("{placeholder} is not a placeholder")]
    UnknownPlaceholder { placeholder: String },
}

/// Who gets a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipients {
    to: Vec<Email>,
    cc: Vec<Email>,
}

impl Recipients {
    /// At least one `to`, at most [`MAX_RECIPIENTS`] in all; repeats (in any case) dropped.
    pub fn new(to: Vec<Email>, cc: Vec<Email>) -> Result<Self, MailRule> {
        if to.is_empty() {
            return Err(MailRule::NoRecipient);
        }
        if to.len() + cc.len() > MAX_RECIPIENTS {
            return Err(MailRule::TooManyRecipients);
        }
        let mut seen = std::collections::HashSet::new();
        let to: Vec<Email> = to.into_iter().filter(|e| seen.insert(e.normalized())).collect();
        let cc: Vec<Email> = cc.into_iter().filter(|e| seen.insert(e.normalized())).collect();
        Ok(Self { to, cc })
    }

    pub fn to(&self) -> &[Email] {
        &self.to
    }

    pub fn cc(&self) -> &[Email] {
        &self.cc
    }
}

/// A file attached to a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub filename: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

impl Attachment {
    pub fn info(&self) -> AttachmentInfo {
        AttachmentInfo {
            filename: self.filename.clone(),
            content_type: self.content_type.clone(),
            size: u64::try_from(self.bytes.len()).unwrap_or(u64::MAX),
            sha256: sha256_hex(&self.bytes),
        }
    }
}

/// What the message log shows of an attachment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentInfo {
    pub filename: String,
    pub content_type: String,
    pub size: u64,
    /// Lowercase hex SHA-256 of its bytes.
    pub sha256: String,
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().fold(String::with_capacity(64), |mut hex, byte| {
        use fmt::Write;
        let _ = write!(hex, "{byte:02x}");
        hex
    })
}

/// A message and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub id: MessageId,
    pub team_id: TeamId,
    pub about: Concerning,
    pub kind: MessageKind,
    pub recipients: Recipients,
    pub subject: MailSubject,
    pub body: MailBody,
    pub status: MessageStatus,
    /// Attempts started.
    pub attempts: u32,
    /// Why the last attempt failed: the mail server's reply when it gave one.
    pub last_error: Option<String>,
    /// The `Message-ID` header, without its angle brackets: the same on every attempt.
    pub message_id: String,
    pub attachments: Vec<AttachmentInfo>,
    /// For a reminder of the team's policy: its step (days after the due date).
    pub reminder_step: Option<i32>,
    pub queued_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
}

impl Message {
    /// A queued message of `kind` about `about`, with a `Message-ID` of its own on the
    /// domain of `from`.
    #[expect(clippy::too_many_arguments, reason = "a message's fields, each given once")]
    pub fn queued(
        team_id: TeamId,
        about: Concerning,
        kind: MessageKind,
        recipients: Recipients,
        subject: MailSubject,
        body: MailBody,
        attachments: &[Attachment],
        from: &Email,
        now: DateTime<Utc>,
    ) -> Self {
        use kernel::Id;
        let id = MessageId::generate();
        let domain = from.as_str().rsplit_once('@').map_or("billable.localhost", |(_, domain)| domain);
        Self {
            id,
            team_id,
            about,
            kind,
            recipients,
            subject,
            body,
            status: MessageStatus::Queued,
            attempts: 0,
            last_error: None,
            message_id: format!("{id}@{domain}"),
            attachments: attachments.iter().map(Attachment::info).collect(),
            reminder_step: None,
            queued_at: now,
            sent_at: None,
        }
    }
}

/// A message to queue, with its attachments' bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage {
    pub message: Message,
    pub attachments: Vec<Attachment>,
}

/// A message as a mailer sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMail {
    pub message: Message,
    pub attachments: Vec<Attachment>,
    /// Why a reminder is no longer to be sent (its invoice was paid or written off, or its
    /// client takes no reminders any more since it was queued); `None` for other messages.
    pub moot: Option<&'static str>,
}

/// Which messages to list, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageFilter {
    /// Only those about this invoice (itself, its reminders, its credit notes).
    pub invoice: Option<InvoiceId>,
    /// Only those about this quote.
    pub quote: Option<QuoteId>,
    pub status: Option<MessageStatus>,
    /// Only messages queued before this one (the next page).
    pub before: Option<MessageId>,
    pub limit: u32,
}

/// The public links a mail of an invoice carries: its document's PDF, and the invoice's
/// page for its client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentLinks {
    pub pdf: String,
    pub page: String,
}

/// What the placeholders of a template stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// `INV-0001` (or a credit note's `CN-0001`).
    pub serial: String,
    /// What is due, with its currency: `42.80 EUR`.
    pub amount_due: String,
    /// `2026-12-20`, or what the language says of no due date ("upon receipt").
    pub due_date: String,
    /// The client's name.
    pub client: String,
    /// The public link of the PDF.
    pub pdf_url: String,
    /// The invoice's payment reference, as printed (`RF97 INV0 042`).
    pub payment_reference: String,
    /// The public link of the invoice's page for its client.
    pub hosted_url: String,
}

impl Facts {
    /// The facts of `invoice` billed to `client`, its PDF at `pdf_url`, as `language` says
    /// them.
    pub fn of_invoice(language: Language, invoice: &Invoice, client: &str, links: DocumentLinks) -> Self {
        Self {
            serial: invoice.number.to_string(),
            amount_due: money(language, invoice.balance.due(), invoice.currency),
            due_date: invoice
                .due_date
                .map_or_else(|| language.term(Term::NoDueDate), |due| language.day(due.date_naive())),
            client: client.to_owned(),
            pdf_url: links.pdf,
            payment_reference: invoice.payment_reference.printed(),
            hosted_url: links.page,
        }
    }
}

/// `amount` at `currency`'s minor unit, as `language` writes money: `42.80 EUR`,
/// `1.234,56 €`.
pub fn money(language: Language, amount: rust_decimal::Decimal, currency: accounts::Currency) -> String {
    language.money(&round_to_minor(amount, currency).to_string(), currency.as_str())
}

/// What a template may say in braces: each stands for a fact of the message's document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placeholder {
    Serial,
    AmountDue,
    DueDate,
    Client,
    PdfUrl,
    PaymentReference,
    HostedUrl,
}

words!(Placeholder {
    Serial => "serial",
    AmountDue => "amountDue",
    DueDate => "dueDate",
    Client => "client",
    PdfUrl => "pdfUrl",
    PaymentReference => "paymentReference",
    HostedUrl => "hostedUrl",
});

impl Placeholder {
    /// How a template writes it: `{serial}`.
    pub fn written(self) -> String {
        format!("{{{}}}", self.as_str())
    }

    /// Every placeholder as a template writes it, listed for people: `{serial}, {amountDue}, …`.
    pub fn listed() -> String {
        let all: Vec<String> = <Self as kernel::Words>::ALL.iter().map(|p| p.written()).collect();
        all.join(", ")
    }

    fn fact(self, facts: &Facts) -> &str {
        match self {
            Self::Serial => &facts.serial,
            Self::AmountDue => &facts.amount_due,
            Self::DueDate => &facts.due_date,
            Self::Client => &facts.client,
            Self::PdfUrl => &facts.pdf_url,
            Self::PaymentReference => &facts.payment_reference,
            Self::HostedUrl => &facts.hosted_url,
        }
    }
}

/// A subject or body with placeholders, checked to name only [`Placeholder`]s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(String);

impl Template {
    /// Refuses a `{word}` that is not a placeholder; other braces are kept as they are.
    /// One pass over the text: only the `{` nearest before a `}` can open a placeholder,
    /// since a word holds no brace. Bound the text's length before, as [`MailSubject`] and
    /// [`MailBody`] do.
    pub fn parse(text: impl Into<String>) -> Result<Self, MailRule> {
        let text = text.into();
        let mut open = None;
        for (at, c) in text.char_indices() {
            match c {
                '{' => open = Some(at),
                '}' => {
                    if let Some(start) = open.take() {
                        let candidate = &text[start..=at];
                        let word = &candidate[1..candidate.len() - 1];
                        let looks_like_one =
                            !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric());
                        if looks_like_one && <Placeholder as kernel::Words>::from_word(word).is_none() {
                            return Err(MailRule::UnknownPlaceholder { placeholder: candidate.to_owned() });
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(Self(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text with each placeholder replaced by its fact.
    pub fn fill(&self, facts: &Facts) -> String {
        let mut out = String::with_capacity(self.0.len() + 64);
        let mut rest = self.0.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open..];
            let named = after[1..].split_once('}').map(|(word, _)| word);
            let fact = named
                .and_then(<Placeholder as kernel::Words>::from_word)
                .map(|placeholder| (placeholder.as_str().len() + 2, placeholder.fact(facts)));
            if let Some((length, value)) = fact {
                out.push_str(value);
                rest = &after[length..];
            } else {
                out.push('{');
                rest = &after[1..];
            }
        }
        out.push_str(rest);
        out
    }
}

impl MessageKind {
    /// What a message of this kind says unless told otherwise, in `language`, as templates.
    pub fn default_templates(self, language: Language) -> (Template, Template) {
        let (subject, body) = match self {
            Self::Invoice => (Term::MailInvoiceSubject, Term::MailInvoiceBody),
            Self::Reminder => (Term::MailReminderSubject, Term::MailReminderBody),
            Self::CreditNote => (Term::MailCreditNoteSubject, Term::MailCreditNoteBody),
            Self::Quote => (Term::MailQuoteSubject, Term::MailQuoteBody),
        };
        // The catalogue's `{ $serial }` becomes the template's `{serial}`.
        let written: Vec<(&str, String)> =
            <Placeholder as kernel::Words>::ALL.iter().map(|p| (p.as_str(), p.written())).collect();
        let values: Vec<(&str, &str)> = written.iter().map(|(name, text)| (*name, text.as_str())).collect();
        let subject = language.phrase(subject, &values);
        // A body ends with a line break, which a message file cannot end a value with.
        let body = format!("{}\n", language.phrase(body, &values));
        // Every placeholder the catalogue's wording names is one, as a test holds.
        (Template(subject), Template(body))
    }
}

/// Why a message could not be queued.
#[derive(Debug, thiserror::Error)]
pub enum QueueMessageError {
    /// Its invoice (or credit note, or quote) is not the team's.
    #[error("not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a message could not be queued again.
#[derive(Debug, thiserror::Error)]
pub enum RetryMessageError {
    #[error("not found")]
    NotFound,
    /// Only a failed message is tried again.
    #[error("the message is {0:?}, not failed")]
    NotFailed(MessageStatus),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The message log and its queue.
#[async_trait]
pub trait MessageStore: Send + Sync {
    /// Stores `message` (queued) with its attachments and the job that sends it, due at
    /// once, in one transaction. MUST refuse ([`QueueMessageError::NotFound`]) an invoice
    /// or credit note that is not the team's.
    async fn queue_message(&self, message: &NewMessage) -> Result<Message, QueueMessageError>;

    async fn get_message(&self, team: TeamId, id: MessageId) -> Result<Option<Message>, StoreError>;

    /// The team's messages `filter` shows, newest first.
    async fn list_messages(&self, team: TeamId, filter: &MessageFilter) -> Result<Vec<Message>, StoreError>;

    /// The message a mail job sends, with its attachments' bytes, and marks it sending
    /// (its attempts counted); `None` when it is gone.
    async fn start_sending(&self, job: &ClaimedJob) -> Result<Option<OutgoingMail>, StoreError>;

    /// Records how the attempt of `job` ended, on its job and its message, in one
    /// transaction: sent (raising `invoice.sent` or `invoice.reminder_sent`, and setting the
    /// invoice's `sent_at` the first time an invoice is sent, its reminders' count for a
    /// reminder), queued again, or failed for good (raising `message.failed`). `false`,
    /// and nothing written, when the attempt no longer holds the job.
    async fn finish_sending(
        &self,
        job: &ClaimedJob,
        finish: &Finish,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError>;

    /// Queues a failed message again, with a new job due at once; it keeps its
    /// `Message-ID` and attachments.
    async fn retry_message(
        &self,
        team: TeamId,
        id: MessageId,
        at: DateTime<Utc>,
    ) -> Result<Message, RetryMessageError>;

    /// Records that the team's invoice `invoice` reached its client another way than by
    /// billable's e-mail: its `sent_at` becomes `at`, `invoice.sent` is raised and its
    /// reminders are scheduled, in one transaction. An invoice sent already keeps its
    /// `sent_at` and raises nothing. MUST return `None` when the team has no such invoice.
    async fn mark_sent(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        at: DateTime<Utc>,
    ) -> Result<Option<Invoice>, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            serial: "INV-0007".into(),
            amount_due: "42.80 EUR".into(),
            due_date: "2026-12-20".into(),
            client: "Zoë".into(),
            pdf_url: "https://billable.example/v1/invoices/pdf?id=x".into(),
            payment_reference: "RF97 INV0 007".into(),
            hosted_url: "https://billable.example/invoices/x".into(),
        }
    }

    #[test]
    fn placeholders_are_filled_and_other_braces_kept() {
        let template =
            Template::parse("{serial}: {amountDue} by {dueDate} for {client} {pdfUrl} {} {a b} {").unwrap();
        assert_eq!(
            template.fill(&facts()),
            "INV-0007: 42.80 EUR by 2026-12-20 for Zoë https://billable.example/v1/invoices/pdf?id=x {} {a b} {"
        );
    }

    /// The rule as first written, one search per `{`: quadratic, kept as the oracle.
    fn unknown_placeholder(text: &str) -> Option<String> {
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let after = &rest[open..];
            let close = after.find('}')?;
            let candidate = &after[..=close];
            let word = &candidate[1..candidate.len() - 1];
            if !word.is_empty()
                && word.chars().all(|c| c.is_ascii_alphanumeric())
                && !["{serial}", "{amountDue}", "{dueDate}", "{client}", "{pdfUrl}"].contains(&candidate)
            {
                return Some(candidate.to_owned());
            }
            rest = &after[1..];
        }
        None
    }

    proptest::proptest! {
        #[test]
        fn the_one_pass_parse_refuses_what_the_rule_refuses(text in "[{}a-z ]{0,40}|(\\{serial\\}|\\{x\\}|[{} a]){0,12}") {
            let refused = Template::parse(text.as_str()).err().map(|rule| match rule {
                MailRule::UnknownPlaceholder { placeholder } => placeholder,
                other => other.to_string(),
            });
            proptest::prop_assert_eq!(refused, unknown_placeholder(&text));
        }
    }

    #[test]
    fn braces_without_end_take_one_pass() {
        // A million braces with one close at the end: each `{` searched to the end took
        // seconds; one pass takes a million steps.
        let text = format!("{}}}", "{".repeat(1_000_000));
        assert!(Template::parse(text).is_ok());
        let text = format!("{}{{nope}}", "{".repeat(1_000_000));
        assert_eq!(
            Template::parse(text).unwrap_err(),
            MailRule::UnknownPlaceholder { placeholder: "{nope}".into() }
        );
    }

    #[test]
    fn an_unknown_placeholder_is_named() {
        assert_eq!(
            Template::parse("Dear {customer}").unwrap_err(),
            MailRule::UnknownPlaceholder { placeholder: "{customer}".into() }
        );
    }

    #[test]
    fn every_default_wording_uses_known_placeholders_only() {
        for language in Language::ALL {
            for kind in [MessageKind::Invoice, MessageKind::Reminder, MessageKind::CreditNote] {
                let (subject, body) = kind.default_templates(language);
                assert_eq!(Template::parse(subject.as_str()).as_ref(), Ok(&subject));
                assert_eq!(Template::parse(body.as_str()).as_ref(), Ok(&body));
                assert!(!body.fill(&facts()).contains('{'), "{language:?} {kind:?}");
            }
        }
    }

    /// The English wording is the catalogue's, and says what it always said, with the
    /// payment reference to quote.
    #[test]
    fn the_english_wording_is_as_it_was_with_the_payment_reference() {
        let wording = |kind: MessageKind| {
            let (subject, body) = kind.default_templates(Language::English);
            (subject.as_str().to_owned(), body.as_str().to_owned())
        };
        assert_eq!(
            wording(MessageKind::Invoice),
            (
                "Invoice {serial}".to_owned(),
                "Hello {client},\n\nplease find invoice {serial} attached: {amountDue}, due \
                 {dueDate}.\n\nPayment reference: {paymentReference}\n\nYou can view and pay it at \
                 {hostedUrl}\n\nThank you!\n"
                    .to_owned()
            )
        );
        assert_eq!(
            wording(MessageKind::Reminder),
            (
                "Reminder: invoice {serial}, {amountDue} due".to_owned(),
                "Hello {client},\n\nthis is a friendly reminder that {amountDue} of invoice \
                 {serial} is still open (due {dueDate}).\n\nPayment reference: \
                 {paymentReference}\n\nYou can view and pay the invoice at \
                 {hostedUrl}\n\nIf you have paid already, please ignore this message. Thank you!\n"
                    .to_owned()
            )
        );
        assert_eq!(
            wording(MessageKind::CreditNote),
            (
                "Credit note {serial}".to_owned(),
                "Hello {client},\n\nplease find credit note {serial} attached. What remains due \
                 on the invoice it credits: {amountDue}.\n\nYou can also view it at {pdfUrl}\n"
                    .to_owned()
            )
        );
    }

    #[test]
    fn recipients_drop_repeats_and_need_someone() {
        let email = |text: &str| Email::parse(text).unwrap();
        let recipients = Recipients::new(
            vec![email("a@x.example"), email("A@x.example")],
            vec![email("a@x.example"), email("b@x.example")],
        )
        .unwrap();
        assert_eq!(recipients.to().len(), 1);
        assert_eq!(recipients.cc().len(), 1);
        assert_eq!(Recipients::new(vec![], vec![email("b@x.example")]), Err(MailRule::NoRecipient));
        let many: Vec<Email> = (0..21).map(|i| email(&format!("p{i}@x.example"))).collect();
        assert_eq!(Recipients::new(many, vec![]), Err(MailRule::TooManyRecipients));
    }

    #[test]
    fn subjects_are_one_line() {
        assert_eq!(MailSubject::parse("a\r\nBcc: x@y.example"), Err(MailRule::SubjectLines));
        assert!(MailSubject::parse("Rechnung für Zoë").is_ok());
        assert!(MailSubject::parse("").is_err());
    }
}
