//! Bank statements through the real server: a camt.053 that the ISO 20022 schema accepts
//! (checked with `xmlschema` from the Python package index) settles the invoices it should,
//! suggests what it may only guess, keeps its debit, and changes nothing when imported
//! again; an MT940 file reads as a second reader (`mt-940`, from the same index) reads it;
//! an unbalanced or hostile file is refused whole.

use acceptance::{TestApp, create_key, create_user, spawn_app};
use accounts::{Role, Scope};
use reqwest::Method;
use serde_json::{Value, json};

use super::error_of;

const IBAN: &str = "DE44500105175407324931";

pub(super) async fn invoice(app: &TestApp, client: &str, total: &str) -> Value {
    let body = json!({"clientId": client, "issueDate": "2026-11-01", "dueDate": "2026-12-01",
        "lineItems": [{"description": "Work", "unitPrice": serde_json::from_str::<Value>(total).unwrap(), "quantity": 1}]});
    let response = app.request(Method::POST, "/v1/invoices", &app.key).json(&body).send().await.unwrap();
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

pub(super) async fn import(
    app: &TestApp,
    key: &str,
    format: &str,
    media: &str,
    body: &str,
) -> reqwest::Response {
    app.request(Method::POST, &format!("/v1/bank-statements?format={format}"), key)
        .header("content-type", media)
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
}

/// A camt.053.001.02 entry crediting (or, negative, debiting) `amount` on 2026-11-20.
fn entry(amount: &str, name: &str, reference: Option<&str>, text: &str, bank_reference: &str) -> String {
    entry_on("2026-11-20", amount, name, reference, text, bank_reference)
}

/// A camt.053.001.02 entry crediting (or, negative, debiting) `amount` on `day`.
pub(super) fn entry_on(
    day: &str,
    amount: &str,
    name: &str,
    reference: Option<&str>,
    text: &str,
    bank_reference: &str,
) -> String {
    let (indicator, amount) = match amount.strip_prefix('-') {
        Some(debit) => ("DBIT", debit),
        None => ("CRDT", amount),
    };
    let party = if indicator == "CRDT" {
        format!(
            "<Dbtr><Nm>{name}</Nm></Dbtr><DbtrAcct><Id><IBAN>DE02120300000000202051</IBAN></Id></DbtrAcct>"
        )
    } else {
        format!("<Cdtr><Nm>{name}</Nm></Cdtr>")
    };
    let remittance = match reference {
        Some(reference) => format!(
            "<Strd><CdtrRefInf><Tp><CdOrPrtry><Cd>SCOR</Cd></CdOrPrtry></Tp><Ref>{reference}</Ref></CdtrRefInf></Strd>"
        ),
        None => format!("<Ustrd>{text}</Ustrd>"),
    };
    format!(
        "<Ntry><Amt Ccy=\"EUR\">{amount}</Amt><CdtDbtInd>{indicator}</CdtDbtInd><Sts>BOOK</Sts>\
         <BookgDt><Dt>{day}</Dt></BookgDt><ValDt><Dt>{day}</Dt></ValDt>\
         <AcctSvcrRef>{bank_reference}</AcctSvcrRef>\
         <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>\
         <NtryDtls><TxDtls><RltdPties>{party}</RltdPties><RmtInf>{remittance}</RmtInf></TxDtls></NtryDtls></Ntry>"
    )
}

/// A camt.053.001.02 statement of `entries` on 2026-11-20, from `opening` to `closing`.
fn camt053(opening: &str, closing: &str, entries: &[String]) -> String {
    camt053_of(("2026-11-20", "2026-11-20"), opening, closing, entries)
}

/// A camt.053.001.02 statement of `entries` over the days `from` to `to`, from `opening` to
/// `closing`.
pub(super) fn camt053_of(
    (from, to): (&str, &str),
    opening: &str,
    closing: &str,
    entries: &[String],
) -> String {
    let balance = |code: &str, amount: &str, day: &str| {
        let (indicator, amount) = match amount.strip_prefix('-') {
            Some(owed) => ("DBIT", owed),
            None => ("CRDT", amount),
        };
        format!(
            "<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{amount}</Amt>\
             <CdtDbtInd>{indicator}</CdtDbtInd><Dt><Dt>{day}</Dt></Dt></Bal>"
        )
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\"><BkToCstmrStmt>\
         <GrpHdr><MsgId>M-{to}</MsgId><CreDtTm>{to}T23:00:00</CreDtTm></GrpHdr>\
         <Stmt><Id>S-{to}</Id><CreDtTm>{to}T23:00:00</CreDtTm>\
         <FrToDt><FrDtTm>{from}T00:00:00</FrDtTm><ToDtTm>{to}T23:59:59</ToDtTm></FrToDt>\
         <Acct><Id><IBAN>{IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>{}{}{}</Stmt></BkToCstmrStmt></Document>",
        balance("OPBD", opening, from),
        balance("CLBD", closing, to),
        entries.concat()
    )
}

/// `text` in a file of its own, for a reader outside the test to read.
fn scratch(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("billable-{}-{name}", uuid::Uuid::new_v4()));
    std::fs::write(&path, text).unwrap();
    path
}

/// Whether the ISO 20022 schema (vendored in tests/banking/) accepts `xml`, as the Python package index's
/// `xmlschema` decides.
pub(super) fn valid_camt053(xml: &str) -> Result<(), String> {
    let file = scratch("statement.xml", xml);
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/banking/camt.053.001.02.xsd");
    let output = std::process::Command::new("python3")
        .args(["-c", "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])", schema])
        .arg(&file)
        .output()
        .expect("python3 with xmlschema (tests/banking/requirements.txt)");
    if output.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&output.stderr).into_owned()) }
}

async fn invoice_now(app: &TestApp, invoice: &Value) -> Value {
    app.get_json(&format!("/v1/invoices/{}", invoice["id"].as_str().unwrap())).await
}

async fn transactions(app: &TestApp, status: &str) -> Vec<Value> {
    app.get_json(&format!("/v1/bank-transactions?status={status}")).await.as_array().unwrap().clone()
}

#[tokio::test]
async fn a_statement_settles_what_it_pays_suggests_what_it_guesses_and_comes_once() {
    let app = spawn_app().await;
    let muller = app.create_client(&app.key, "Müller GmbH").await;
    let zoe = app.create_client(&app.key, "Zoë Łukasiewicz").await;
    let acme = app.create_client(&app.key, "Acme Corp").await;
    let by_reference = invoice(&app, muller["id"].as_str().unwrap(), "119.00").await;
    let by_serial = invoice(&app, zoe["id"].as_str().unwrap(), "238.00").await;
    let guessed = invoice(&app, acme["id"].as_str().unwrap(), "595.00").await;
    let reference = by_reference["paymentReference"].as_str().unwrap();
    let serial = by_serial["serial"].as_str().unwrap();
    let entries = [
        entry("119.00", "Müller GmbH", Some(reference), "", "B-0001"),
        entry("100.00", "Zoë Łukasiewicz", None, &format!("Rechnung {serial}, danke"), "B-0002"),
        entry("595.00", "ACME Corp.", None, "November", "B-0003"),
        entry("-28.50", "Hosting AG", None, "Server November", "B-0004"),
    ];
    let statement = camt053("1000.00", "1785.50", &entries);
    valid_camt053(&statement).unwrap();

    let response = import(&app, &app.key, "camt.053", "application/xml", &statement).await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let imported: Value = response.json().await.unwrap();
    assert_eq!(
        [&imported["entries"], &imported["duplicates"], &imported["matched"], &imported["suggested"]],
        [&json!(4), &json!(0), &json!(2), &json!(1)],
        "{imported}"
    );
    assert_eq!(
        (imported["account"].as_str(), imported["closingBalance"].to_string()),
        (Some(IBAN), "1785.50".into())
    );
    assert_eq!(app.get_json(&location).await["id"], imported["id"]);

    let paid = invoice_now(&app, &by_reference).await;
    assert_eq!((paid["status"].as_str(), paid["amountDue"].to_string()), (Some("PAID"), "0.00".into()));
    let part = invoice_now(&app, &by_serial).await;
    assert_eq!(
        (part["status"].as_str(), part["amountDue"].to_string()),
        (Some("PAID_PARTIAL"), "138.00".into())
    );
    assert_eq!(invoice_now(&app, &guessed).await["status"], "PENDING", "a guess books nothing");
    let payments =
        app.get_json(&format!("/v1/payments?invoiceId={}", by_reference["id"].as_str().unwrap())).await;
    assert_eq!(
        (payments[0]["method"].as_str(), payments[0]["reference"].as_str()),
        (Some("bank_transfer"), Some("B-0001"))
    );
    assert_eq!(transactions(&app, "ignored").await.len(), 1, "money out is kept");

    // The suggestion confirmed by hand; a second confirmation is refused.
    let [suggested] = transactions(&app, "suggested").await.try_into().unwrap();
    assert_eq!(suggested["suggestedInvoiceId"], guessed["id"]);
    let path = format!("/v1/bank-transactions/{}/match", suggested["id"].as_str().unwrap());
    let confirm = json!({"allocations": [{"invoiceId": guessed["id"], "amount": 595.00}]});
    let response = app.request(Method::POST, &path, &app.key).json(&confirm).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let matched: Value = response.json().await.unwrap();
    assert_eq!(
        (matched["status"].as_str(), matched["payments"].as_array().unwrap().len()),
        (Some("matched"), 1)
    );
    assert_eq!(invoice_now(&app, &guessed).await["status"], "PAID");
    let again = app.request(Method::POST, &path, &app.key).json(&confirm).send().await.unwrap();
    assert_eq!(again.status(), 409);
    assert!(error_of(again).await.starts_with("status: the transaction is matched already"));

    // The same file again: nothing new, nothing booked twice.
    let again: Value =
        import(&app, &app.key, "camt.053", "application/xml", &statement).await.json().await.unwrap();
    assert_eq!([&again["duplicates"], &again["matched"]], [&json!(4), &json!(0)]);
    assert_eq!(app.get_json("/v1/bank-transactions").await.as_array().unwrap().len(), 4);
    assert_eq!(invoice_now(&app, &by_serial).await["amountDue"].to_string(), "138.00");

    // Unmatched: the payment voided, the invoice due again.
    let [by_text] = transactions(&app, "matched")
        .await
        .into_iter()
        .filter(|t| t["bankReference"] == "B-0002")
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    let path = format!("/v1/bank-transactions/{}/unmatch", by_text["id"].as_str().unwrap());
    let response = app.request(Method::POST, &path, &app.key).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(invoice_now(&app, &by_serial).await["amountDue"].to_string(), "238.00");
    // Matching again finds it by its serial.
    let response = app
        .request(Method::POST, "/v1/bank-transactions/match", &app.key)
        .json(&json!({"dryRun": true}))
        .send()
        .await
        .unwrap();
    let planned: Value = response.json().await.unwrap();
    assert_eq!(planned[0]["decision"], "book", "{planned}");
    assert_eq!(
        invoice_now(&app, &by_serial).await["amountDue"].to_string(),
        "238.00",
        "a dry run books nothing"
    );
}

#[tokio::test]
async fn unbalanced_hostile_and_unpermitted_files_are_refused_and_keep_nothing() {
    let app = spawn_app().await;
    let unbalanced = camt053("1000.00", "1200.00", &[entry("100.00", "Zoë", None, "x", "B-1")]);
    valid_camt053(&unbalanced).unwrap();
    let response = import(&app, &app.key, "camt.053", "application/xml", &unbalanced).await;
    assert_eq!(response.status(), 400);
    assert_eq!(
        error_of(response).await,
        "body: statement 1: the opening balance 1000.00 and the entries (100.00) do not come to the closing balance 1200.00"
    );
    assert!(app.get_json("/v1/bank-transactions").await.as_array().unwrap().is_empty());

    let entity = "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;\">]><Document>&b;</Document>";
    let response = import(&app, &app.key, "camt.053", "application/xml", entity).await;
    assert_eq!(response.status(), 400);
    assert!(error_of(response).await.contains("<!DOCTYPE>"));
    let deep = format!("<Document>{}{}</Document>", "<a>".repeat(10_000), "</a>".repeat(10_000));
    let response = import(&app, &app.key, "camt.053", "application/xml", &deep).await;
    assert_eq!(response.status(), 400);
    let response = import(
        &app,
        &app.key,
        "camt.053",
        "application/xml",
        &format!("<Document>{}</Document>", "x".repeat(51 << 20)),
    )
    .await;
    assert_eq!(response.status(), 413);
    let response = import(&app, &app.key, "ofx", "text/plain", "").await;
    assert_eq!(response.status(), 400);
    assert!(error_of(response).await.starts_with("format: "));

    let team = app.team;
    let user = create_user(&app.store, team, Role::Member).await;
    let invoices_only = Scope::from_parts("restricted", &["invoices:write"]).unwrap();
    let (_, key) = create_key(&app.store, team, user, invoices_only, None).await;
    let response = import(&app, &key, "camt.053", "application/xml", &unbalanced).await;
    assert_eq!(response.status(), 403, "banking needs its own permission");
}

/// An MT940 statement of a German bank: the reference in `:86:`'s purpose settles.
const MT940: &str = ":20:STARTUMS\r\n:25:10020030/1234567890\r\n:28C:00001/001\r\n\
    :60F:C261119EUR100,00\r\n\
    :61:2611201120CR119,00NTRFNONREF//B-0001\r\n\
    :86:166?00GUTSCHRIFT?20EREF+NOTPROVIDED?21SVWZ+SERIAL?31DE02120300000000202051?32Mueller GmbH\r\n\
    :61:2611201120DR28,50NDDTNONREF//B-0002\r\n\
    :86:105?00LASTSCHRIFT?20Server November?32Hosting AG\r\n\
    :62F:C261120EUR190,50\r\n-\r\n";

/// `(booking date, amount, purpose)` of each transaction of `file`, as the Python package
/// index's `mt-940` reads it (the booking date where `:61:` gives one, else the value date;
/// the purpose of a structured `:86:`, else its whole text).
pub(super) fn mt940_oracle(file: &str) -> Vec<(String, String, String)> {
    let script = "import sys, json, mt940\n\
        t = mt940.models.Transactions()\n\
        t.parse(open(sys.argv[1], encoding='utf-8').read())\n\
        print(json.dumps([[str(x.data.get('entry_date') or x.data['date']), str(x.data['amount'].amount), \
            x.data.get('purpose') or x.data.get('transaction_details') or ''] for x in t]))";
    let path = scratch("statement.sta", file);
    let output = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .output()
        .expect("python3 with mt-940");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn an_mt940_statement_reads_as_a_second_reader_reads_it_and_settles_by_serial() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Mueller GmbH").await;
    let invoice = invoice(&app, client["id"].as_str().unwrap(), "119.00").await;
    let file = MT940.replace("SERIAL", &format!("Rechnung {}", invoice["serial"].as_str().unwrap()));
    let response = import(&app, &app.key, "mt940", "text/plain", &file).await;
    assert_eq!(response.status(), 201);
    let imported: Value = response.json().await.unwrap();
    assert_eq!([&imported["entries"], &imported["matched"]], [&json!(2), &json!(1)], "{imported}");
    let mut ours: Vec<(String, String, String)> = app
        .get_json("/v1/bank-transactions")
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["date"].as_str().unwrap().to_owned(),
                t["amount"].to_string(),
                t["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    ours.sort();
    let mut theirs = mt940_oracle(&file);
    theirs.sort();
    let comparable = |rows: Vec<(String, String, String)>| {
        rows.into_iter()
            .map(|(date, amount, text)| {
                (date, amount.parse::<rust_decimal::Decimal>().unwrap(), text.replace(' ', ""))
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(comparable(ours), comparable(theirs));
    let paid = app.get_json(&format!("/v1/invoices/{}", invoice["id"].as_str().unwrap())).await;
    assert_eq!(paid["status"], "PAID");
}

#[tokio::test]
async fn a_csv_export_is_read_by_the_teams_mapping_up_to_100000_entries() {
    let app = spawn_app().await;
    let response = import(&app, &app.key, "csv", "text/csv", "Buchungstag;Betrag;Verwendungszweck\n").await;
    assert_eq!(response.status(), 400, "no mapping saved yet");
    let mapping = json!({"delimiter": ";", "decimalSeparator": ",", "dateFormat": "%d.%m.%Y",
        "columns": {"date": "Buchungstag", "amount": "Betrag", "counterpartyName": "Name", "text": "Verwendungszweck"}});
    let response = app
        .request(Method::PUT, "/v1/bank-statements/csv-mapping", &app.key)
        .json(&mapping)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let saved = app.get_json("/v1/bank-statements/csv-mapping").await;
    assert_eq!(saved["columns"]["reference"], Value::Null, "a column not mapped is null");
    assert_eq!(saved["columns"]["text"], "Verwendungszweck");

    let client = app.create_client(&app.key, "Müller GmbH").await;
    let paid = invoice(&app, client["id"].as_str().unwrap(), "1190.00").await;
    let serial = paid["serial"].as_str().unwrap();
    let file = format!(
        "Buchungstag;Betrag;Name;Verwendungszweck\n\
         20.11.2026;1.190,00;Müller GmbH;\"Rechnung {serial}; danke\"\n\
         21.11.2026;-28,50;Hosting AG;Server November\n"
    );
    let response = import(&app, &app.key, "csv", "text/csv", &file).await;
    assert_eq!(response.status(), 201);
    let imported: Value = response.json().await.unwrap();
    assert_eq!(
        [&imported["entries"], &imported["matched"], &imported["openingBalance"]],
        [&json!(2), &json!(1), &Value::Null]
    );
    assert_eq!(invoice_now(&app, &paid).await["status"], "PAID");

    let row = "22.11.2026;1,00;Zoë;Spende\n";
    let too_many = format!("Buchungstag;Betrag;Name;Verwendungszweck\n{}", row.repeat(100_001));
    let response = import(&app, &app.key, "csv", "text/csv", &too_many).await;
    assert_eq!(response.status(), 413);
    assert_eq!(error_of(response).await, "body: the file holds more than 100000 entries; split it");
    assert_eq!(
        app.get_json("/v1/bank-transactions").await.as_array().unwrap().len(),
        2,
        "nothing of it kept"
    );
}
