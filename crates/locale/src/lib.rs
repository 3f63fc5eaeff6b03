//! The words billable says to people, in each language it speaks: the labels of a printed
//! document, the default wording of its mails, and how each language writes numbers and
//! days. The words are Fluent message files (`messages/<code>.ftl`), compiled in; each
//! message is a [`Term`], and every language holds every term.
//!
//! A leaf: it knows no crate of ours. Documents, mails (and the client's pages) ask it for
//! a [`Term`] in a [`Language`]; nothing else spells a word a client reads.

use std::borrow::Cow;
use std::sync::LazyLock;

use chrono::{Datelike as _, NaiveDate};
use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource};
use icu_calendar::{Date, Gregorian};
use icu_datetime::FixedCalendarDateTimeFormatter;
use icu_datetime::fieldsets::YMD;
use icu_decimal::DecimalFormatter;
use icu_decimal::options::{DecimalFormatterOptions, GroupingStrategy};

/// A language billable speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Language {
    #[default]
    English,
    German,
    French,
    Italian,
    Spanish,
    Dutch,
}

impl Language {
    /// Every language, in the order they are listed to people.
    pub const ALL: [Self; 6] =
        [Self::English, Self::German, Self::French, Self::Italian, Self::Spanish, Self::Dutch];

    /// The language's BCP 47 code: `en`.
    pub fn code(self) -> &'static str {
        match self {
            Self::English => "en",
            Self::German => "de",
            Self::French => "fr",
            Self::Italian => "it",
            Self::Spanish => "es",
            Self::Dutch => "nl",
        }
    }

    /// The language of `code`, exactly as [`Language::code`] writes it.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|language| language.code() == code)
    }

    /// The codes of every language, as a list for people: `en, de, fr, it, es, nl`.
    pub fn codes() -> String {
        Self::ALL.map(Self::code).join(", ")
    }

    /// Its message file, as compiled in.
    fn messages(self) -> &'static str {
        match self {
            Self::English => include_str!("../messages/en.ftl"),
            Self::German => include_str!("../messages/de.ftl"),
            Self::French => include_str!("../messages/fr.ftl"),
            Self::Italian => include_str!("../messages/it.ftl"),
            Self::Spanish => include_str!("../messages/es.ftl"),
            Self::Dutch => include_str!("../messages/nl.ftl"),
        }
    }

    fn catalogue(self) -> &'static Catalogue {
        static CATALOGUES: [LazyLock<Catalogue>; 6] = [
            LazyLock::new(|| Catalogue::of(Language::English)),
            LazyLock::new(|| Catalogue::of(Language::German)),
            LazyLock::new(|| Catalogue::of(Language::French)),
            LazyLock::new(|| Catalogue::of(Language::Italian)),
            LazyLock::new(|| Catalogue::of(Language::Spanish)),
            LazyLock::new(|| Catalogue::of(Language::Dutch)),
        ];
        let index = Self::ALL.iter().position(|language| *language == self).unwrap_or(0);
        &CATALOGUES[index]
    }

    /// Its CLDR formats; `None` only were ICU4X's compiled data to lack the language,
    /// which the tests rule out (numbers and days are then written as given, in ISO 8601).
    fn formats(self) -> Option<&'static Formats> {
        static FORMATS: [LazyLock<Option<Formats>>; 6] = [
            LazyLock::new(|| Formats::of(Language::English)),
            LazyLock::new(|| Formats::of(Language::German)),
            LazyLock::new(|| Formats::of(Language::French)),
            LazyLock::new(|| Formats::of(Language::Italian)),
            LazyLock::new(|| Formats::of(Language::Spanish)),
            LazyLock::new(|| Formats::of(Language::Dutch)),
        ];
        let index = Self::ALL.iter().position(|language| *language == self).unwrap_or(0);
        FORMATS[index].as_ref()
    }

    /// What `term` says in this language.
    pub fn term(self, term: Term) -> String {
        self.phrase(term, &[])
    }

    /// What `term` says in this language, each `{ $name }` in it filled with its value in
    /// `values` (`("serial", "INV-0001")`).
    pub fn phrase(self, term: Term, values: &[(&str, &str)]) -> String {
        self.catalogue().format(term, values).into_owned()
    }

    /// `number`, a plain decimal (`-1234.5`), with this language's digit grouping and
    /// decimal mark (CLDR's, through ICU4X): `-1,234.5`, `-1.234,5`.
    pub fn grouped(self, number: &str) -> String {
        self.formats().map_or_else(|| number.to_owned(), |formats| formats.number(number, true))
    }

    /// `number`, a plain decimal (`-1234.5`), with this language's decimal mark and no
    /// grouping, as running text writes an amount or a rate: `-1234.5`, `-1234,5`.
    pub fn decimal(self, number: &str) -> String {
        self.formats().map_or_else(|| number.to_owned(), |formats| formats.number(number, false))
    }

    /// An amount of money, `number` a plain decimal already at the currency's minor unit,
    /// as this language writes it: the number grouped, and the currency where CLDR's
    /// pattern for the language puts it, with its symbol where it has one every reader of
    /// the language knows (`€`, `£`) and its ISO 4217 code otherwise. English keeps the
    /// code after the amount (`1,234.56 EUR`), as billable has always printed it.
    pub fn money(self, number: &str, currency: &str) -> String {
        let grouped = self.grouped(number);
        let symbol = match (self, currency) {
            (Self::English, _) => currency,
            (_, "EUR") => "€",
            (_, "GBP") => "£",
            _ => currency,
        };
        match self {
            Self::English => format!("{grouped} {symbol}"),
            // CLDR nl: `¤ #,##0.00`, the sign after the symbol.
            Self::Dutch => format!("{symbol}\u{a0}{grouped}"),
            // CLDR de, fr, it, es: `#,##0.00 ¤`.
            Self::German | Self::French | Self::Italian | Self::Spanish => format!("{grouped}\u{a0}{symbol}"),
        }
    }

    /// A day as this language writes it on a document or in a mail: CLDR's long date
    /// (`27. November 2026`, `27 novembre 2026`); English keeps ISO 8601, which reads the
    /// same to every English reader.
    pub fn day(self, day: NaiveDate) -> String {
        match self {
            Self::English => day.format("%Y-%m-%d").to_string(),
            _ => {
                self.formats().map_or_else(|| day.format("%Y-%m-%d").to_string(), |formats| formats.day(day))
            }
        }
    }
}

/// How one language writes numbers and days, from ICU4X's compiled CLDR data.
struct Formats {
    grouped: DecimalFormatter,
    plain: DecimalFormatter,
    days: FixedCalendarDateTimeFormatter<Gregorian, YMD>,
}

impl Formats {
    fn of(language: Language) -> Option<Self> {
        let locale: icu_locale_core::Locale = language.code().parse().ok()?;
        let mut plain = DecimalFormatterOptions::default();
        plain.grouping_strategy = Some(GroupingStrategy::Never);
        Some(Self {
            grouped: DecimalFormatter::try_new((&locale).into(), DecimalFormatterOptions::default()).ok()?,
            plain: DecimalFormatter::try_new((&locale).into(), plain).ok()?,
            days: FixedCalendarDateTimeFormatter::try_new((&locale).into(), YMD::long()).ok()?,
        })
    }

    /// `number` (a plain decimal) written with the language's marks; as given when it is
    /// no decimal.
    fn number(&self, number: &str, grouped: bool) -> String {
        let Ok(value) = number.parse::<icu_decimal::input::Decimal>() else { return number.to_owned() };
        let formatter = if grouped { &self.grouped } else { &self.plain };
        formatter.format(&value).to_string()
    }

    fn day(&self, day: NaiveDate) -> String {
        let date = u8::try_from(day.month())
            .ok()
            .zip(u8::try_from(day.day()).ok())
            .and_then(|(month, of_month)| Date::try_new_gregorian(day.year(), month, of_month).ok());
        match date {
            Some(date) => self.days.format(&date).to_string(),
            None => day.format("%Y-%m-%d").to_string(),
        }
    }
}

/// A message of the catalogue: what is said, in whatever language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Term {
    InvoiceTitle,
    CreditNoteTitle,
    /// `serial`: the title of a page after the first.
    ContinuedTitle,
    IssueDate,
    DueDate,
    Corrects,
    /// The day the service was rendered.
    ServiceDate,
    /// The days over which it was rendered.
    ServicePeriod,
    /// The service date of an invoice that states none: its issue date.
    ServiceDateIsIssueDate,
    /// `from`, `to`: days, both included.
    DaySpan,
    PurchaseOrder,
    PaymentTerms,
    /// `days`: payment terms.
    DaysToPay,
    Status,
    From,
    BillTo,
    /// `number`.
    VatNumber,
    Description,
    Quantity,
    UnitPrice,
    Amount,
    /// The header of the lines' VAT rates.
    VatColumn,
    /// `rate`, a percentage without its sign: a line's VAT rate.
    Percent,
    /// A discount of an amount.
    Discount,
    /// `rate`: a discount of a percentage.
    DiscountRate,
    /// `label` (a discount's), `amount`: what it takes off, under a line.
    Less,
    /// What the tax is computed on, after the discounts.
    TaxableAmount,
    Subtotal,
    Tax,
    /// `rate`, a percentage without its sign.
    TaxRate,
    Total,
    Paid,
    Credited,
    WrittenOff,
    AmountDue,
    PaymentDetails,
    /// `page`, `pages`.
    PageOf,
    PaidStamp,
    VatBreakdown,
    VatRate,
    /// `rate` (without its sign) and `category`: a VAT breakdown row of a category other
    /// than the standard rate.
    RateOfCategory,
    CategoryZeroRated,
    CategoryExempt,
    CategoryReverseCharge,
    CategoryIntraCommunity,
    CategoryExport,
    CategoryOutOfScope,
    PaymentReference,
    BuyerReference,
    ExchangeRate,
    /// `from`, `to` (currency codes) and `rate`, units of `to` per unit of `from`.
    ExchangeRateValue,
    /// `currency`: the VAT in the team's currency, on an invoice in another.
    VatInCurrency,
    /// Short units after a quantity (`7 h`).
    UnitHour,
    UnitDay,
    /// The Swiss QR-bill's fixed wording (SIX Implementation Guidelines 2.3, 3.4).
    QrReceipt,
    QrPaymentPart,
    QrAccountPayableTo,
    QrReference,
    QrAdditionalInformation,
    QrPayableBy,
    QrPayableByNameAddress,
    QrCurrency,
    QrAmount,
    QrAcceptancePoint,
    QrSeparateBeforePaying,
    /// `serial`, `sender`: the title of the client's page of an invoice.
    PageTitle,
    PageStatusOpen,
    PageStatusPaid,
    PageStatusPartiallyPaid,
    PageStatusOverdue,
    PageStatusVoid,
    PageDownloadPdf,
    /// `format`: an e-invoice format's name.
    PageDownloadEinvoice,
    PageDownloads,
    PageLines,
    PagePayByTransfer,
    PageScanToPay,
    PageAccountHolder,
    PageIban,
    PageBic,
    PagePayByCard,
    PagePaidThanks,
    PagePaymentReceived,
    PagePaymentPending,
    PagePaymentCancelled,
    PageNothingDue,
    PageCardUnavailable,
    /// The mail's default wording; `serial`, `amountDue`, `dueDate`, `client`, `pdfUrl`.
    MailInvoiceSubject,
    MailInvoiceBody,
    MailReminderSubject,
    MailReminderBody,
    MailCreditNoteSubject,
    MailCreditNoteBody,
    /// What a mail says of the due date of an invoice without one.
    NoDueDate,
    QuoteTitle,
    ValidUntil,
    /// `quote` (its number), `rate` (without its sign): a deposit invoice's line for one VAT rate.
    DepositLine,
    /// What a final invoice deducts: the deposit invoices' totals.
    DepositsDeducted,
    /// `serial`: what a final invoice says it bills.
    QuoteNumber,
    /// A quote's status, as its page and PDF word it.
    QuoteStatusDraft,
    QuoteStatusSent,
    QuoteStatusAccepted,
    QuoteStatusDeclined,
    QuoteStatusExpired,
    QuoteStatusConverted,
    /// `serial`, `sender`: the title of the client's page of a quote.
    QuotePageTitle,
    QuoteDecide,
    QuoteSignerName,
    QuoteAgree,
    QuoteAccept,
    QuoteDeclineReason,
    QuoteDecline,
    /// `signer`, `date`.
    QuoteAcceptedBy,
    /// `date`.
    QuoteDeclinedOn,
    QuoteNeedsName,
    QuoteNotes,
    /// What a quote's date is called, beside an invoice's issue date.
    QuoteDate,
    QuoteFor,
    QuoteLines,
    /// A quote's e-mail: its subject, and its body.
    MailQuoteSubject,
    MailQuoteBody,
}

impl Term {
    pub const ALL: [Self; 121] = [
        Self::InvoiceTitle,
        Self::CreditNoteTitle,
        Self::ContinuedTitle,
        Self::IssueDate,
        Self::DueDate,
        Self::Corrects,
        Self::ServiceDate,
        Self::ServicePeriod,
        Self::ServiceDateIsIssueDate,
        Self::DaySpan,
        Self::PurchaseOrder,
        Self::PaymentTerms,
        Self::DaysToPay,
        Self::Status,
        Self::From,
        Self::BillTo,
        Self::VatNumber,
        Self::Description,
        Self::Quantity,
        Self::UnitPrice,
        Self::Amount,
        Self::VatColumn,
        Self::Percent,
        Self::Discount,
        Self::DiscountRate,
        Self::Less,
        Self::TaxableAmount,
        Self::Subtotal,
        Self::Tax,
        Self::TaxRate,
        Self::Total,
        Self::Paid,
        Self::Credited,
        Self::WrittenOff,
        Self::AmountDue,
        Self::PaymentDetails,
        Self::PageOf,
        Self::PaidStamp,
        Self::VatBreakdown,
        Self::VatRate,
        Self::RateOfCategory,
        Self::CategoryZeroRated,
        Self::CategoryExempt,
        Self::CategoryReverseCharge,
        Self::CategoryIntraCommunity,
        Self::CategoryExport,
        Self::CategoryOutOfScope,
        Self::PaymentReference,
        Self::BuyerReference,
        Self::ExchangeRate,
        Self::ExchangeRateValue,
        Self::VatInCurrency,
        Self::UnitHour,
        Self::UnitDay,
        Self::QrReceipt,
        Self::QrPaymentPart,
        Self::QrAccountPayableTo,
        Self::QrReference,
        Self::QrAdditionalInformation,
        Self::QrPayableBy,
        Self::QrPayableByNameAddress,
        Self::QrCurrency,
        Self::QrAmount,
        Self::QrAcceptancePoint,
        Self::QrSeparateBeforePaying,
        Self::PageTitle,
        Self::PageStatusOpen,
        Self::PageStatusPaid,
        Self::PageStatusPartiallyPaid,
        Self::PageStatusOverdue,
        Self::PageStatusVoid,
        Self::PageDownloadPdf,
        Self::PageDownloadEinvoice,
        Self::PageDownloads,
        Self::PageLines,
        Self::PagePayByTransfer,
        Self::PageScanToPay,
        Self::PageAccountHolder,
        Self::PageIban,
        Self::PageBic,
        Self::PagePayByCard,
        Self::PagePaidThanks,
        Self::PagePaymentReceived,
        Self::PagePaymentPending,
        Self::PagePaymentCancelled,
        Self::PageNothingDue,
        Self::PageCardUnavailable,
        Self::MailInvoiceSubject,
        Self::MailInvoiceBody,
        Self::MailReminderSubject,
        Self::MailReminderBody,
        Self::MailCreditNoteSubject,
        Self::MailCreditNoteBody,
        Self::NoDueDate,
        Self::QuoteTitle,
        Self::ValidUntil,
        Self::DepositLine,
        Self::DepositsDeducted,
        Self::QuoteNumber,
        Self::QuoteStatusDraft,
        Self::QuoteStatusSent,
        Self::QuoteStatusAccepted,
        Self::QuoteStatusDeclined,
        Self::QuoteStatusExpired,
        Self::QuoteStatusConverted,
        Self::QuotePageTitle,
        Self::QuoteDecide,
        Self::QuoteSignerName,
        Self::QuoteAgree,
        Self::QuoteAccept,
        Self::QuoteDeclineReason,
        Self::QuoteDecline,
        Self::QuoteAcceptedBy,
        Self::QuoteDeclinedOn,
        Self::QuoteNeedsName,
        Self::QuoteNotes,
        Self::QuoteDate,
        Self::QuoteFor,
        Self::QuoteLines,
        Self::MailQuoteSubject,
        Self::MailQuoteBody,
    ];

    /// Its message's id in every file.
    #[expect(clippy::too_many_lines, reason = "one arm per message of the catalogue, each its id")]
    pub fn id(self) -> &'static str {
        match self {
            Self::InvoiceTitle => "invoice-title",
            Self::CreditNoteTitle => "credit-note-title",
            Self::ContinuedTitle => "continued-title",
            Self::IssueDate => "issue-date",
            Self::DueDate => "due-date",
            Self::Corrects => "corrects",
            Self::ServiceDate => "service-date",
            Self::ServicePeriod => "service-period",
            Self::ServiceDateIsIssueDate => "service-date-is-issue-date",
            Self::DaySpan => "day-span",
            Self::PurchaseOrder => "purchase-order",
            Self::PaymentTerms => "payment-terms",
            Self::DaysToPay => "days-to-pay",
            Self::Status => "status",
            Self::From => "from",
            Self::BillTo => "bill-to",
            Self::VatNumber => "vat-number",
            Self::Description => "description",
            Self::Quantity => "quantity",
            Self::UnitPrice => "unit-price",
            Self::Amount => "amount",
            Self::VatColumn => "vat-column",
            Self::Percent => "percent",
            Self::Discount => "discount",
            Self::DiscountRate => "discount-rate",
            Self::Less => "less",
            Self::TaxableAmount => "taxable-amount",
            Self::Subtotal => "subtotal",
            Self::Tax => "tax",
            Self::TaxRate => "tax-rate",
            Self::Total => "total",
            Self::Paid => "paid",
            Self::Credited => "credited",
            Self::WrittenOff => "written-off",
            Self::AmountDue => "amount-due",
            Self::PaymentDetails => "payment-details",
            Self::PageOf => "page-of",
            Self::PaidStamp => "paid-stamp",
            Self::VatBreakdown => "vat-breakdown",
            Self::VatRate => "vat-rate",
            Self::RateOfCategory => "rate-of-category",
            Self::CategoryZeroRated => "category-zero-rated",
            Self::CategoryExempt => "category-exempt",
            Self::CategoryReverseCharge => "category-reverse-charge",
            Self::CategoryIntraCommunity => "category-intra-community",
            Self::CategoryExport => "category-export",
            Self::CategoryOutOfScope => "category-out-of-scope",
            Self::PaymentReference => "payment-reference",
            Self::BuyerReference => "buyer-reference",
            Self::ExchangeRate => "exchange-rate",
            Self::ExchangeRateValue => "exchange-rate-value",
            Self::VatInCurrency => "vat-in-currency",
            Self::UnitHour => "unit-hour",
            Self::UnitDay => "unit-day",
            Self::QrReceipt => "qr-receipt",
            Self::QrPaymentPart => "qr-payment-part",
            Self::QrAccountPayableTo => "qr-account-payable-to",
            Self::QrReference => "qr-reference",
            Self::QrAdditionalInformation => "qr-additional-information",
            Self::QrPayableBy => "qr-payable-by",
            Self::QrPayableByNameAddress => "qr-payable-by-name-address",
            Self::QrCurrency => "qr-currency",
            Self::QrAmount => "qr-amount",
            Self::QrAcceptancePoint => "qr-acceptance-point",
            Self::QrSeparateBeforePaying => "qr-separate-before-paying",
            Self::PageTitle => "page-title",
            Self::PageStatusOpen => "page-status-open",
            Self::PageStatusPaid => "page-status-paid",
            Self::PageStatusPartiallyPaid => "page-status-partially-paid",
            Self::PageStatusOverdue => "page-status-overdue",
            Self::PageStatusVoid => "page-status-void",
            Self::PageDownloadPdf => "page-download-pdf",
            Self::PageDownloadEinvoice => "page-download-einvoice",
            Self::PageDownloads => "page-downloads",
            Self::PageLines => "page-lines",
            Self::PagePayByTransfer => "page-pay-by-transfer",
            Self::PageScanToPay => "page-scan-to-pay",
            Self::PageAccountHolder => "page-account-holder",
            Self::PageIban => "page-iban",
            Self::PageBic => "page-bic",
            Self::PagePayByCard => "page-pay-by-card",
            Self::PagePaidThanks => "page-paid-thanks",
            Self::PagePaymentReceived => "page-payment-received",
            Self::PagePaymentPending => "page-payment-pending",
            Self::PagePaymentCancelled => "page-payment-cancelled",
            Self::PageNothingDue => "page-nothing-due",
            Self::PageCardUnavailable => "page-card-unavailable",
            Self::MailInvoiceSubject => "mail-invoice-subject",
            Self::MailInvoiceBody => "mail-invoice-body",
            Self::MailReminderSubject => "mail-reminder-subject",
            Self::MailReminderBody => "mail-reminder-body",
            Self::MailCreditNoteSubject => "mail-credit-note-subject",
            Self::MailCreditNoteBody => "mail-credit-note-body",
            Self::NoDueDate => "no-due-date",
            Self::QuoteStatusDraft => "quote-status-draft",
            Self::QuoteStatusSent => "quote-status-sent",
            Self::QuoteStatusAccepted => "quote-status-accepted",
            Self::QuoteStatusDeclined => "quote-status-declined",
            Self::QuoteStatusExpired => "quote-status-expired",
            Self::QuoteStatusConverted => "quote-status-converted",
            Self::QuotePageTitle => "quote-page-title",
            Self::QuoteDecide => "quote-decide",
            Self::QuoteSignerName => "quote-signer-name",
            Self::QuoteAgree => "quote-agree",
            Self::QuoteAccept => "quote-accept",
            Self::QuoteDeclineReason => "quote-decline-reason",
            Self::QuoteDecline => "quote-decline",
            Self::QuoteAcceptedBy => "quote-accepted-by",
            Self::QuoteDeclinedOn => "quote-declined-on",
            Self::QuoteNeedsName => "quote-needs-name",
            Self::QuoteNotes => "quote-notes",
            Self::QuoteDate => "quote-date",
            Self::QuoteFor => "quote-for",
            Self::QuoteLines => "quote-lines",
            Self::MailQuoteSubject => "mail-quote-subject",
            Self::MailQuoteBody => "mail-quote-body",
            Self::QuoteTitle => "quote-title",
            Self::ValidUntil => "valid-until",
            Self::DepositLine => "deposit-line",
            Self::DepositsDeducted => "deposits-deducted",
            Self::QuoteNumber => "quote-number",
        }
    }
}

/// One language's messages, parsed once.
struct Catalogue {
    bundle: FluentBundle<FluentResource>,
}

impl Catalogue {
    /// `language`'s messages. A message file that does not parse is a build's mistake, which
    /// the tests catch; what parses of it is kept.
    fn of(language: Language) -> Self {
        let resource =
            FluentResource::try_new(language.messages().to_owned()).unwrap_or_else(|(partial, _)| partial);
        let id = language.code().parse().unwrap_or_default();
        let mut bundle = FluentBundle::new_concurrent(vec![id]);
        // Values go in as they are given: no bidi isolation marks around them.
        bundle.set_use_isolating(false);
        // Ids are unique in a file that the tests pass.
        let _ = bundle.add_resource(resource);
        Self { bundle }
    }

    /// `term` with `values` filled in; its id when the file lacks it (which the tests rule
    /// out), so a missing word shows rather than vanishes.
    fn format(&self, term: Term, values: &[(&str, &str)]) -> Cow<'_, str> {
        let Some(pattern) = self.bundle.get_message(term.id()).and_then(|message| message.value()) else {
            return Cow::Borrowed(term.id());
        };
        let mut args = FluentArgs::new();
        for (name, value) in values {
            args.set(*name, *value);
        }
        let mut errors = Vec::new();
        self.bundle.format_pattern(pattern, Some(&args), &mut errors)
    }
}

#[cfg(test)]
mod tests {
    use fluent_bundle::FluentResource;
    use fluent_syntax::ast::{Entry, Expression, InlineExpression, Pattern, PatternElement};

    use super::*;

    /// The ids of the messages of `language`'s file, and the variables each one uses.
    fn messages(language: Language) -> Vec<(String, Vec<String>)> {
        let resource = FluentResource::try_new(language.messages().to_owned())
            .unwrap_or_else(|(_, errors)| panic!("{} does not parse: {errors:?}", language.code()));
        resource
            .entries()
            .filter_map(|entry| match entry {
                Entry::Message(message) => Some((
                    message.id.name.to_owned(),
                    message.value.as_ref().map(variables).unwrap_or_default(),
                )),
                _ => None,
            })
            .collect()
    }

    fn variables(pattern: &Pattern<&str>) -> Vec<String> {
        let mut names: Vec<String> = pattern
            .elements
            .iter()
            .filter_map(|element| match element {
                PatternElement::Placeable {
                    expression: Expression::Inline(InlineExpression::VariableReference { id }),
                } => Some(id.name.to_owned()),
                _ => None,
            })
            .collect();
        names.sort();
        names.dedup();
        names
    }

    #[test]
    fn every_language_has_every_term_and_nothing_else() {
        let english = messages(Language::English);
        for language in Language::ALL {
            let found = messages(language);
            let ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
            for term in Term::ALL {
                assert!(ids.contains(&term.id()), "{} lacks {}", language.code(), term.id());
            }
            for (id, variables) in &found {
                assert!(Term::ALL.iter().any(|term| term.id() == id), "{}: {id} is no term", language.code());
                // A translation fills in what English fills in, no more and no less.
                let (_, in_english) = english.iter().find(|(english, _)| english == id).expect("in English");
                assert_eq!(variables, in_english, "{}: {id} takes other values", language.code());
            }
            let mut unique = ids.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), ids.len(), "{} repeats an id", language.code());
        }
    }

    #[test]
    fn terms_fill_in_their_values_without_marks() {
        let english = Language::English;
        assert_eq!(english.term(Term::Subtotal), "Subtotal");
        assert_eq!(english.phrase(Term::PageOf, &[("page", "2"), ("pages", "3")]), "Page 2 of 3");
        assert_eq!(english.phrase(Term::TaxRate, &[("rate", "19")]), "Tax (19%)");
        let body = english.phrase(Term::MailCreditNoteBody, &[("client", "Zoë"), ("serial", "CN-0001")]);
        assert!(body.starts_with("Hello Zoë,\n\nplease find credit note CN-0001 attached."), "{body:?}");
    }

    #[test]
    fn numbers_are_grouped_and_days_written_as_the_language_does() {
        let english = Language::English;
        assert_eq!(english.grouped("1234567.50"), "1,234,567.50");
        assert_eq!(english.grouped("-1000"), "-1,000");
        assert_eq!(english.grouped("999.999"), "999.999");
        assert_eq!(english.decimal("-1234.50"), "-1234.50");
        assert_eq!(english.day(NaiveDate::from_ymd_opt(2026, 11, 28).unwrap()), "2026-11-28");
        assert_eq!(Language::from_code("en"), Some(Language::English));
        assert_eq!(Language::from_code("xx"), None);
    }

    #[test]
    fn each_language_writes_money_and_days_as_cldr_has_it() {
        let day = NaiveDate::from_ymd_opt(2026, 11, 27).unwrap();
        let cases = [
            (Language::English, "1,234.56 EUR", "-1,234.5", "2026-11-27"),
            (Language::German, "1.234,56\u{a0}€", "-1.234,5", "27. November 2026"),
            (Language::French, "1\u{202f}234,56\u{a0}€", "-1\u{202f}234,5", "27 novembre 2026"),
            (Language::Italian, "1234,56\u{a0}€", "-1234,5", "27 novembre 2026"),
            (Language::Spanish, "1234,56\u{a0}€", "-1234,5", "27 de noviembre de 2026"),
            (Language::Dutch, "€\u{a0}1.234,56", "-1.234,5", "27 november 2026"),
        ];
        for (language, money, grouped, written) in cases {
            assert_eq!(language.money("1234.56", "EUR"), money, "{language:?}");
            assert_eq!(language.grouped("-1234.5"), grouped, "{language:?}");
            assert_eq!(language.day(day), written, "{language:?}");
        }
        // Spanish and Italian group from five digits on, as CLDR's minimum grouping digits
        // say.
        assert_eq!(Language::Spanish.grouped("12345.6"), "12.345,6");
        assert_eq!(Language::Italian.grouped("12345.6"), "12.345,6");
        assert_eq!(Language::German.decimal("-1234.5"), "-1234,5");
        assert_eq!(Language::German.money("7", "CHF"), "7\u{a0}CHF");
        assert_eq!(Language::German.money("7", "GBP"), "7\u{a0}£");
        for language in Language::ALL {
            assert_eq!(Language::from_code(language.code()), Some(language));
        }
        assert_eq!(Language::codes(), "en, de, fr, it, es, nl");
    }
}
