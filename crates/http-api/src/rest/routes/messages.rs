//! E-mail: `POST /v1/invoices/{id}/send` and `/remind`, `POST /v1/credit-notes/{id}/send`,
//! `POST /v1/quotes/{id}/send`, the message log (`/v1/invoices/{id}/messages`, `/v1/messages`) and retries.
//!
//! A send answers 202 at once: the message is stored whole (its PDF rendered now) with the
//! job that sends it, and a job pass hands it to the SMTP server.

use accounts::{Principal, TeamId};
use actix_web::{HttpResponse, get, post, web};
use billing::InvoiceId;
use billing::credit::CreditNoteId;
use billing::einvoice::Format;
use billing::einvoice::Parties;
use billing::issue::{DocumentKind, DocumentRef, Files, PdfFormat};
use billing::quote::QuoteId;
use billing::quoting;
use kernel::{Email, FieldError, Id, Words};
use locale::Language;
use notify::mail::{MailRule, Placeholder, RetryMessageError, Template};
use notify::service::{self, Asked, Mail, QuoteMail, RecipientList, SendError};
use notify::{MailSubject, Message, MessageFilter, MessageId, MessageKind, MessageStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::OptionalJson;
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, InvoicesRead, InvoicesWrite, QuotesWrite};
use crate::rest::openapi::{MessageKind as MessageKindSchema, MessageStatus as MessageStatusSchema};
use crate::rest::paging::{self, Page};
use crate::rest::routes::invoices::InvoiceBody;
use crate::rest::routes::refusals::{einvoice_refusal, noun, render_failed};
use crate::rest::routes::{
    BodyErrors, KeyedErrors, NotFound, QueryErrors, Timestamp, not_found, path_id, query_id,
};
use crate::rest::state::ApiState;

/// A file attached to a message.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AttachmentBody {
    #[schema(example = "INV-0001.pdf")]
    filename: String,
    #[schema(example = "application/pdf")]
    content_type: String,
    /// Bytes.
    size: u64,
    /// Lowercase hex SHA-256 of the bytes sent.
    sha256: String,
}

/// An e-mail message about an invoice (the invoice itself, a reminder of it), a credit
/// note or a quote, and where it stands.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageBody {
    id: Uuid,
    /// The invoice it is about (a credit note's invoice, for a credit note); `null` for a
    /// quote's.
    #[schema(required = true)]
    invoice_id: Option<Uuid>,
    #[schema(required = true)]
    credit_note_id: Option<Uuid>,
    /// The quote it sends; `null` for an invoice's or a credit note's.
    #[schema(required = true)]
    quote_id: Option<Uuid>,
    #[schema(value_type = MessageKindSchema)]
    kind: &'static str,
    to: Vec<String>,
    cc: Vec<String>,
    subject: String,
    /// Plain text, its placeholders filled in.
    body: String,
    #[schema(value_type = MessageStatusSchema)]
    status: &'static str,
    /// Attempts to hand it to the SMTP server so far.
    attempts: u32,
    /// Why the last attempt failed: the SMTP server's reply when it gave one.
    #[schema(required = true)]
    last_error: Option<String>,
    /// Its `Message-ID` header (without angle brackets): the same on every attempt.
    message_id: String,
    attachments: Vec<AttachmentBody>,
    /// For a reminder the team's policy sent: its step, in days after the due date.
    #[schema(required = true)]
    reminder_step: Option<i32>,
    queued_at: Timestamp,
    #[schema(required = true)]
    sent_at: Option<Timestamp>,
}

impl From<Message> for MessageBody {
    fn from(message: Message) -> Self {
        let addresses = |list: &[Email]| list.iter().map(|e| e.as_str().to_owned()).collect();
        Self {
            id: message.id.as_uuid(),
            invoice_id: message.about.invoice().map(|id| id.as_uuid()),
            credit_note_id: message.about.credit_note().map(|id| id.as_uuid()),
            quote_id: message.about.quote().map(|id| id.as_uuid()),
            kind: message.kind.as_str(),
            to: addresses(message.recipients.to()),
            cc: addresses(message.recipients.cc()),
            subject: message.subject.as_str().to_owned(),
            body: message.body.into_string(),
            status: message.status.as_str(),
            attempts: message.attempts,
            last_error: message.last_error,
            message_id: message.message_id,
            attachments: message
                .attachments
                .into_iter()
                .map(|a| AttachmentBody {
                    filename: a.filename,
                    content_type: a.content_type,
                    size: a.size,
                    sha256: a.sha256,
                })
                .collect(),
            reminder_step: message.reminder_step,
            queued_at: Timestamp(message.queued_at),
            sent_at: message.sent_at.map(Timestamp),
        }
    }
}

/// An invoice (or credit note) to e-mail. Every field may be left out: the mail goes to
/// the client's email with the default wording and the PDF attached. `subject` and
/// `body` may use the placeholders `{serial}`, `{amountDue}`, `{dueDate}`, `{client}`
/// and `{pdfUrl}`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"to": ["billing@acme.example"], "cc": ["accounts@acme.example"],
    "subject": "Rechnung {serial} – {amountDue}", "attachPdf": true}))]
pub(crate) struct SendInput {
    /// 1 to 20 addresses, `to` and `cc` together. Default: the client's email.
    #[serde(default)]
    #[schema(min_items = 1, max_items = 20, value_type = Option<Vec<String>>)]
    to: Option<Vec<String>>,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Option<Vec<String>>)]
    cc: Option<Vec<String>>,
    /// One line, at most 255 characters once filled in.
    #[serde(default)]
    #[schema(pattern = r"^[^\u0000-\u0008\u000A-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 255)]
    subject: Option<String>,
    /// Plain text, at most 20,000 characters once filled in.
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 20000
    )]
    body: Option<String>,
    /// Attach the PDF, as `GET /v1/invoices/pdf` serves it now. Default `true`.
    #[serde(default)]
    #[schema(default = true)]
    attach_pdf: Option<bool>,
    /// Send an e-invoice too: `facturx` makes the attached PDF a Factur-X PDF;
    /// `xrechnung-ubl` or `xrechnung-cii` attach the XRechnung XML
    /// (`INV-0001-xrechnung-ubl.xml`) beside the PDF, or alone with `attachPdf: false`.
    /// Refused as `GET /v1/invoices/{id}/e-invoice` refuses (422) when data is missing.
    #[serde(default)]
    #[schema(value_type = Option<crate::rest::openapi::EInvoiceFormat>, example = "xrechnung-ubl")]
    e_invoice: Option<String>,
}

/// The files a mail carries, as `attachPdf` and `eInvoice` ask: the PDF (a Factur-X PDF
/// for `facturx`), and an XRechnung's XML beside it.
fn files(attach_pdf: Option<bool>, e_invoice: Option<&str>) -> Result<Files, FieldError> {
    let pdf = attach_pdf.unwrap_or(true);
    let format = e_invoice.map(|name| Format::parse_word(name).map_err(|e| e.at("eInvoice"))).transpose()?;
    let in_pdf = format.filter(|format| format.travels_in_pdf());
    if let Some(format) = in_pdf
        && !pdf
    {
        return Err(FieldError::new(
            "eInvoice",
            format!("{} is carried by the PDF: leave attachPdf true", format.as_str()),
        ));
    }
    Ok(Files {
        pdf: pdf.then_some(if in_pdf.is_some() { PdfFormat::FacturX } else { PdfFormat::Plain }),
        xml: format.filter(|format| !format.travels_in_pdf()),
    })
}

/// A reminder to send now, beside the policy's. Every field may be left out: the mail goes
/// to the client's email, worded as the team's reminder policy says.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"subject": "Second reminder: {serial}, {amountDue} open"}))]
pub(crate) struct RemindInput {
    /// Default: the client's email.
    #[serde(default)]
    #[schema(min_items = 1, max_items = 20, value_type = Option<Vec<String>>)]
    to: Option<Vec<String>>,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Option<Vec<String>>)]
    cc: Option<Vec<String>>,
    /// Default: the policy's subject.
    #[serde(default)]
    #[schema(pattern = r"^[^\u0000-\u0008\u000A-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 255)]
    subject: Option<String>,
    /// Default: the policy's body.
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 20000
    )]
    body: Option<String>,
}

/// A subject as the caller gave it, bounded and one line before its placeholders are read,
/// or the error naming `subject`.
fn subject_template(text: String) -> Result<Template, FieldError> {
    MailSubject::parse(text.as_str()).map_err(|rule| match rule {
        MailRule::Subject(reason) => FieldError::new("subject", reason),
        other => FieldError::new("subject", other.to_string()),
    })?;
    template(text, "subject")
}

/// A body as the caller gave it, bounded before its placeholders are read, or the error
/// naming `body`.
fn body_template(text: String) -> Result<Template, FieldError> {
    notify::MailBody::parse(text.as_str()).map_err(|e| e.at("body"))?;
    template(text, "body")
}

/// A template of bounded length as the caller gave it, or the error naming its field.
fn template(text: String, field: &str) -> Result<Template, FieldError> {
    Template::parse(text).map_err(|rule| match rule {
        MailRule::UnknownPlaceholder { placeholder } => FieldError::new(
            field,
            format!("{placeholder} is not a placeholder; use {}", Placeholder::listed()),
        ),
        other => FieldError::new(field, other.to_string()),
    })
}

fn addresses(list: Option<Vec<String>>, field: &str) -> Result<Option<Vec<Email>>, FieldError> {
    list.map(|list| {
        list.into_iter()
            .enumerate()
            .map(|(i, text)| Email::parse(text).map_err(|e| e.at(format!("{field}[{i}]"))))
            .collect()
    })
    .transpose()
}

/// The recipients and wording a caller asked for, parsed.
fn asked(
    to: Option<Vec<String>>,
    cc: Option<Vec<String>>,
    subject: Option<String>,
    body: Option<String>,
) -> Result<Asked, FieldError> {
    let to = addresses(to, "to")?;
    if to.as_ref().is_some_and(Vec::is_empty) {
        return Err(FieldError::new("to", "must name at least one address, or be left out"));
    }
    Ok(Asked {
        to,
        cc: addresses(cc, "cc")?.unwrap_or_default(),
        subject: subject.map(subject_template).transpose()?,
        body: body.map(body_template).transpose()?,
    })
}

/// What e-mailing needs of the server, or the 409 that sending is not configured.
fn mail(state: &ApiState) -> Result<Mail<'_>, ApiError> {
    let sending = &state.settings.sending;
    let from = sending.mail_from.as_ref().ok_or_else(|| {
        ApiError::conflict(
            "e-mail is not configured on this server: set BILLABLE_SMTP_URL and BILLABLE_MAIL_FROM, then send again",
        )
    })?;
    Ok(Mail {
        billing: &*state.stores.billing,
        store: &*state.stores.notify,
        printer: &state.printer,
        from,
        links: &sending.links,
    })
}

/// A message not queued, in the API's words; `document` names what was to be sent.
fn refused(error: SendError, document: &str) -> ApiError {
    match error {
        SendError::NotFound => not_found(document),
        SendError::Refused(refusal) => einvoice_refusal(&refusal),
        SendError::Render(error) => render_failed(&error),
        SendError::Subject(MailRule::Subject(reason)) => {
            FieldError::new("subject", format!("once filled in, {reason}")).into()
        }
        SendError::Subject(rule) => FieldError::new("subject", rule.to_string()).into(),
        SendError::Body(invalid) => FieldError::new("body", format!("once filled in, {invalid}")).into(),
        SendError::Recipients { list, rule } => {
            let field = match list {
                RecipientList::To => "to",
                RecipientList::Cc => "cc",
            };
            FieldError::new(field, rule.to_string()).into()
        }
        SendError::NothingDue { number, status } => ApiError::conflict(format!(
            "invoice: nothing is due on {number} ({}), so there is nothing to remind of",
            status.as_str()
        )),
        SendError::ClientOptedOut => ApiError::conflict(
            "client: it takes no reminders (remindersEnabled is false); send the invoice instead, or change the client",
        ),
        SendError::Store(error) => error.into(),
    }
}

/// 202 with the queued message and where to follow it.
fn accepted(message: MessageBody) -> HttpResponse {
    HttpResponse::Accepted()
        .insert_header((actix_web::http::header::LOCATION, format!("/v1/messages/{}", message.id)))
        .json(message)
}

/// Mark an invoice sent
///
/// Records that the client has the invoice, delivered another way than by billable's
/// e-mail (by hand, a portal, the post): its `sentAt` is set and `invoice.sent` raised, and
/// the team's reminder policy now chases it, as it chases only invoices sent. Marking an
/// invoice sent already changes nothing. Takes no body. Needs `invoices:write`.
#[utoipa::path(
    tag = "Messages",
    params(("id" = Uuid, Path, description = "Invoice id")),
    responses(
        (status = 200, description = "The invoice, with its `sentAt`", body = InvoiceBody),
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/mark-sent")]
pub(crate) async fn mark_invoice_sent(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<InvoiceBody>, ApiError> {
    let id: InvoiceId = path_id(&path, "invoice")?;
    let now = state.clock.now();
    let marked = state.stores.notify.mark_sent(auth.principal.team_id, id, now).await?;
    Ok(web::Json(InvoiceBody::new(marked.ok_or_else(|| not_found("invoice"))?, now)))
}

/// Send an invoice by e-mail
///
/// Queues the invoice's message and answers at once (202); a job pass hands it to the SMTP
/// server, retrying while the server answers a temporary failure (4xx, a lost connection)
/// and stopping at a permanent one (5xx), whose reply `lastError` shows. The PDF attached
/// is the one `GET /v1/invoices/pdf` serves now. The invoice's `sentAt` is set when the
/// first one is sent, and `invoice.sent` raised each time. 409 when this server has no SMTP
/// server configured. Needs `invoices:write`.
#[utoipa::path(
    tag = "Messages",
    params(("id" = Uuid, Path, description = "Invoice id")),
    request_body(content = SendInput, description = "Every field may be left out (an empty body too)"),
    responses(
        (status = 202, description = "Queued", body = MessageBody, headers(("Location" = String, description = "URL of the message"))),
        (status = 409, description = "E-mail is not configured on this server", body = ErrorBody),
        (status = 500, description = "`failed to generate PDF`", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/send")]
pub(crate) async fn send_invoice(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    OptionalJson(input): OptionalJson<SendInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let id: InvoiceId = path_id(&path, "invoice")?;
    Ok(accepted(send(&state, auth.principal.team_id, id, input).await?))
}

/// E-mails the team's invoice `id` as `input` asks.
pub(crate) async fn send(
    state: &ApiState,
    team: TeamId,
    id: InvoiceId,
    input: SendInput,
) -> Result<MessageBody, ApiError> {
    send_document(state, team, DocumentRef::Invoice(id), input).await
}

/// E-mails the team's `document` as `input` asks.
async fn send_document(
    state: &ApiState,
    team: TeamId,
    document: DocumentRef,
    input: SendInput,
) -> Result<MessageBody, ApiError> {
    let mail = mail(state)?;
    let files = files(input.attach_pdf, input.e_invoice.as_deref())?;
    let asked = asked(input.to, input.cc, input.subject, input.body)?;
    let sent = service::send(mail, team, document, files, asked, state.clock.now()).await;
    Ok(sent.map_err(|error| refused(error, noun(document.kind())))?.into())
}

/// Send a reminder of an invoice now
///
/// Queues a reminder (202), worded as the team's reminder policy says unless `subject` or
/// `body` are given, beside the policy's own reminders (it takes none of their steps). It
/// counts in the invoice's `remindersSent` once sent. 409 when nothing is due on the
/// invoice (paid, written off or credited in full), when its client takes no reminders
/// (`remindersEnabled: false`), or when e-mail is not configured. Needs `invoices:write`.
#[utoipa::path(
    tag = "Messages",
    params(("id" = Uuid, Path, description = "Invoice id")),
    request_body(content = RemindInput, description = "Every field may be left out (an empty body too)"),
    responses(
        (status = 202, description = "Queued", body = MessageBody, headers(("Location" = String, description = "URL of the message"))),
        (status = 409, description = "Nothing is due, the client takes no reminders, or e-mail is not configured", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/remind")]
pub(crate) async fn remind_invoice(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    OptionalJson(input): OptionalJson<RemindInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    Ok(accepted(remind(&state, &auth.principal, &path, input).await?))
}

/// Reminds the client of the caller's team's invoice `id` now.
pub(crate) async fn remind(
    state: &ApiState,
    who: &Principal,
    id: &str,
    input: RemindInput,
) -> Result<MessageBody, ApiError> {
    let mail = mail(state)?;
    let asked = asked(input.to, input.cc, input.subject, input.body)?;
    let id: InvoiceId = path_id(id, "invoice")?;
    let reminded = service::remind(mail, who.team_id, id, asked, state.clock.now()).await;
    Ok(reminded.map_err(|error| refused(error, noun(DocumentKind::Invoice)))?.into())
}

/// Send a credit note by e-mail
///
/// As sending an invoice: queued (202) with the credit note's PDF attached unless
/// `attachPdf` is `false`. Placeholders: `{serial}` is the credit note's, `{amountDue}` what
/// its invoice still has due, `{pdfUrl}` the credit note's PDF. Needs `invoices:write`.
#[utoipa::path(
    tag = "Messages",
    params(("id" = Uuid, Path, description = "Credit note id")),
    request_body(content = SendInput, description = "Every field may be left out (an empty body too)"),
    responses(
        (status = 202, description = "Queued", body = MessageBody, headers(("Location" = String, description = "URL of the message"))),
        (status = 409, description = "E-mail is not configured on this server", body = ErrorBody),
        (status = 500, description = "`failed to generate PDF`", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/send")]
pub(crate) async fn send_credit_note(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    OptionalJson(input): OptionalJson<SendInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let id: CreditNoteId = path_id(&path, "credit note")?;
    Ok(accepted(send_document(&state, auth.principal.team_id, DocumentRef::CreditNote(id), input).await?))
}

/// Send a quote by e-mail
///
/// Queues the quote's message (202) in its client's language, as sending an invoice does,
/// with its PDF (unless `attachPdf` is `false`) and a link to its page, where the client
/// accepts or declines it. The placeholders are an invoice's: `{amountDue}` is the quote's
/// total, `{dueDate}` the day it is valid until, `{hostedUrl}` its page. A quote carries
/// no e-invoice (`eInvoice` is refused). A draft is numbered first, as
/// `POST /v1/quotes/{id}/finalize` numbers it (raising `quote.sent`); a refused send
/// leaves it a draft, so a draft's subject must fit with a serial of up to 64 characters.
/// A numbered quote may be sent again. 409 when this server has no SMTP server
/// configured. Needs `quotes:write`.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    request_body(content = SendInput, description = "Every field may be left out (an empty body too)"),
    responses(
        (status = 202, description = "Queued", body = MessageBody, headers(("Location" = String, description = "URL of the message"))),
        (status = 409, description = "E-mail is not configured on this server, or the team's numbering pattern repeats a serial", body = ErrorBody),
        (status = 500, description = "`failed to generate PDF`", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/send")]
pub(crate) async fn send_quote(
    auth: Auth<QuotesWrite>,
    path: web::Path<String>,
    OptionalJson(input): OptionalJson<SendInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    Ok(accepted(mail_quote(&state, auth.principal.team_id, &path, input).await?))
}

/// E-mails the team's quote `id` (as written in a path) as `input` asks, numbering a draft.
pub(crate) async fn mail_quote(
    state: &ApiState,
    team: TeamId,
    id: &str,
    input: SendInput,
) -> Result<MessageBody, ApiError> {
    let mail = mail(state)?;
    if input.e_invoice.is_some() {
        return Err(FieldError::new("eInvoice", "a quote carries no e-invoice; leave it out").into());
    }
    let asked = asked(input.to, input.cc, input.subject, input.body)?;
    let id: QuoteId = path_id(id, "quote")?;
    let now = state.clock.now();
    let stores = &state.stores;
    let quote = quoting::the_quote(&*stores.billing, team, id).await?;
    let client = stores.billing.get(team, quote.client_id).await?.ok_or_else(|| not_found("quote"))?;
    let sender =
        billing::service::sender_as_it_stands(&*stores.billing, &*stores.accounts, team, now).await?;
    let parties = Parties { client: &client, sender: &sender };
    let quote = if quote.number.is_some() {
        quote
    } else {
        QuoteMail { quote: &quote, parties }.check(mail, &asked, now).map_err(|e| refused(e, "quote"))?;
        quoting::finalize_quote(&*stores.billing, team, id, now).await?.0
    };
    let attach_pdf = input.attach_pdf.unwrap_or(true);
    let sent = QuoteMail { quote: &quote, parties }.send(mail, attach_pdf, asked, now).await;
    Ok(sent.map_err(|e| refused(e, "quote"))?.into())
}

/// The message listing's filters.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct MessageQuery {
    /// Only messages in this status.
    #[param(value_type = Option<MessageStatusSchema>, example = "failed")]
    status: Option<String>,
    /// Only messages about this invoice.
    #[param(format = Uuid)]
    invoice_id: Option<String>,
    /// Only messages about this quote.
    #[param(format = Uuid)]
    quote_id: Option<String>,
}

/// List messages
///
/// The team's messages, newest first, with where each stands. With `limit`, a page: a
/// `Link` header with `rel="next"` names the next one. Needs `invoices:read`.
#[utoipa::path(
    tag = "Messages",
    params(MessageQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The team's messages, newest first", body = Vec<MessageBody>,
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_messages(
    auth: Auth<InvoicesRead>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    listing.respond(list(&state, &auth.principal, None, listing.parameters.clone()).await)
}

/// The team's messages `query` asks for (about `invoice` only, when given).
pub(crate) async fn list(
    state: &ApiState,
    who: &Principal,
    invoice: Option<InvoiceId>,
    query: Map<String, Value>,
) -> Result<Page<MessageBody>, ApiError> {
    let (query, page): (MessageQuery, _) = paging::read_listing(query)?;
    let status = query
        .status
        .as_deref()
        .map(|s| <MessageStatus as kernel::Words>::parse_word(s).map_err(|e| e.at("status")))
        .transpose()?;
    let invoice = match invoice {
        Some(invoice) => Some(invoice),
        None => query_id(query.invoice_id.as_deref(), "invoiceId")?,
    };
    let quote = query_id(query.quote_id.as_deref(), "quoteId")?;
    let position = |cursor: &str| {
        let parts = paging::decode_cursor(cursor)?;
        match parts.as_slice() {
            [id] => MessageId::parse(id).ok_or_else(paging::not_a_cursor),
            _ => Err(paging::not_a_cursor()),
        }
    };
    let cursor = |message: &Message| paging::encode_cursor(&[message.id.to_string()]);
    let page = paging::page_from_store(&page, position, cursor, |before, limit| async move {
        let filter = MessageFilter { invoice, quote, status, before, limit: limit.unwrap_or(u32::MAX) };
        Ok(state.stores.notify.list_messages(who.team_id, &filter).await?)
    })
    .await?;
    Ok(page.map(MessageBody::from))
}

/// List an invoice's messages
///
/// The messages about the invoice (itself, its reminders, its credit notes), newest first.
/// Needs `invoices:read`.
#[utoipa::path(
    tag = "Messages",
    params(("id" = Uuid, Path, description = "Invoice id"), paging::PageQuery),
    responses(
        (status = 200, description = "The invoice's messages, newest first", body = Vec<MessageBody>,
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}/messages")]
pub(crate) async fn list_invoice_messages(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let id: InvoiceId = path_id(&path, "invoice")?;
    let who = &auth.principal;
    state.stores.billing.get_invoice(who.team_id, id).await?.ok_or_else(|| not_found("invoice"))?;
    listing.respond(list(&state, who, Some(id), listing.parameters.clone()).await)
}

/// Get a message
///
/// Needs `invoices:read`.
#[utoipa::path(
    tag = "Messages",
    params(("id" = Uuid, Path, description = "Message id")),
    responses((status = 200, description = "The message", body = MessageBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_message(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<MessageBody>, ApiError> {
    let id: MessageId = path_id(&path, "message")?;
    let message = state.stores.notify.get_message(auth.principal.team_id, id).await?;
    Ok(web::Json(message.ok_or_else(|| not_found("message"))?.into()))
}

/// Send a failed message again
///
/// Queues a `failed` message again (202), with its `Message-ID` and attachments as they
/// were; attempts go on counting. 409 for a message that did not fail. Needs
/// `invoices:write`.
#[utoipa::path(
    tag = "Messages",
    params(("id" = Uuid, Path, description = "Message id")),
    responses(
        (status = 202, description = "Queued again", body = MessageBody),
        (status = 409, description = "The message did not fail, or e-mail is not configured", body = ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/retry")]
pub(crate) async fn retry_message(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    mail(&state)?;
    let id: MessageId = path_id(&path, "message")?;
    let retried = state.stores.notify.retry_message(auth.principal.team_id, id, state.clock.now()).await;
    let message = retried.map_err(|error| match error {
        RetryMessageError::NotFound => not_found("message"),
        RetryMessageError::NotFailed(status) => ApiError::conflict(format!(
            "message: it is {}, and only a failed message is sent again",
            status.as_str()
        )),
        RetryMessageError::Store(error) => error.into(),
    })?;
    Ok(HttpResponse::Accepted().json(MessageBody::from(message)))
}

/// Checks a subject or body a policy gives, for the reminder policy's handler: kept as
/// given and filled in when each reminder is sent, each must already be a subject (one
/// line, 1 to 255 characters) or a body (1 to 20,000) as written.
pub(crate) fn policy_wording(
    subject: Option<String>,
    body: Option<String>,
) -> Result<(Template, Template), ApiError> {
    let (default_subject, default_body) = MessageKind::Reminder.default_templates(Language::default());
    let blank = |field: &str| FieldError::new(field, "must not be empty");
    let subject = match subject {
        Some(text) if text.trim().is_empty() => return Err(blank("subject").into()),
        Some(text) => subject_template(text)?,
        None => default_subject,
    };
    let body = match body {
        Some(text) if text.trim().is_empty() => return Err(blank("body").into()),
        Some(text) => body_template(text)?,
        None => default_body,
    };
    Ok((subject, body))
}
