//! A realistic sample invoice, for the examples, the tests and the benchmark.

use billing::InvoiceDocument;
use billing::document::{DocumentLine, DocumentLogo, Party, SettledLine};
use billing::sender::Logo;

/// The work billed, cycled through: description, quantity in tenths, unit price in cents.
const WORK: [(&str, u64, u64); 8] = [
    ("Discovery workshop and requirements", 10, 180_000),
    ("Interface design, three rounds of revisions with the client's team", 245, 9_500),
    ("Backend development: invoicing, PDF rendering and the time tracking API", 620, 9_500),
    ("Локализация интерфейса на русский язык", 80, 7_500),
    ("Μετάφραση και έλεγχος κειμένων (ελληνικά)", 60, 7_500),
    ("Hosting, November 2026", 10, 4_900),
    ("Support hours", 35, 9_500),
    (
        "Data migration from the previous system, including verification of every record and a written report",
        10,
        240_000,
    ),
];

/// One phrase in each script an invoice must print right, with the script's name: the
/// multilingual sample's work, and what the tests compare with Chromium's rendering.
pub const SCRIPT_SAMPLES: [(&str, &str); 12] = [
    ("Latin with diacritics", "Zoë Łukasiewicz, Ærøskøbing — façade naïve"),
    ("Greek", "Τιμολόγιο για υπηρεσίες λογισμικού"),
    ("Cyrillic", "Счёт за разработку программного обеспечения"),
    ("Hebrew", "חשבונית עבור פיתוח תוכנה"),
    ("Arabic", "فاتورة لتطوير البرمجيات"),
    ("Persian", "صورتحساب برای توسعه نرم‌افزار"),
    ("Devanagari", "सॉफ़्टवेयर विकास के लिए चालान"),
    ("Thai", "ใบแจ้งหนี้สำหรับการพัฒนาซอฟต์แวร์"),
    ("Japanese", "ソフトウェア開発の請求書"),
    ("Chinese", "软件开发发票"),
    ("Korean", "소프트웨어 개발 청구서"),
    ("Hebrew and English with numbers", "חשבונית 2024-17 עבור Backend API בסך 1,250.00 EUR"),
];

/// A realistic invoice of `items` lines: `Billable Studio GmbH` in Berlin bills "Zoë
/// Łukasiewicz — Ёлка ΑΒΓ" in Athens, in EUR with 19 % tax, and says how to pay. The
/// totals add up.
pub fn sample_document(items: usize, paid: bool) -> InvoiceDocument {
    document(items, paid, |i| WORK[i % WORK.len()])
}

/// The sample invoice billed to a Japanese client, its work described in turn in each of
/// [`SCRIPT_SAMPLES`]: Latin, Greek, Cyrillic, Hebrew, Arabic, Persian, Devanagari, Thai,
/// Japanese, Chinese, Korean, and Hebrew mixed with English and numbers.
pub fn multilingual_document(items: usize, paid: bool) -> InvoiceDocument {
    let mut document = document(items, paid, |i| {
        let (_, tenths, unit) = WORK[i % WORK.len()];
        (SCRIPT_SAMPLES[i % SCRIPT_SAMPLES.len()].1, tenths, unit)
    });
    document.client = Party {
        name: "山田商事株式会社".to_owned(),
        address: vec!["東京都千代田区丸の内1-1-1".to_owned(), "100-0005 東京".to_owned(), "Japan".to_owned()],
        email: Some("keiri@yamada-shoji.example".to_owned()),
        vat_number: Some("T1234567890123".to_owned()),
    };
    let logo = Logo::parse(SAMPLE_LOGO.as_bytes().to_vec()).ok();
    document.logo = logo.as_ref().map(DocumentLogo::of);
    document.description = Some(
        "Work of November 2026 · 2026年11月分のご請求 · חשבון לחודש נובמבר · فاتورة شهر نوفمبر".to_owned(),
    );
    document
}

/// The sample sender's logo: a mark and the studio's name, outlined, as logos are drawn.
const SAMPLE_LOGO: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" width="240" height="64" viewBox="0 0 240 64">
  <rect x="2" y="8" width="48" height="48" rx="12" fill="#0f766e"/>
  <path d="M14 44 L26 20 L38 44 Z" fill="#ffffff"/>
  <rect x="62" y="18" width="150" height="10" rx="5" fill="#134e4a"/>
  <rect x="62" y="36" width="104" height="10" rx="5" fill="#5eead4"/>
</svg>"##;

fn document(items: usize, paid: bool, work: impl Fn(usize) -> (&'static str, u64, u64)) -> InvoiceDocument {
    let mut subtotal = 0;
    let lines = (0..items)
        .map(|i| {
            let (description, tenths, unit) = work(i);
            let amount = tenths * unit / 10;
            subtotal += amount;
            DocumentLine {
                description: description.to_owned(),
                quantity: quantity(tenths),
                unit_price: euros(unit),
                amount: euros(amount),
                vat_rate: None,
            }
        })
        .collect();
    // 19 %, rounded half up to the cent.
    let tax = (subtotal * 19 + 50) / 100;
    InvoiceDocument {
        payment_qr: None,
        discounts: Vec::new(),
        title: None,
        quote: false,
        corrects: None,
        serial: "INV-0042".to_owned(),
        status: if paid { "PAID" } else { "SENT" }.to_owned(),
        paid,
        issue_date: "2026-11-20".to_owned(),
        due_date: Some("2026-12-04".to_owned()),
        supply: vec![
            SettledLine { label: "Service period".to_owned(), value: "2026-11-01 to 2026-11-30".to_owned() },
            SettledLine { label: "Purchase order".to_owned(), value: "PO-4711".to_owned() },
        ],
        description: Some(
            "Work of November 2026 on the customer portal, as agreed in the statement of work of 2026-10-01."
                .to_owned(),
        ),
        sender: Party {
            name: "Billable Studio GmbH".to_owned(),
            address: vec!["Friedrichstraße 123".to_owned(), "10117 Berlin".to_owned(), "Germany".to_owned()],
            email: Some("billing@billable.example".to_owned()),
            vat_number: Some("DE312456789".to_owned()),
        },
        client: Party {
            name: "Zoë Łukasiewicz — Ёлка ΑΒΓ".to_owned(),
            address: vec!["Οδός Ερμού 15".to_owned(), "105 63 Αθήνα".to_owned(), "Greece".to_owned()],
            email: Some("zoe@yolka.example".to_owned()),
            vat_number: Some("EL094259216".to_owned()),
        },
        lines,
        subtotal: euros(subtotal),
        tax_label: "Tax (19%)".to_owned(),
        tax: euros(tax),
        total: euros(subtotal + tax),
        settlement: Vec::new(),
        payment_details: Some(
            "Berliner Sparkasse · IBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX\n\
             Payable within 14 days of the issue date; please quote INV-0042."
                .to_owned(),
        ),
        logo: None,
        facturx_xml: None,
        vat_breakdown: Vec::new(),
        language: None,
    }
}

/// An EPC QR code of the sample invoice, as billing makes it.
pub fn sample_epc_code() -> billing::document::DocumentQr {
    billing::document::DocumentQr {
        format: "epc".to_owned(),
        payload: "QkNECjAwMgoyClNDVApCWUxBREVNMTAwMQpCaWxsYWJsZSBTdHVkaW8gR21iSApERTAyMTIwMzAwMDAwMDAwMjAyMDUxCkVVUjE2NDgwLjMxCgpSRjQwSU5WMDAwMQ==".to_owned(),
        caption: "Scan with your banking app to pay".to_owned(),
        slip: None,
    }
}

/// The Swiss QR-bill of the sample invoice, to a QR-IBAN, as billing makes it.
pub fn sample_swiss_bill() -> billing::document::DocumentQr {
    let labels = billing::document::SlipLabels {
        receipt: "Receipt".to_owned(),
        payment_part: "Payment part".to_owned(),
        account_payable_to: "Account / Payable to".to_owned(),
        reference: "Reference".to_owned(),
        additional_information: "Additional information".to_owned(),
        payable_by: "Payable by".to_owned(),
        payable_by_name_address: "Payable by (name/address)".to_owned(),
        currency: "Currency".to_owned(),
        amount: "Amount".to_owned(),
        acceptance_point: "Acceptance point".to_owned(),
        separate: "Separate before paying in".to_owned(),
    };
    billing::document::DocumentQr {
        format: "swiss".to_owned(),
        payload: "U1BDDQowMjAwDQoxDQpDSDQ0MzE5OTkxMjMwMDA4ODkwMTINClMNCkJpbGxhYmxlIFN0dWRpbyBBRw0KQmFobmhvZnN0cmFzc2UgMQ0KDQo4MDAxDQpaw7xyaWNoDQpDSA0KDQoNCg0KDQoNCg0KDQoxNjQ4MC4zMQ0KQ0hGDQpTDQpQaWEgUnV0c2NobWFubg0KTWFya3RnYXNzZSAyOA0KDQo5NDAwDQpSb3JzY2hhY2gNCkNIDQpRUlINCjk5OTk5OTk5OTk5OTE4MjMzMTAwMDAwMDAxMQ0KSU5WLTAwMDENCkVQRA==".to_owned(),
        caption: "Scan with your banking app to pay".to_owned(),
        slip: Some(billing::document::SwissSlipText {
            labels,
            account: ["CH44 3199 9123 0008 8901 2", "Billable Studio AG", "Bahnhofstrasse 1", "8001 Zürich"]
                .map(str::to_owned)
                .to_vec(),
            reference: Some("99 99999 99999 91823 31000 00001 1".to_owned()),
            information: "INV-0001".to_owned(),
            debtor: ["Pia Rutschmann", "Marktgasse 28", "9400 Rorschach"].map(str::to_owned).to_vec(),
            currency: "CHF".to_owned(),
            amount: Some("16 480.31".to_owned()),
        }),
    }
}

fn quantity(tenths: u64) -> String {
    if tenths.is_multiple_of(10) {
        (tenths / 10).to_string()
    } else {
        format!("{}.{}", tenths / 10, tenths % 10)
    }
}

/// `1,234.50 EUR`, as billing formats money.
fn euros(cents: u64) -> String {
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{grouped}.{:02} EUR", cents % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_reads_as_billing_writes_it() {
        assert_eq!(euros(0), "0.00 EUR");
        assert_eq!(euros(123_456_789), "1,234,567.89 EUR");
        assert_eq!(quantity(245), "24.5");
        assert_eq!(quantity(10), "1");
    }

    #[test]
    fn the_totals_add_up() {
        let document = sample_document(8, true);
        assert_eq!(document.subtotal, "13,849.00 EUR");
        assert_eq!(document.tax, "2,631.31 EUR");
        assert_eq!(document.total, "16,480.31 EUR");
    }
}
