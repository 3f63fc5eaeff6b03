//! Invoices and credit notes as structured e-invoices: [`billing::einvoice::EInvoice`] (the
//! EN 16931 model, which `billing` fills and checks) written as XML in the syntax of a
//! [`Format`]. Nothing here decides what an invoice says; it only spells it.

mod cii;
mod ubl;
mod xml;

use billing::einvoice::{EInvoice, Profile};

/// The e-invoices billable writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// XRechnung 3.0 in OASIS UBL 2.1.
    XRechnungUbl,
    /// XRechnung 3.0 in UN/CEFACT CII D16B.
    XRechnungCii,
    /// The CII of Factur-X / ZUGFeRD's EN 16931 profile (`factur-x.xml`).
    FacturX,
}

impl Format {
    pub const ALL: [Self; 3] = [Self::XRechnungUbl, Self::XRechnungCii, Self::FacturX];

    /// The format's name: `xrechnung-ubl`, `xrechnung-cii`, `facturx`.
    pub fn name(self) -> &'static str {
        match self {
            Self::XRechnungUbl => "xrechnung-ubl",
            Self::XRechnungCii => "xrechnung-cii",
            Self::FacturX => "facturx",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|format| format.name() == name)
    }

    /// The rules the format's documents follow.
    pub fn profile(self) -> Profile {
        match self {
            Self::XRechnungUbl | Self::XRechnungCii => Profile::XRechnung,
            Self::FacturX => Profile::En16931,
        }
    }

    /// `invoice`, which [`billing::einvoice`] made for [`Format::profile`], as XML.
    pub fn write(self, invoice: &EInvoice) -> String {
        match self {
            Self::XRechnungUbl => ubl::write(invoice),
            Self::XRechnungCii | Self::FacturX => cii::write(invoice),
        }
    }
}
