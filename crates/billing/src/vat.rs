//! VAT: an invoice's category and exemption reason, the VAT a line states for itself, and
//! the breakdown per category and rate (EN 16931 BG-23) whose sum is the invoice's tax.

use rust_decimal::Decimal;

/// The VAT category of an invoice (EN 16931 BT-151, UNTDID 5305): what its tax is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum VatCategory {
    /// Standard rate (the invoice's tax percentage, or flat tax).
    #[default]
    Standard,
    /// Zero rated goods.
    ZeroRated,
    /// Exempt from VAT.
    Exempt,
    /// VAT reverse charge: the buyer accounts for it.
    ReverseCharge,
    /// Intra-community supply within the EU.
    IntraCommunity,
    /// Export outside the EU.
    Export,
    /// Outside the scope of VAT.
    OutOfScope,
}

kernel::words!(VatCategory {
    Standard => "S",
    ZeroRated => "Z",
    Exempt => "E",
    ReverseCharge => "AE",
    IntraCommunity => "K",
    Export => "G",
    OutOfScope => "O",
});

/// Why an invoice carries no VAT (EN 16931 BT-120): 1 to 1000 characters.
pub type ExemptionReason = kernel::Text<1, 1000>;

/// An invoice's VAT category, and the exemption reason the categories without VAT need.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vat {
    category: VatCategory,
    exemption_reason: Option<ExemptionReason>,
}

impl Vat {
    /// A reason exactly where the category needs one: exempt, reverse charge,
    /// intra-community, export and out of scope.
    pub fn new(category: VatCategory, exemption_reason: Option<ExemptionReason>) -> Result<Self, VatRule> {
        match (category.needs_reason(), exemption_reason.is_some()) {
            (true, false) => Err(VatRule::ReasonNeeded(category)),
            (false, true) => Err(VatRule::ReasonNotTaken(category)),
            _ => Ok(Self { category, exemption_reason }),
        }
    }

    pub fn category(&self) -> VatCategory {
        self.category
    }

    pub fn exemption_reason(&self) -> Option<&ExemptionReason> {
        self.exemption_reason.as_ref()
    }
}

impl VatCategory {
    /// Whether the category charges VAT: only the standard rate does (BR-Z-05, BR-E-05,
    /// BR-AE-05, BR-IC-05, BR-G-05, BR-O-05 hold the others at 0).
    pub fn charges_vat(self) -> bool {
        self == Self::Standard
    }

    /// Whether a document of this category says why it charges no VAT: all but the
    /// standard and zero rates.
    pub fn needs_reason(self) -> bool {
        !matches!(self, Self::Standard | Self::ZeroRated)
    }
}

/// What a line states of its VAT. Each part it leaves out is the invoice's, as
/// [`LineVat::resolve`] says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineVat {
    pub category: Option<VatCategory>,
    pub percentage: Option<Decimal>,
    pub exemption_reason: Option<ExemptionReason>,
}

impl LineVat {
    /// The line states nothing: it is taxed as its invoice is.
    pub fn invoices() -> Self {
        Self::default()
    }

    /// The rate of a line on an invoice of `vat` and `rule`: the stated category, or the
    /// invoice's; the stated percentage, or the invoice's where the category is the
    /// invoice's (0 otherwise, as every category but the standard rate charges 0 %); the
    /// stated reason, or the invoice's where the category is the invoice's.
    /// `percentage` is the invoice's (0 for a flat tax).
    pub fn resolve(&self, vat: &Vat, percentage: Decimal) -> VatRate {
        let category = self.category.unwrap_or(vat.category);
        let invoices = category == vat.category;
        let percentage = self.percentage.unwrap_or(if invoices { percentage } else { Decimal::ZERO });
        let exemption_reason = self
            .exemption_reason
            .clone()
            .or_else(|| if invoices { vat.exemption_reason.clone() } else { None });
        VatRate { category, percentage: percentage.normalize(), exemption_reason }
    }
}

/// What a line or a group of the breakdown is taxed at: a category, a percentage and the
/// reason a category without VAT gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VatRate {
    pub category: VatCategory,
    /// Normalised (`7`, `5.5`), so equal rates group together.
    pub percentage: Decimal,
    pub exemption_reason: Option<ExemptionReason>,
}

impl VatRate {
    /// The invoice's own rate: what a line that states nothing is taxed at.
    pub fn of_invoice(vat: &Vat, percentage: Decimal) -> Self {
        LineVat::invoices().resolve(vat, percentage)
    }

    /// The rules a category sets for itself: a reason exactly where it needs one; the
    /// standard rate above 0 % (BR-S-05), every other category at 0 %.
    pub fn check(&self) -> Result<(), VatRule> {
        match (self.category.needs_reason(), self.exemption_reason.is_some()) {
            (true, false) => return Err(VatRule::ReasonNeeded(self.category)),
            (false, true) => return Err(VatRule::ReasonNotTaken(self.category)),
            _ => {}
        }
        match (self.category.charges_vat(), self.percentage.is_zero()) {
            (true, true) => Err(VatRule::StandardRateZero),
            (false, false) => Err(VatRule::RateOutsideStandard(self.category)),
            _ => Ok(()),
        }
    }
}

/// A rule of EN 16931 that a document's or a line's VAT broke (`InvoiceRule::LineVat` names
/// the line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VatRule {
    #[error("VAT category {} needs the reason for the exemption", .0.as_str())]
    ReasonNeeded(VatCategory),
    #[error("VAT category {} takes no exemption reason", .0.as_str())]
    ReasonNotTaken(VatCategory),
    #[error("the standard rate (S) is above 0 %; a line without VAT is zero-rated (Z) or exempt (E)")]
    StandardRateZero,
    #[error("VAT category {} charges no VAT: its rate is 0", .0.as_str())]
    RateOutsideStandard(VatCategory),
    /// BR-O-11: an invoice outside the scope of VAT has no other group.
    #[error("VAT category O (outside the scope of VAT) shares no invoice with other categories")]
    OutOfScopeMixed,
    /// BR-AE-02, BR-IC-02: the buyer accounts for the VAT, so it is named.
    #[error("VAT category {} names the buyer's VAT number, and the client has none", .0.as_str())]
    BuyerVatNumberNeeded(VatCategory),
    /// BR-IC-02.
    #[error("VAT category K names the seller's VAT number, and the sender address has none")]
    SellerVatNumberNeeded,
    /// BR-IC-12: the country delivered to, which billable takes from the client's address.
    #[error("VAT category K states the country delivered to (the client's), and the client has none")]
    DeliveryCountryNeeded,
}

/// One group of the VAT breakdown (EN 16931 BG-23): the lines of one category, percentage
/// and reason, their sum, and its tax rounded once (BR-CO-17).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VatGroup {
    pub rate: VatRate,
    /// Σ the group's line net amounts, at the minor unit: what the document's discount is
    /// allocated by.
    pub lines_amount: Decimal,
    /// The share of the document's discount it carries (a BG-20 allowance), at the minor
    /// unit; 0 without one.
    pub discount: Decimal,
    /// `lines_amount − discount` (BT-116).
    pub taxable_amount: Decimal,
    /// `taxable_amount × percentage / 100` at the minor unit, or the invoice's flat tax
    /// (BT-117).
    pub tax_amount: Decimal,
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use proptest::prelude::*;

    use super::*;
    use crate::invoice::{
        Description, InvoiceRule, LineInput, TaxRule, Totals, breakdown, check_parties, names_parties,
        price_lines,
    };
    use crate::money::Currency;
    use crate::money::parse_decimal;
    use crate::{ClientDetails, SenderDetails};

    fn dec(text: &str) -> Decimal {
        parse_decimal(text).unwrap()
    }

    fn reason(text: &str) -> ExemptionReason {
        ExemptionReason::parse(text).unwrap()
    }

    fn line(price: &str, vat: LineVat) -> LineInput {
        LineInput {
            discount: None,
            description: Description::parse("Work").unwrap(),
            unit_price: dec(price),
            quantity: Decimal::ONE,
            amount: None,
            unit_code: None,
            vat,
        }
    }

    fn at(category: VatCategory, percentage: &str, why: Option<&str>) -> LineVat {
        LineVat {
            category: Some(category),
            percentage: Some(dec(percentage)),
            exemption_reason: why.map(reason),
        }
    }

    fn groups_of(lines: Vec<LineInput>, rule: TaxRule) -> Result<Vec<VatGroup>, InvoiceRule> {
        let eur = Currency::parse("EUR").unwrap();
        let items = price_lines(lines, eur, Utc::now()).unwrap();
        breakdown(&items, &Vat::default(), rule, None, eur)
    }

    #[test]
    fn a_book_and_a_workshop_are_taxed_at_their_own_rates_each_rounded_once() {
        let book = line("19.99", at(VatCategory::Standard, "7", None));
        let workshop = line("100.01", LineVat::invoices());
        let second_book = line("0.05", at(VatCategory::Standard, "7.0", None));
        let groups = groups_of(vec![book, workshop, second_book], TaxRule::Percentage(dec("19"))).unwrap();
        let figures: Vec<_> = groups
            .iter()
            .map(|g| (g.rate.percentage.to_string(), g.taxable_amount.to_string(), g.tax_amount.to_string()))
            .collect();
        // 20.04 × 7 % = 1.4028 → 1.40 (the lines alone would round to 1.40 + 0.00); 100.01 × 19 % = 19.0019.
        assert_eq!(
            figures,
            [("7".into(), "20.04".into(), "1.40".into()), ("19".into(), "100.01".into(), "19.00".into())]
        );
    }

    #[test]
    fn lines_that_state_the_invoices_own_rate_keep_the_flat_tax() {
        let same = line("80", at(VatCategory::Standard, "0", None));
        let groups = groups_of(vec![same], TaxRule::Flat(dec("12.345"))).unwrap();
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].tax_amount, dec("12.35"));
        let own = line("80", at(VatCategory::Standard, "19", None));
        assert_eq!(groups_of(vec![own], TaxRule::Flat(dec("5"))), Err(InvoiceRule::FlatTaxWithLineRates));
    }

    #[test]
    fn each_category_holds_its_own_rules_naming_the_line() {
        let rule = TaxRule::Percentage(dec("19"));
        let cases = [
            (at(VatCategory::Exempt, "0", None), VatRule::ReasonNeeded(VatCategory::Exempt)),
            (at(VatCategory::ZeroRated, "0", Some("why")), VatRule::ReasonNotTaken(VatCategory::ZeroRated)),
            (at(VatCategory::Standard, "0", None), VatRule::StandardRateZero),
            (
                at(VatCategory::Exempt, "7", Some("Art. 132")),
                VatRule::RateOutsideStandard(VatCategory::Exempt),
            ),
            (at(VatCategory::OutOfScope, "0", Some("Not subject")), VatRule::OutOfScopeMixed),
        ];
        for (vat, broken) in cases {
            let lines = vec![line("1", LineVat::invoices()), line("2", vat.clone())];
            assert_eq!(
                groups_of(lines, rule),
                Err(InvoiceRule::LineVat { line: 1, rule: broken }),
                "{vat:?}"
            );
        }
        // A zero-rated line leaves out its rate: 0, not the invoice's 19.
        let zero = LineVat { category: Some(VatCategory::ZeroRated), ..LineVat::invoices() };
        let groups = groups_of(vec![line("1", LineVat::invoices()), line("2", zero)], rule).unwrap();
        assert_eq!(groups[1].rate.percentage, Decimal::ZERO);
        assert_eq!(groups[1].tax_amount, Decimal::ZERO);
    }

    #[test]
    fn reverse_charge_and_intra_community_lines_name_the_parties() {
        let eur = Currency::parse("EUR").unwrap();
        let rule = TaxRule::Percentage(dec("19"));
        let items = price_lines(
            vec![
                line("1", LineVat::invoices()),
                line("2", at(VatCategory::IntraCommunity, "0", Some("Art. 138"))),
            ],
            eur,
            Utc::now(),
        )
        .unwrap();
        let text = |value: &str| crate::client::OptionalText::parse(value).unwrap();
        let mut client = ClientDetails {
            language: None,
            peppol_id: None,
            name: crate::client::RequiredText::parse("Client").unwrap(),
            email: kernel::Email::parse("client@example.com").unwrap(),
            phone: text(""),
            vat_number: text(""),
            line1: text(""),
            line2: text(""),
            line3: text(""),
            postal_code: crate::client::KeptPostalCode::parse(String::new()).unwrap(),
            city: text(""),
            country_code: None,
            buyer_reference: text(""),
            reminders_enabled: true,
            currency: None,
            payment_terms: None,
        };
        let mut sender = SenderDetails::named(crate::client::RequiredText::parse("Team").unwrap());
        let refused = |client: &ClientDetails, sender: &SenderDetails| {
            check_parties(&items, &Vat::default(), rule, client, sender).err()
        };
        let named = |rule| Some(InvoiceRule::LineVat { line: 1, rule });
        assert!(names_parties(&items, &Vat::default(), rule));
        assert_eq!(
            refused(&client, &sender),
            named(VatRule::BuyerVatNumberNeeded(VatCategory::IntraCommunity))
        );
        client.vat_number = text("FR123");
        assert_eq!(refused(&client, &sender), named(VatRule::SellerVatNumberNeeded));
        sender.vat_number = text("DE123");
        assert_eq!(refused(&client, &sender), named(VatRule::DeliveryCountryNeeded));
        client.country_code = Some(crate::CountryCode::parse("FR").unwrap());
        assert_eq!(refused(&client, &sender), None);
    }

    /// Half away from zero, as the money module rounds, in integers.
    fn round_half_away(numerator: i128, denominator: i128) -> i128 {
        let (quotient, remainder) = (numerator / denominator, numerator % denominator);
        quotient + i128::from(remainder * 2 >= denominator)
    }

    proptest! {
        /// The breakdown against a model in integer minor units: lines grouped by
        /// (category, rate), each group's tax rounded once, the tax their sum.
        #[test]
        fn the_breakdown_agrees_with_a_model_in_minor_units(
            lines in prop::collection::vec((1_i64..5_000_000, 1_u32..6, 0_usize..7), 1..60),
            code in prop::sample::select(vec!["JPY", "EUR", "KWD"]),
        ) {
            // (category, rate in basis points of a percent, reason)
            let rates = [
                (VatCategory::Standard, 1_900_i128, None),
                (VatCategory::Standard, 700, None),
                (VatCategory::Standard, 550, None),
                (VatCategory::Standard, 2_000, None),
                (VatCategory::ZeroRated, 0, None),
                (VatCategory::Exempt, 0, Some("Art. 132")),
                (VatCategory::ReverseCharge, 0, Some("Reverse charge")),
            ];
            let currency = Currency::parse(code).unwrap();
            let minor = currency.minor_unit();
            let inputs = lines.iter().map(|&(units, quantity, which)| {
                let (category, basis_points, why) = rates[which];
                LineInput {
                    discount: None,
                    description: Description::parse("x").unwrap(),
                    unit_price: Decimal::new(units, minor),
                    quantity: Decimal::from(quantity),
                    amount: None,
                    unit_code: None,
                    vat: LineVat {
                        category: Some(category),
                        percentage: Some(Decimal::new(i64::try_from(basis_points).unwrap(), 2)),
                        exemption_reason: why.map(reason),
                    },
                }
            }).collect();
            let items = price_lines(inputs, currency, Utc::now()).unwrap();
            let invoice = Vat::default();
            let rule = TaxRule::Percentage(dec("19"));
            let groups = breakdown(&items, &invoice, rule, None, currency).unwrap();
            let totals = Totals::compute(&items, &invoice, rule, None, currency).unwrap();

            let mut model: Vec<(usize, i128)> = Vec::new();
            for &(units, quantity, which) in &lines {
                let amount = i128::from(units) * i128::from(quantity);
                match model.iter_mut().find(|(rate, _)| *rate == which) {
                    Some((_, sum)) => *sum += amount,
                    None => model.push((which, amount)),
                }
            }
            // 19 % and its own rate group together only when the invoice's (S, 19) is stated.
            prop_assert_eq!(groups.len(), model.len());
            let scale = Decimal::new(1, minor);
            let mut tax_units = 0_i128;
            for (group, (which, sum)) in groups.iter().zip(&model) {
                let (category, basis_points, _) = rates[*which];
                let tax = round_half_away(sum * basis_points, 10_000);
                tax_units += tax;
                prop_assert_eq!(group.rate.category, category);
                prop_assert_eq!(group.taxable_amount, Decimal::from_i128_with_scale(*sum, 0) * scale);
                prop_assert_eq!(group.tax_amount, Decimal::from_i128_with_scale(tax, 0) * scale);
            }
            prop_assert_eq!(totals.tax, Decimal::from_i128_with_scale(tax_units, 0) * scale);
            prop_assert_eq!(totals.total, totals.subtotal + totals.tax);
            prop_assert_eq!(totals.subtotal, groups.iter().map(|g| g.taxable_amount).sum::<Decimal>());
        }
    }
}
