//! The words billable says to people, in each language it speaks: the labels of a printed
//! document, the default wording of its mails, and how each language writes numbers and
//! days. The words are Fluent message files (`messages/<code>.ftl`), compiled in; each
//! message is a [`Term`], and every language holds every term.
//!
//! A leaf: it knows no crate of ours. Documents, mails (and the client's pages) ask it for
//! a [`Term`] in a [`Language`]; nothing else spells a word a client reads.

use std::borrow::Cow;
use std::sync::LazyLock;

use chrono::NaiveDate;
use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource};

/// A language billable speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Language {
    #[default]
    English,
}

impl Language {
    /// Every language, in the order they are listed to people.
    pub const ALL: [Self; 1] = [Self::English];

    /// The language's BCP 47 code: `en`.
    pub fn code(self) -> &'static str {
        match self {
            Self::English => "en",
        }
    }

    /// The language of `code`, exactly as [`Language::code`] writes it.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|language| language.code() == code)
    }

    /// Its message file, as compiled in.
    fn messages(self) -> &'static str {
        match self {
            Self::English => include_str!("../messages/en.ftl"),
        }
    }

    fn catalogue(self) -> &'static Catalogue {
        static CATALOGUES: LazyLock<Vec<Catalogue>> =
            LazyLock::new(|| Language::ALL.into_iter().map(Catalogue::of).collect());
        let index = Self::ALL.iter().position(|language| *language == self).unwrap_or(0);
        &CATALOGUES[index]
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
    /// decimal mark: `-1,234.5`.
    pub fn grouped(self, number: &str) -> String {
        let (group, mark) = match self {
            Self::English => (',', '.'),
        };
        let (sign, digits) = number.strip_prefix('-').map_or(("", number), |rest| ("-", rest));
        let (whole, fraction) = digits.split_once('.').map_or((digits, None), |(w, f)| (w, Some(f)));
        let mut out = String::with_capacity(number.len() + whole.len() / 3 + 1);
        out.push_str(sign);
        for (i, digit) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i).is_multiple_of(3) {
                out.push(group);
            }
            out.push(digit);
        }
        if let Some(fraction) = fraction {
            out.push(mark);
            out.push_str(fraction);
        }
        out
    }

    /// `number`, a plain decimal (`-1234.5`), with this language's decimal mark and no
    /// grouping, as running text writes an amount: `-1234.5`.
    pub fn decimal(self, number: &str) -> String {
        match self {
            Self::English => number.to_owned(),
        }
    }

    /// A day as this language writes it on a document or in a mail.
    pub fn day(self, day: NaiveDate) -> String {
        match self {
            // ISO 8601, which reads the same to every English reader.
            Self::English => day.format("%Y-%m-%d").to_string(),
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
    /// One rate's tax on a document of several: `rate`, and `base`, the amount it is on.
    TaxRateOn,
    Total,
    Paid,
    Credited,
    WrittenOff,
    AmountDue,
    PaymentDetails,
    /// `page`, `pages`.
    PageOf,
    PaidStamp,
    /// The mail's default wording; `serial`, `amountDue`, `dueDate`, `client`, `pdfUrl`.
    MailInvoiceSubject,
    MailInvoiceBody,
    MailReminderSubject,
    MailReminderBody,
    MailCreditNoteSubject,
    MailCreditNoteBody,
    /// What a mail says of the due date of an invoice without one.
    NoDueDate,
}

impl Term {
    pub const ALL: [Self; 46] = [
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
        Self::TaxRateOn,
        Self::Total,
        Self::Paid,
        Self::Credited,
        Self::WrittenOff,
        Self::AmountDue,
        Self::PaymentDetails,
        Self::PageOf,
        Self::PaidStamp,
        Self::MailInvoiceSubject,
        Self::MailInvoiceBody,
        Self::MailReminderSubject,
        Self::MailReminderBody,
        Self::MailCreditNoteSubject,
        Self::MailCreditNoteBody,
        Self::NoDueDate,
    ];

    /// Its message's id in every file.
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
            Self::TaxRateOn => "tax-rate-on",
            Self::Total => "total",
            Self::Paid => "paid",
            Self::Credited => "credited",
            Self::WrittenOff => "written-off",
            Self::AmountDue => "amount-due",
            Self::PaymentDetails => "payment-details",
            Self::PageOf => "page-of",
            Self::PaidStamp => "paid-stamp",
            Self::MailInvoiceSubject => "mail-invoice-subject",
            Self::MailInvoiceBody => "mail-invoice-body",
            Self::MailReminderSubject => "mail-reminder-subject",
            Self::MailReminderBody => "mail-reminder-body",
            Self::MailCreditNoteSubject => "mail-credit-note-subject",
            Self::MailCreditNoteBody => "mail-credit-note-body",
            Self::NoDueDate => "no-due-date",
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
}
