//! Invoices and credit notes as structured e-invoices: [`billing::einvoice::EInvoice`] (the
//! EN 16931 model, which `billing` fills and checks) written as XML in the syntax of a
//! [`Format`]. Nothing here decides what an invoice says; it only spells it.

mod cii;
mod ubl;
mod xml;

use billing::einvoice::{EInvoice, Format};

/// The XML writer of every [`Format`]: UBL for XRechnung in UBL and Peppol BIS, CII for the
/// others.
#[derive(Debug, Clone, Copy, Default)]
pub struct Xml;

impl billing::einvoice::XmlWriter for Xml {
    fn write(&self, format: Format, invoice: &EInvoice) -> String {
        write(format, invoice)
    }
}

/// `invoice`, which [`billing::einvoice`] made for `format`'s profile, as XML.
pub fn write(format: Format, invoice: &EInvoice) -> String {
    match format {
        Format::XRechnungUbl | Format::PeppolBis => ubl::write(invoice),
        Format::XRechnungCii | Format::FacturX => cii::write(invoice),
    }
}
