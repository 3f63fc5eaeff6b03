//! An invoice or credit note as a structured e-invoice sees it: the semantic model of
//! EN 16931, filled from billable's own data, and the rules of what a profile cannot do
//! without. Writing it as UBL or CII XML is an adapter's work (the `einvoice` crate).
//!
//! A refusal names the business term (`BT-10`) and the [`Datum`] of ours that fills it, so
//! that each front end can name its own field.

use chrono::NaiveDate;
use rust_decimal::Decimal;

use crate::credit::CreditNote;
use crate::money::Currency;
use crate::{Client, Invoice, LineItem, SenderAddress, TaxRule, VatCategory};

/// The e-invoices billable writes: the one list that parsing, descriptions and errors read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// XRechnung 3.0 in OASIS UBL 2.1.
    XRechnungUbl,
    /// XRechnung 3.0 in UN/CEFACT CII D16B.
    XRechnungCii,
    /// The CII of Factur-X / ZUGFeRD's EN 16931 profile (`factur-x.xml`), which a Factur-X
    /// PDF carries.
    FacturX,
    /// Peppol BIS Billing 3.0 in OASIS UBL 2.1: what every Peppol access point takes.
    PeppolBis,
}

kernel::words!(Format {
    XRechnungUbl => "xrechnung-ubl",
    XRechnungCii => "xrechnung-cii",
    FacturX => "facturx",
    PeppolBis => "peppol-bis",
});

impl Format {
    /// The rules the format's documents follow.
    pub fn profile(self) -> Profile {
        match self {
            Self::XRechnungUbl | Self::XRechnungCii => Profile::XRechnung,
            Self::FacturX => Profile::En16931,
            Self::PeppolBis => Profile::Peppol,
        }
    }

    /// Whether a client is given the format inside the document's PDF (a Factur-X PDF/A-3)
    /// rather than as an XML file of its own.
    pub fn travels_in_pdf(self) -> bool {
        self == Self::FacturX
    }
}

/// Writes an e-invoice as the XML of a [`Format`]: the port the `einvoice` crate implements,
/// so the use cases that hand out e-invoices know no XML.
pub trait XmlWriter: Send + Sync + std::fmt::Debug {
    /// `invoice`, made for `format`'s [`Format::profile`], as XML.
    fn write(&self, format: Format, invoice: &EInvoice) -> String;
}

/// The rules an e-invoice is written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// XRechnung 3.0, the German CIUS of EN 16931, which public buyers in Germany require.
    XRechnung,
    /// EN 16931 itself, as the EN 16931 profile of Factur-X / ZUGFeRD carries it.
    En16931,
    /// Peppol BIS Billing 3.0, OpenPeppol's CIUS of EN 16931: both parties named by their
    /// Peppol address, and the buyer's reference or order.
    Peppol,
}

impl Profile {
    /// The specification identifier (BT-24).
    pub fn specification(self) -> &'static str {
        match self {
            Self::XRechnung => "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
            Self::En16931 => "urn:cen.eu:en16931:2017",
            Self::Peppol => "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0",
        }
    }

    /// The business process (BT-23) XRechnung asks for; none for plain EN 16931.
    pub fn business_process(self) -> Option<&'static str> {
        match self {
            Self::XRechnung | Self::Peppol => Some("urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"),
            Self::En16931 => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::XRechnung => "XRechnung",
            Self::En16931 => "EN 16931",
            Self::Peppol => "Peppol BIS Billing 3.0",
        }
    }
}

/// Invoice (380) or credit note (381): BT-3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    Invoice,
    CreditNote,
}

impl DocumentKind {
    pub fn type_code(self) -> &'static str {
        match self {
            Self::Invoice => "380",
            Self::CreditNote => "381",
        }
    }
}

/// A datum of ours that an e-invoice needs, named so each front end can word it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datum {
    ClientBuyerReference,
    ClientCity,
    ClientPostalCode,
    ClientCountryCode,
    ClientVatNumber,
    SenderCity,
    SenderPostalCode,
    SenderCountryCode,
    SenderVatNumber,
    SenderIban,
    SenderContactName,
    SenderContactPhone,
    SenderContactEmail,
    /// The 0-based line whose description is empty.
    LineDescription(u32),
    /// A standard-rated invoice's tax as a percentage, not a flat amount.
    TaxPercentage,
    ClientPeppolId,
    SenderPeppolId,
    /// The client's buyer reference or the invoice's purchase order, either.
    BuyerReferenceOrPurchaseOrder,
}

/// Why an invoice cannot be written as an e-invoice of a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A business term the profile requires, filled by `datum`, is empty.
    #[error("{term} is required for {}", profile.name())]
    Missing { term: &'static str, datum: Datum, profile: Profile },
    /// EN 16931 carries amounts with at most two decimals.
    #[error(
        "EN 16931 allows amounts with at most 2 decimals (its rules BR-DEC-01 to BR-DEC-28); {currency} has {decimals}",
        currency = .0,
        decimals = .0.minor_unit()
    )]
    MinorUnitTooFine(Currency),
    /// The 0-based line `line`'s amount, rounded to the currency's minor unit, is further
    /// from its quantity × unit price than the profile's rule allows
    /// ([`LINE_AMOUNT_RULE`]): a fraction of a currency without a fractional unit (JPY,
    /// 1234.5 × 3 is 3703.5, billed 3704).
    #[error(
        "line {line}: its amount {amount} is not its quantity × unit price, {product}, within {slack} \
         ({LINE_AMOUNT_RULE}, which {} applies)",
        profile.name()
    )]
    LineAmountInexact { line: u32, amount: Decimal, product: Decimal, slack: Decimal, profile: Profile },
}

/// The rule a line's amount breaks when it is not its quantity × price: Peppol's, which
/// KoSIT merges into XRechnung.
pub const LINE_AMOUNT_RULE: &str = "PEPPOL-EN16931-R120";

/// How far a line's amount may be from its quantity × price under [`LINE_AMOUNT_RULE`]:
/// 0.02, and 0.5 for Hungarian forint, which XRechnung widens it to.
fn line_amount_slack(currency: Currency) -> Decimal {
    if currency.as_str() == "HUF" { Decimal::new(5, 1) } else { Decimal::new(2, 2) }
}

/// A seller or buyer (BG-4, BG-7) with its address (BG-5, BG-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Party {
    /// BT-27, BT-44.
    pub name: String,
    /// BT-35, BT-36, BT-162 (BT-50, BT-51, BT-163): the address lines given.
    pub street: Option<String>,
    pub additional_street: Option<String>,
    pub address_line: Option<String>,
    /// BT-37, BT-52.
    pub city: Option<String>,
    /// BT-38, BT-53.
    pub postal_code: Option<String>,
    /// BT-40, BT-55.
    pub country: &'static str,
    /// BT-31, BT-48; left out where the VAT category forbids it (`O`).
    pub vat_id: Option<String>,
    /// BT-34, BT-49: its Peppol address in Peppol BIS, an e-mail address (scheme `EM`)
    /// elsewhere.
    pub electronic_address: Option<ElectronicAddress>,
}

/// An electronic address (BT-34, BT-49): its scheme (BT-34-1, an EAS code) and identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectronicAddress {
    pub scheme: &'static str,
    pub id: String,
}

impl ElectronicAddress {
    fn email(address: &str) -> Self {
        Self { scheme: "EM", id: address.to_owned() }
    }

    fn peppol(id: &crate::peppol::PeppolId) -> Self {
        Self { scheme: id.scheme(), id: id.id().to_owned() }
    }
}

/// The seller's contact (BG-6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contact {
    pub name: Option<String>,
    pub phone: Option<String>,
    pub email: Option<String>,
}

/// The account to pay to (BG-17): a SEPA credit transfer (payment means 58).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayeeAccount {
    pub iban: String,
    pub bic: Option<String>,
}

/// The delivery (BG-13): the day of the service (BT-72) where the invoice states one, and,
/// for an intra-community supply, the buyer's address (BG-15: BT-77, BT-78, BT-80), on
/// the service day or else the issue date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub date: NaiveDate,
    pub to: Option<DeliveryAddress>,
}

/// Where an intra-community supply went (BG-15).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAddress {
    pub city: Option<String>,
    pub postal_code: Option<String>,
    pub country: &'static str,
}

/// One line (BG-25).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// BT-126: 1 for the first line.
    pub id: u32,
    /// BT-153.
    pub name: String,
    /// BT-129, BT-130.
    pub quantity: Decimal,
    pub unit_code: String,
    /// BT-146: never negative (BR-27), as no unit price is.
    pub net_price: Decimal,
    /// BT-131: after its allowance.
    pub amount: Decimal,
    /// Its discount (BG-27).
    pub allowance: Option<Allowance>,
    /// BT-151.
    pub category: VatCategory,
    /// BT-152; none for `O` (outside the scope of VAT).
    pub rate: Option<Decimal>,
}

/// A discount (BG-27 on a line, BG-20 on the document), with reason code 95 (discount).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowance {
    /// BT-136, BT-92.
    pub amount: Decimal,
    /// BT-137, BT-93, and BT-138, BT-94: given for a percentage discount only.
    pub base_and_percentage: Option<(Decimal, Decimal)>,
}

/// The UNTDID 5189 code of a discount (BT-98, BT-140), and its text (BT-97, BT-139).
pub const DISCOUNT_REASON: (&str, &str) = ("95", "Discount");

/// A document's discount as it falls on one VAT group (BG-20 with BT-95, BT-96).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentAllowance {
    pub allowance: Allowance,
    pub category: VatCategory,
    /// Like [`VatBreakdown::rate`].
    pub rate: Option<Decimal>,
}

/// A group of the VAT breakdown (BG-23): one per category, rate and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VatBreakdown {
    pub category: VatCategory,
    /// BT-119; none for `O` (outside the scope of VAT).
    pub rate: Option<Decimal>,
    /// BT-116.
    pub taxable: Decimal,
    /// BT-117.
    pub tax: Decimal,
    /// BT-120.
    pub exemption_reason: Option<String>,
}

/// The document totals (BG-22).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// BT-106: Σ the lines' net amounts.
    pub lines: Decimal,
    /// BT-107: Σ the document's allowances, given where it has any.
    pub allowances: Option<Decimal>,
    /// BT-109.
    pub tax_exclusive: Decimal,
    /// BT-110.
    pub tax: Decimal,
    /// BT-112.
    pub tax_inclusive: Decimal,
    /// BT-113: what settled part of the invoice already (payments, credit notes, write-offs,
    /// and on a final invoice the deposit invoices it deducts).
    pub prepaid: Decimal,
    /// BT-115: the invoice's amount due.
    pub payable: Decimal,
}

/// An invoice or credit note in EN 16931's terms, complete for its profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EInvoice {
    pub profile: Profile,
    pub kind: DocumentKind,
    /// BT-1.
    pub number: String,
    /// BT-2.
    pub issue_date: NaiveDate,
    /// BT-9.
    pub due_date: Option<NaiveDate>,
    /// BT-20, given where there is no due date but something is due (BR-CO-25).
    pub payment_terms: Option<String>,
    /// BT-5, two decimals at most.
    pub currency: &'static str,
    /// For an invoice in another currency than the team's: the team's (BT-6, the VAT
    /// accounting currency) and the VAT in it (BT-111).
    pub tax_currency: Option<(&'static str, Decimal)>,
    /// BT-22.
    pub note: Option<String>,
    /// BT-10.
    pub buyer_reference: Option<String>,
    /// BT-13.
    pub purchase_order: Option<String>,
    /// BG-14: the first and last day of the service.
    pub invoice_period: Option<(NaiveDate, NaiveDate)>,
    /// BT-25 and BT-26: the invoice a credit note corrects.
    pub preceding_invoice: Option<(String, NaiveDate)>,
    pub seller: Party,
    pub seller_contact: Option<Contact>,
    pub buyer: Party,
    pub payee_account: Option<PayeeAccount>,
    /// BT-83: the invoice's payment reference; none on a credit note.
    pub payment_reference: Option<String>,
    /// When it was delivered (BT-72), and where, which an intra-community supply states
    /// (BR-IC-11, BR-IC-12).
    pub delivery: Option<Delivery>,
    /// One group per category, rate and reason, in the order of the lines.
    pub vat: Vec<VatBreakdown>,
    /// The document's discount, one per VAT group it falls on.
    pub allowances: Vec<DocumentAllowance>,
    pub lines: Vec<Line>,
    pub totals: Totals,
}

fn given(text: &str) -> Option<String> {
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// Checks what a profile requires, one term at a time, in the order a reader fixes them.
struct Requirements {
    profile: Profile,
}

impl Requirements {
    /// `value`, or a refusal naming `term` and `datum` when the profile needs it.
    fn needs<T>(&self, value: Option<T>, term: &'static str, datum: Datum) -> Result<Option<T>, Refusal> {
        match value {
            None if self.profile == Profile::XRechnung => {
                Err(Refusal::Missing { term, datum, profile: self.profile })
            }
            value => Ok(value),
        }
    }

    /// `value`, whichever the profile.
    fn always<T>(&self, value: Option<T>, term: &'static str, datum: Datum) -> Result<T, Refusal> {
        value.ok_or(Refusal::Missing { term, datum, profile: self.profile })
    }
}

/// What an e-invoice is made of beside its own figures: who sends it to whom.
#[derive(Debug, Clone, Copy)]
pub struct Parties<'a> {
    pub client: &'a Client,
    pub sender: &'a SenderAddress,
}

impl EInvoice {
    /// `invoice` as an e-invoice of `profile`; what is due reflects its ledger (BT-113,
    /// BT-115).
    pub fn of_invoice(profile: Profile, invoice: &Invoice, parties: &Parties<'_>) -> Result<Self, Refusal> {
        // A final invoice's deposits were invoiced (and are paid) on their own invoices.
        let prepaid = invoice.balance.recorded() + invoice.deposits_deducted();
        let payable = invoice.balance.due();
        let frame = Frame {
            kind: DocumentKind::Invoice,
            number: invoice.number.to_string(),
            payment_reference: Some(invoice.payment_reference.to_string()),
            issue_date: invoice.issue_date.date_naive(),
            due_date: invoice.due_date.map(|due| due.date_naive()),
            note: invoice.description.as_ref().and_then(|text| given(text.as_str())),
            preceding_invoice: None,
            currency: invoice.currency,
            exchange: invoice.exchange,
            tax_rule: invoice.tax_rule,
            vat: &invoice.vat,
            line_items: &invoice.line_items,
            discount: invoice.discount,
            totals: invoice.totals,
            prepaid,
            payable,
            supply: &invoice.supply,
        };
        frame.build(profile, parties)
    }

    /// `note`, which corrects `invoice`, as an e-invoice of `profile` (type 381).
    pub fn of_credit_note(
        profile: Profile,
        note: &CreditNote,
        invoice: &Invoice,
        parties: &Parties<'_>,
    ) -> Result<Self, Refusal> {
        let frame = Frame {
            kind: DocumentKind::CreditNote,
            number: note.number.to_string(),
            payment_reference: None,
            issue_date: note.issue_date.date_naive(),
            due_date: None,
            note: note.reason.as_ref().and_then(|text| given(text.as_str())),
            preceding_invoice: Some((invoice.number.to_string(), invoice.issue_date.date_naive())),
            currency: note.currency,
            exchange: invoice.exchange,
            tax_rule: note.tax_rule,
            vat: &invoice.vat,
            line_items: &note.line_items,
            discount: note.discount,
            totals: note.totals,
            prepaid: Decimal::ZERO,
            payable: note.totals.total,
            // The supply it corrects.
            supply: &invoice.supply,
        };
        frame.build(profile, parties)
    }
}

/// The figures of an invoice or credit note, before the parties are added.
struct Frame<'a> {
    kind: DocumentKind,
    number: String,
    payment_reference: Option<String>,
    issue_date: NaiveDate,
    due_date: Option<NaiveDate>,
    note: Option<String>,
    preceding_invoice: Option<(String, NaiveDate)>,
    currency: Currency,
    exchange: crate::Exchange,
    tax_rule: TaxRule,
    vat: &'a crate::Vat,
    line_items: &'a [LineItem],
    discount: Option<crate::Discount>,
    totals: crate::Totals,
    prepaid: Decimal,
    payable: Decimal,
    supply: &'a crate::Supply,
}

impl Frame<'_> {
    /// An amount written with exactly the currency's decimals (`0.00`, however stored).
    fn minor(&self, amount: Decimal) -> Decimal {
        crate::money::round_to_minor(amount, self.currency)
    }

    fn build(self, profile: Profile, parties: &Parties<'_>) -> Result<EInvoice, Refusal> {
        for currency in [self.currency, self.exchange.team_currency] {
            if currency.minor_unit() > 2 {
                return Err(Refusal::MinorUnitTooFine(currency));
            }
        }
        let tax_currency = match self.exchange.rate {
            Some(_) => Some((
                self.exchange.team_currency.as_str(),
                self.exchange.in_team_currency(self.totals.tax).unwrap_or_default(),
            )),
            None => None,
        };
        let rules = Requirements { profile };
        let groups = self.pricing().breakdown().unwrap_or_default();
        let allowances = self.allowances(&groups);
        let vat = self.vat_breakdown(&rules, groups)?;
        let categories: Vec<VatCategory> = vat.iter().map(|group| group.category).collect();
        let (seller, seller_contact, payee_account) = seller(&rules, parties.sender, &categories)?;
        let buyer = buyer(&rules, parties.client, &categories)?;
        let buyer_reference = rules.needs(
            given(parties.client.details.buyer_reference.as_str()),
            "BT-10",
            Datum::ClientBuyerReference,
        )?;
        // PEPPOL-EN16931-R003: a buyer reference or a purchase order reference.
        if profile == Profile::Peppol && buyer_reference.is_none() && self.supply.purchase_order.is_none() {
            return Err(Refusal::Missing {
                term: "BT-10 or BT-13",
                datum: Datum::BuyerReferenceOrPurchaseOrder,
                profile,
            });
        }
        let lines = self.lines(&rules)?;
        let service_day = match self.supply.service {
            Some(crate::ServiceTime::Date(day)) => Some(day),
            _ => None,
        };
        let delivery = if categories.contains(&VatCategory::IntraCommunity) {
            Some(Delivery {
                date: service_day.unwrap_or(self.issue_date),
                to: Some(DeliveryAddress {
                    city: buyer.city.clone(),
                    postal_code: buyer.postal_code.clone(),
                    country: buyer.country,
                }),
            })
        } else {
            service_day.map(|date| Delivery { date, to: None })
        };
        let invoice_period = match self.supply.service {
            Some(crate::ServiceTime::Period(period)) => Some((period.from(), period.to())),
            _ => None,
        };
        let payment_terms = match (self.kind, self.due_date) {
            (_, Some(_)) => None,
            _ if self.payable <= Decimal::ZERO => None,
            (DocumentKind::Invoice, None) => Some("Payable on receipt.".to_owned()),
            (DocumentKind::CreditNote, None) => self
                .preceding_invoice
                .as_ref()
                .map(|(serial, _)| format!("Credited against invoice {serial}.")),
        };
        let document_discount: Decimal = allowances.iter().map(|a| a.allowance.amount).sum();
        let tax_exclusive = self.minor(self.totals.taxable_amount());
        let totals = Totals {
            lines: self.minor(tax_exclusive + document_discount),
            allowances: (!allowances.is_empty()).then(|| self.minor(document_discount)),
            tax_exclusive,
            tax: self.minor(self.totals.tax),
            tax_inclusive: self.minor(self.totals.total),
            prepaid: self.minor(self.prepaid),
            payable: self.minor(self.payable),
        };
        Ok(EInvoice {
            profile,
            kind: self.kind,
            number: self.number,
            issue_date: self.issue_date,
            due_date: self.due_date,
            payment_terms,
            currency: self.currency.as_str(),
            tax_currency,
            note: self.note,
            buyer_reference,
            purchase_order: self.supply.purchase_order.as_ref().map(|order| order.as_str().to_owned()),
            invoice_period,
            preceding_invoice: self.preceding_invoice,
            seller,
            seller_contact,
            buyer,
            payee_account,
            payment_reference: self.payment_reference,
            delivery,
            vat,
            allowances,
            lines,
            totals,
        })
    }

    fn pricing(&self) -> crate::Pricing<'_> {
        crate::Pricing {
            items: self.line_items,
            vat: self.vat,
            rule: self.tax_rule,
            discount: self.discount,
            currency: self.currency,
        }
    }

    /// The document's discount, on each VAT group that carries a share of it.
    fn allowances(&self, groups: &[crate::VatGroup]) -> Vec<DocumentAllowance> {
        let percentage = match self.discount {
            Some(crate::Discount::Percentage(percentage)) => Some(percentage.normalize()),
            _ => None,
        };
        groups
            .iter()
            .filter(|group| !group.discount.is_zero())
            .map(|group| DocumentAllowance {
                allowance: Allowance {
                    amount: self.minor(group.discount),
                    base_and_percentage: percentage.map(|p| (self.minor(group.lines_amount), p)),
                },
                category: group.rate.category,
                rate: rate_of(group.rate.category, group.rate.percentage),
            })
            .collect()
    }

    /// The breakdown's groups: standard-rated VAT is a percentage greater than 0 (BR-S-05),
    /// which a flat tax does not state; the categories without VAT are at 0 %, but for `O`,
    /// which has no rate.
    fn vat_breakdown(
        &self,
        rules: &Requirements,
        groups: Vec<crate::VatGroup>,
    ) -> Result<Vec<VatBreakdown>, Refusal> {
        groups
            .into_iter()
            .map(|group| {
                let category = group.rate.category;
                if category == VatCategory::Standard && group.rate.percentage.is_zero() {
                    return Err(Refusal::Missing {
                        term: "BT-152",
                        datum: Datum::TaxPercentage,
                        profile: rules.profile,
                    });
                }
                Ok(VatBreakdown {
                    category,
                    rate: rate_of(category, group.rate.percentage),
                    taxable: self.minor(group.taxable_amount),
                    tax: self.minor(group.tax_amount),
                    exemption_reason: group.rate.exemption_reason.map(|reason| reason.as_str().to_owned()),
                })
            })
            .collect()
    }

    fn lines(&self, rules: &Requirements) -> Result<Vec<Line>, Refusal> {
        self.line_items
            .iter()
            .map(|item| {
                let name = rules.always(
                    given(item.description.as_str()),
                    "BT-153",
                    Datum::LineDescription(item.position),
                )?;
                let amount = self.minor(item.amount);
                let allowance = item.discount.map(|discount| Allowance {
                    amount: self.minor(discount.amount),
                    base_and_percentage: discount.percentage.map(|p| (amount, p.normalize())),
                });
                if rules.profile == Profile::XRechnung {
                    let product = item.unit_price * item.quantity;
                    let slack = line_amount_slack(self.currency);
                    if (amount - product).abs() > slack {
                        return Err(Refusal::LineAmountInexact {
                            line: item.position,
                            amount,
                            product: product.normalize(),
                            slack,
                            profile: rules.profile,
                        });
                    }
                }
                let rate = item.vat.resolve(self.vat, self.tax_rule.percentage());
                Ok(Line {
                    category: rate.category,
                    rate: rate_of(rate.category, rate.percentage),
                    id: item.position + 1,
                    name,
                    quantity: item.quantity.normalize(),
                    unit_code: item.unit_code.as_str().to_owned(),
                    net_price: item.unit_price.normalize(),
                    amount: self.minor(item.net_amount()),
                    allowance,
                })
            })
            .collect()
    }
}

/// The rate a category states: its percentage (0 for all but the standard rate), and none
/// outside the scope of VAT.
fn rate_of(category: VatCategory, percentage: Decimal) -> Option<Decimal> {
    (category != VatCategory::OutOfScope).then(|| percentage.normalize())
}

/// Whether the categories name the parties' VAT identifiers: all but `O` (BR-O-02), which
/// shares an invoice with no other (BR-O-11).
fn carries_vat_ids(categories: &[VatCategory]) -> bool {
    categories.iter().any(|category| *category != VatCategory::OutOfScope)
}

fn seller(
    rules: &Requirements,
    sender: &SenderAddress,
    categories: &[VatCategory],
) -> Result<(Party, Option<Contact>, Option<PayeeAccount>), Refusal> {
    let s = &sender.details;
    let country =
        rules.always(s.country_code.map(crate::CountryCode::as_str), "BT-40", Datum::SenderCountryCode)?;
    let vat_id = if carries_vat_ids(categories) {
        // BR-S-02, BR-Z-02, BR-E-02, BR-AE-02, BR-IC-02, BR-G-02.
        Some(rules.always(given(s.vat_number.as_str()), "BT-31", Datum::SenderVatNumber)?)
    } else {
        None
    };
    let contact = Contact {
        name: rules.needs(given(s.contact_name.as_str()), "BT-41", Datum::SenderContactName)?,
        phone: rules.needs(given(s.contact_phone.as_str()), "BT-42", Datum::SenderContactPhone)?,
        email: rules.needs(
            s.contact_email.as_ref().map(|email| email.as_str().to_owned()),
            "BT-43",
            Datum::SenderContactEmail,
        )?,
    };
    let account = rules.needs(s.iban.as_ref(), "BT-84", Datum::SenderIban)?.map(|iban| PayeeAccount {
        iban: iban.as_str().to_owned(),
        bic: s.bic.as_ref().map(|bic| bic.as_str().to_owned()),
    });
    let electronic_address = if rules.profile == Profile::Peppol {
        // PEPPOL-EN16931-R020: the seller's Peppol address.
        Some(ElectronicAddress::peppol(rules.always(s.peppol_id.as_ref(), "BT-34", Datum::SenderPeppolId)?))
    } else {
        s.email.as_ref().or(s.contact_email.as_ref()).map(|email| ElectronicAddress::email(email.as_str()))
    };
    let party = Party {
        name: s.name.as_str().to_owned(),
        street: given(s.line1.as_str()),
        additional_street: given(s.line2.as_str()),
        address_line: given(s.line3.as_str()),
        city: rules.needs(given(s.city.as_str()), "BT-37", Datum::SenderCity)?,
        postal_code: rules.needs(given(s.postal_code.as_str()), "BT-38", Datum::SenderPostalCode)?,
        country,
        vat_id,
        electronic_address,
    };
    let contact =
        (contact.name.is_some() || contact.phone.is_some() || contact.email.is_some()).then_some(contact);
    Ok((party, contact, account))
}

fn buyer(rules: &Requirements, client: &Client, categories: &[VatCategory]) -> Result<Party, Refusal> {
    let c = &client.details;
    let country =
        rules.always(c.country_code.map(crate::CountryCode::as_str), "BT-55", Datum::ClientCountryCode)?;
    // BR-AE-02, BR-IC-02: where the buyer accounts for the VAT, it is named.
    let buyer_accounts = categories
        .iter()
        .any(|category| matches!(category, VatCategory::ReverseCharge | VatCategory::IntraCommunity));
    let vat_id = if buyer_accounts {
        Some(rules.always(given(c.vat_number.as_str()), "BT-48", Datum::ClientVatNumber)?)
    } else if carries_vat_ids(categories) {
        given(c.vat_number.as_str())
    } else {
        None
    };
    Ok(Party {
        name: c.name.as_str().to_owned(),
        street: given(c.line1.as_str()),
        additional_street: given(c.line2.as_str()),
        address_line: given(c.line3.as_str()),
        city: rules.needs(given(c.city.as_str()), "BT-52", Datum::ClientCity)?,
        postal_code: rules.needs(given(c.postal_code.as_str()), "BT-53", Datum::ClientPostalCode)?,
        country,
        vat_id,
        electronic_address: Some(if rules.profile == Profile::Peppol {
            // PEPPOL-EN16931-R010: the buyer's Peppol address.
            ElectronicAddress::peppol(rules.always(c.peppol_id.as_ref(), "BT-49", Datum::ClientPeppolId)?)
        } else {
            ElectronicAddress::email(c.email.as_str())
        }),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use accounts::TeamId;
    use chrono::{TimeZone, Utc};
    use kernel::{Email, Id};

    use super::*;
    use crate::client::{OptionalText, RequiredText};
    use crate::invoice::{ExemptionReason, price_lines};
    use crate::{
        Chasing, ClientDetails, ClientId, InvoiceId, InvoiceStatus, LineInput, SenderDetails, Serial, Vat,
    };

    fn text(value: &str) -> OptionalText {
        OptionalText::parse(value).unwrap()
    }

    /// A German seller and a public buyer in Bonn, as e-invoices (and payment codes) need them.
    pub(crate) fn parties(team: TeamId) -> (Client, SenderAddress) {
        let now = Utc::now();
        let mut sender = SenderDetails::named(RequiredText::parse("Muster GmbH").unwrap());
        sender.city = text("Berlin");
        sender.postal_code = crate::sender::SenderPostalCode::parse("10115").unwrap();
        sender.country_code = Some(crate::CountryCode::parse("DE").unwrap());
        sender.vat_number = text("DE123456789");
        sender.iban = Some(crate::Iban::parse("DE02120300000000202051").unwrap());
        sender.contact_name = text("Erika Mustermann");
        sender.contact_phone = text("+49 30 1234567");
        sender.contact_email = Some(Email::parse("erika@muster.example").unwrap());
        let sender = SenderAddress {
            id: Id::generate(),
            team_id: team,
            details: sender,
            created_at: now,
            updated_at: now,
        };
        let details = ClientDetails {
            language: None,
            peppol_id: None,
            name: RequiredText::parse("Amt").unwrap(),
            email: Email::parse("amt@buyer.example").unwrap(),
            phone: text(""),
            vat_number: text("DE987654321"),
            line1: text("Amtsweg 2"),
            line2: text(""),
            line3: text(""),
            postal_code: crate::client::KeptPostalCode::parse("53113").unwrap(),
            city: text("Bonn"),
            country_code: Some(crate::CountryCode::parse("DE").unwrap()),
            buyer_reference: text("04011000-12345-34"),
            reminders_enabled: true,
            currency: None,
            payment_terms: None,
        };
        (Client::new(team, details, now), sender)
    }

    /// An invoice in EUR of one line, 2 × 120.50, with `paid` paid.
    pub(crate) fn invoice(team: TeamId, vat: Vat, tax_rule: TaxRule, paid: Decimal) -> Invoice {
        let now = Utc.with_ymd_and_hms(2026, 11, 2, 9, 0, 0).unwrap();
        let currency = Currency::parse("EUR").unwrap();
        let input = LineInput {
            discount: None,
            description: crate::invoice::Description::parse("Work").unwrap(),
            unit_price: Decimal::new(12_050, 2),
            quantity: Decimal::from(2),
            amount: None,
            unit_code: None,
            vat: crate::LineVat::default(),
        };
        let line_items = price_lines(vec![input], currency, now).unwrap();
        let totals = crate::Totals::compute(&line_items, &vat, tax_rule, None, currency).unwrap();
        let mut balance = crate::Balance::unpaid(totals.total);
        balance.paid = paid;
        Invoice {
            discount: None,
            id: InvoiceId::generate(),
            team_id: team,
            serial: Serial::FIRST,
            number: crate::Series::Invoices.default_pattern().number(1, now),
            payment_reference: crate::PaymentReference::creditor("INV-0001"),
            description: None,
            issue_date: now,
            due_date: None,
            status: InvoiceStatus::Pending,
            currency,
            tax_rule,
            totals,
            balance,
            client_id: ClientId::generate(),
            sender_id: crate::SenderAddressId::generate(),
            line_items,
            chasing: Chasing::default(),
            recurrence: None,
            vat,
            exchange: crate::Exchange::none(currency),
            supply: crate::Supply::default(),
            from_quote: None,
            created_at: now,
            updated_at: now,
        }
    }

    #[test]
    fn xrechnung_requires_a_buyer_reference_where_en16931_does_without() {
        let team = TeamId::generate();
        let (mut client, sender) = parties(team);
        client.details.buyer_reference = text("");
        let invoice = invoice(team, Vat::default(), TaxRule::Percentage(Decimal::from(19)), Decimal::ZERO);
        let parties = Parties { client: &client, sender: &sender };
        let refused = EInvoice::of_invoice(Profile::XRechnung, &invoice, &parties).unwrap_err();
        assert_eq!(
            refused,
            Refusal::Missing {
                term: "BT-10",
                datum: Datum::ClientBuyerReference,
                profile: Profile::XRechnung
            }
        );
        let plain = EInvoice::of_invoice(Profile::En16931, &invoice, &parties).unwrap();
        assert_eq!((plain.buyer_reference, plain.vat[0].rate), (None, Some(Decimal::from(19))));
        // 241.00 at 19 %: 45.79 tax, nothing paid, so all of 286.79 is due on receipt.
        assert_eq!(plain.totals.payable.to_string(), "286.79");
        assert_eq!(plain.payment_terms.as_deref(), Some("Payable on receipt."));
    }

    #[test]
    fn outside_the_scope_of_vat_names_no_vat_identifiers_and_no_rate() {
        let team = TeamId::generate();
        let (client, sender) = parties(team);
        let reason = ExemptionReason::parse("Not subject to VAT").unwrap();
        let vat = Vat::new(VatCategory::OutOfScope, Some(reason)).unwrap();
        let invoice = invoice(team, vat, TaxRule::Flat(Decimal::ZERO), Decimal::new(4100, 2));
        let parties = Parties { client: &client, sender: &sender };
        let e = EInvoice::of_invoice(Profile::XRechnung, &invoice, &parties).unwrap();
        assert_eq!((e.seller.vat_id, e.buyer.vat_id, e.vat[0].rate), (None, None, None));
        assert_eq!(e.vat[0].exemption_reason.as_deref(), Some("Not subject to VAT"));
        // 241.00 with 41.00 paid: prepaid and payable follow the ledger.
        assert_eq!(
            (e.totals.prepaid.to_string(), e.totals.payable.to_string()),
            ("41.00".into(), "200.00".into())
        );
    }

    #[test]
    fn a_final_invoice_states_its_deposits_as_prepaid() {
        let team = TeamId::generate();
        let (client, sender) = parties(team);
        let parties = Parties { client: &client, sender: &sender };
        let mut last = invoice(team, Vat::default(), TaxRule::Percentage(Decimal::from(19)), Decimal::ZERO);
        let deducted = Decimal::new(5000, 2);
        last.from_quote = Some(crate::quote::FromQuote {
            quote_id: crate::quote::QuoteId::generate(),
            kind: crate::quote::ConversionKind::Final,
            deposit_invoices: vec![InvoiceId::generate()],
            deducted,
        });
        last.balance = crate::ledger::Ledger::new(last.payable(), last.currency).balance();
        let e = EInvoice::of_invoice(Profile::En16931, &last, &parties).unwrap();
        assert_eq!(e.totals.prepaid, Decimal::new(5000, 2));
        assert_eq!(e.totals.payable, e.totals.tax_inclusive - e.totals.prepaid);
        assert!(e.totals.payable > Decimal::ZERO);
    }

    #[test]
    fn a_standard_rate_is_a_percentage_and_amounts_have_two_decimals_at_most() {
        let team = TeamId::generate();
        let (client, sender) = parties(team);
        let parties = Parties { client: &client, sender: &sender };
        let flat = invoice(team, Vat::default(), TaxRule::Flat(Decimal::from(5)), Decimal::ZERO);
        assert_eq!(
            EInvoice::of_invoice(Profile::En16931, &flat, &parties).unwrap_err(),
            Refusal::Missing { term: "BT-152", datum: Datum::TaxPercentage, profile: Profile::En16931 }
        );
        let mut dinars = invoice(team, Vat::default(), TaxRule::Percentage(Decimal::from(5)), Decimal::ZERO);
        dinars.currency = Currency::parse("KWD").unwrap();
        let refused = EInvoice::of_invoice(Profile::En16931, &dinars, &parties).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "EN 16931 allows amounts with at most 2 decimals (its rules BR-DEC-01 to BR-DEC-28); KWD has 3"
        );
    }

    #[test]
    fn an_xrechnung_line_is_its_quantity_times_its_price() {
        let team = TeamId::generate();
        let (client, sender) = parties(team);
        let parties = Parties { client: &client, sender: &sender };
        let yen = Currency::parse("JPY").unwrap();
        let priced = |price: Decimal| {
            let mut invoice =
                invoice(team, Vat::default(), TaxRule::Percentage(Decimal::from(10)), Decimal::ZERO);
            let input = LineInput {
                discount: None,
                description: crate::invoice::Description::parse("Work").unwrap(),
                unit_price: price,
                quantity: Decimal::from(3),
                amount: None,
                unit_code: None,
                vat: crate::LineVat::default(),
            };
            invoice.currency = yen;
            invoice.exchange = crate::Exchange::none(yen);
            invoice.line_items = price_lines(vec![input], yen, invoice.created_at).unwrap();
            invoice
        };
        // 1234.5 × 3 is 3703.5 yen, billed 3704: half a yen from its price, which R120 refuses.
        let fractional = priced(Decimal::new(12_345, 1));
        assert_eq!(
            EInvoice::of_invoice(Profile::XRechnung, &fractional, &parties).unwrap_err(),
            Refusal::LineAmountInexact {
                line: 0,
                amount: Decimal::from(3704),
                product: Decimal::new(37_035, 1),
                slack: Decimal::new(2, 2),
                profile: Profile::XRechnung,
            }
        );
        assert!(
            EInvoice::of_invoice(Profile::En16931, &fractional, &parties).is_ok(),
            "not a rule of EN 16931"
        );
        assert!(EInvoice::of_invoice(Profile::XRechnung, &priced(Decimal::from(1234)), &parties).is_ok());
    }
}
