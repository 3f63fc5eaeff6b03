//! The books under random use: sequences of payments, refunds, voids, write-offs, credit
//! notes and edits of the total, sent to the real server, each answer and the invoice after
//! it checked against a model of the books written here in whole cents, independently of
//! the server's own.

use acceptance::{TestApp, spawn_app};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use reqwest::Method;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
enum Step {
    Pay(i64),
    Refund(i64),
    WriteOff,
    Credit(i64),
    /// Void the n-th entry recorded so far (modulo their number).
    Void(usize),
    /// Change the invoice's total.
    Retotal(i64),
    Mark,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (1_i64..=6_000).prop_map(Step::Pay),
        2 => (1_i64..=4_000).prop_map(Step::Refund),
        1 => Just(Step::WriteOff),
        2 => (1_i64..=6_000).prop_map(Step::Credit),
        2 => (0_usize..8).prop_map(Step::Void),
        1 => (1_000_i64..=20_000).prop_map(Step::Retotal),
        1 => Just(Step::Mark),
    ]
}

/// What the model keeps of one event, in the order it happened.
#[derive(Debug, Clone, Copy)]
enum Event {
    Pay(i64),
    Refund(i64),
    WriteOff(i64),
    /// A credit note: what it applied to the invoice, and what it left refundable.
    Credit {
        applied: i64,
        refundable: i64,
    },
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Books {
    paid: i64,
    credited: i64,
    written_off: i64,
    refundable: i64,
}

impl Books {
    fn due(self, total: i64) -> i64 {
        total - self.paid - self.credited - self.written_off
    }
}

/// The books of `events` (voided ones left out) on an invoice of `total`, or `None` when
/// one of them breaks a rule.
fn play(total: i64, events: &[(Event, bool)]) -> Option<Books> {
    let mut books = Books::default();
    for (event, voided) in events {
        if *voided {
            continue;
        }
        match *event {
            Event::Pay(amount) if amount <= books.due(total) => books.paid += amount,
            Event::WriteOff(amount) if amount <= books.due(total) => books.written_off += amount,
            Event::Refund(amount) if amount <= books.paid => {
                books.paid -= amount;
                let from_credit = amount.min(books.refundable);
                books.refundable -= from_credit;
                books.credited += from_credit;
            }
            Event::Credit { applied, refundable } if applied <= books.due(total) => {
                books.credited += applied;
                books.refundable += refundable;
            }
            _ => return None,
        }
    }
    Some(books)
}

fn status(total: i64, books: Books) -> &'static str {
    let due = books.due(total);
    if due == 0 && total > 0 {
        if books.written_off == 0 && books.paid > 0 { "PAID" } else { "EXPIRED" }
    } else if books.paid > 0 {
        "PAID_PARTIAL"
    } else {
        "PENDING"
    }
}

fn cents(value: &Value) -> i64 {
    let text = value.to_string();
    let (whole, part) = text.split_once('.').unwrap_or_else(|| panic!("{text} has 2 decimals"));
    assert_eq!(part.len(), 2, "{text} has 2 decimals (EUR)");
    whole.parse::<i64>().unwrap() * 100 + part.parse::<i64>().unwrap()
}

fn euros(cents: i64) -> Value {
    serde_json::from_str(&format!("{}.{:02}", cents / 100, cents % 100)).unwrap()
}

/// An invoice on the server and the model of its books.
struct Model {
    id: String,
    total: i64,
    events: Vec<(Event, bool)>,
    /// The ids of the entries that can be voided (payments and refunds), with the index
    /// of their event.
    voidable: Vec<(String, usize)>,
    /// What the credit notes came to.
    credit_totals: i64,
}

impl Model {
    async fn new(app: &TestApp) -> Self {
        let client = app.create_client(&app.key, "Acme").await;
        let body = json!({"clientId": client["id"], "lineItems": [{"description": "Work", "unitPrice": 100, "quantity": 1}]});
        let response = app.request(Method::POST, "/v1/invoices", &app.key).json(&body).send().await.unwrap();
        let invoice: Value = response.json().await.unwrap();
        let id = invoice["id"].as_str().unwrap().to_owned();
        Self { id, total: 10_000, events: Vec::new(), voidable: Vec::new(), credit_totals: 0 }
    }

    fn books(&self) -> Books {
        play(self.total, &self.events).unwrap()
    }

    /// Sends `step`, checks its answer against the model, and moves the model on.
    async fn step(&mut self, app: &TestApp, step: &Step) -> Result<(), TestCaseError> {
        let (id, due, paid) = (self.id.clone(), self.books().due(self.total), self.books().paid);
        match *step {
            Step::Pay(amount) => {
                let path = format!("/v1/invoices/{id}/payments");
                self.write(
                    app,
                    Method::POST,
                    &path,
                    json!({"amount": euros(amount)}),
                    (amount <= due).then_some(Event::Pay(amount)),
                )
                .await
            }
            Step::Refund(amount) => {
                let path = format!("/v1/invoices/{id}/refunds");
                self.write(
                    app,
                    Method::POST,
                    &path,
                    json!({"amount": euros(amount)}),
                    (amount <= paid).then_some(Event::Refund(amount)),
                )
                .await
            }
            Step::WriteOff => {
                let path = format!("/v1/invoices/{id}/write-off");
                self.write(app, Method::POST, &path, json!({}), (due > 0).then_some(Event::WriteOff(due)))
                    .await
            }
            Step::Credit(amount) => {
                let applied = amount.min(due);
                let accepted = self.credit_totals + amount <= self.total;
                let event = accepted.then_some(Event::Credit { applied, refundable: amount - applied });
                let body = json!({"lineItems": [{"description": "Correction", "unitPrice": euros(amount), "quantity": 1}]});
                self.write(app, Method::POST, &format!("/v1/invoices/{id}/credit-notes"), body, event).await
            }
            Step::Mark => {
                let settled = due == 0 && status(self.total, self.books()) == "PAID";
                let answer = app
                    .request(Method::PATCH, &format!("/v1/invoices/{id}/mark"), &app.key)
                    .send()
                    .await
                    .unwrap();
                prop_assert_eq!(
                    answer.status().as_u16(),
                    if due > 0 || settled { 200 } else { 409 },
                    "mark with {} due",
                    due
                );
                if due > 0 {
                    self.events.push((Event::Pay(due), false));
                }
                Ok(())
            }
            Step::Void(n) => self.void(app, n).await,
            Step::Retotal(total) => {
                let body =
                    json!({"lineItems": [{"description": "Work", "unitPrice": euros(total), "quantity": 1}]});
                let answer = app
                    .request(Method::PATCH, &format!("/v1/invoices/{id}"), &app.key)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                let accepted = play(total, &self.events).is_some();
                prop_assert_eq!(
                    answer.status().as_u16(),
                    if accepted { 200 } else { 409 },
                    "a total of {}",
                    total
                );
                if accepted {
                    self.total = total;
                }
                Ok(())
            }
        }
    }

    /// Voids one of the entries that can be voided, as the model expects.
    async fn void(&mut self, app: &TestApp, n: usize) -> Result<(), TestCaseError> {
        if self.voidable.is_empty() {
            return Ok(());
        }
        let (entry, index) = self.voidable[n % self.voidable.len()].clone();
        let mut without = self.events.clone();
        let accepted = !without[index].1 && {
            without[index].1 = true;
            play(self.total, &without).is_some()
        };
        let answer = app
            .request(Method::POST, &format!("/v1/payments/{entry}/void"), &app.key)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        prop_assert_eq!(
            answer.status().as_u16(),
            if accepted { 200 } else { 409 },
            "void of {:?}",
            self.events[index]
        );
        if accepted {
            self.events[index].1 = true;
        }
        Ok(())
    }

    /// Sends a write the model expects to record `expected`, or to be refused when `None`.
    async fn write(
        &mut self,
        app: &TestApp,
        method: Method,
        path: &str,
        body: Value,
        expected: Option<Event>,
    ) -> Result<(), TestCaseError> {
        let answer = app.request(method, path, &app.key).json(&body).send().await.unwrap();
        let code = answer.status().as_u16();
        let answered: Value = answer.json().await.unwrap();
        let Some(event) = expected else {
            prop_assert_eq!(code, 409, "{} {} should be refused: {}", path, body, answered);
            return Ok(());
        };
        prop_assert!(code == 200 || code == 201, "{} {} answered {}: {}", path, body, code, answered);
        match event {
            Event::Credit { applied, refundable } => {
                prop_assert_eq!(
                    (cents(&answered["appliedToInvoice"]), cents(&answered["refundable"])),
                    (applied, refundable)
                );
                self.credit_totals += applied + refundable;
            }
            Event::Pay(_) | Event::Refund(_) => {
                self.voidable.push((answered["id"].as_str().unwrap().to_owned(), self.events.len()));
            }
            Event::WriteOff(_) => {}
        }
        self.events.push((event, false));
        Ok(())
    }
}

/// One random sequence on a fresh invoice of 100.00, checked after every step.
async fn run(app: &TestApp, steps: &[Step]) -> Result<(), TestCaseError> {
    let mut model = Model::new(app).await;
    for step in steps {
        model.step(app, step).await?;
        check(app, &model.id, model.total, &model.events).await?;
    }
    Ok(())
}

/// The invoice as the server has it agrees with the model, and balances.
async fn check(app: &TestApp, id: &str, total: i64, events: &[(Event, bool)]) -> Result<(), TestCaseError> {
    let books = play(total, events).unwrap();
    let invoice = app.get_json(&format!("/v1/invoices/{id}")).await;
    let figures = ["total", "amountPaid", "amountCredited", "amountWrittenOff", "amountDue"]
        .map(|f| cents(&invoice[f]));
    prop_assert_eq!(figures, [total, books.paid, books.credited, books.written_off, books.due(total)]);
    prop_assert_eq!(figures[1] + figures[2] + figures[3] + figures[4], figures[0], "the books balance");
    prop_assert!(figures[4] >= 0);
    prop_assert_eq!(invoice["status"].as_str().unwrap(), status(total, books));
    Ok(())
}

/// Sequences that once broke the books, played before the random ones.
fn regressions() -> Vec<Vec<Step>> {
    use Step::{Credit, Pay, Refund, Retotal, Void};
    // A refund in the same millisecond as the credit note before it was played first
    // when the books were ordered by timestamp.
    vec![vec![
        Pay(677),
        Pay(2926),
        Credit(5113),
        Retotal(3808),
        Void(4),
        Refund(2979),
        Pay(238),
        Credit(3260),
        Refund(396),
        Retotal(17671),
        Credit(2687),
        Pay(1130),
    ]]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_books_always_balance_and_agree_with_the_model() {
    let app = spawn_app().await;
    for steps in regressions() {
        if let Err(error) = run(&app, &steps).await {
            panic!("{error}: {steps:?}");
        }
    }
    let handle = tokio::runtime::Handle::current();
    let mut runner = TestRunner::new(Config { cases: 128, failure_persistence: None, ..Config::default() });
    let result = runner.run(&prop::collection::vec(step(), 1..14), |steps| {
        tokio::task::block_in_place(|| handle.block_on(run(&app, &steps)))
    });
    if let Err(error) = result {
        panic!("{error}");
    }
}
