//! The REST API's JSON bodies, through the real actix app over the in-memory store: every
//! create and update of each resource. Whatever the body, the answer is not a server
//! error, and a refusal is `{"error": "..."}` (on `/mcp`, a JSON-RPC error object).

use std::cell::OnceCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use actix_web::dev::Service;
use actix_web::test::{self, TestRequest};
use actix_web::web::Data;
use http_api::{ApiState, HttpSettings, Stores};
use serde_json::{Value, json};

type Call = Box<dyn Fn(TestRequest) -> Pin<Box<dyn Future<Output = (u16, Vec<u8>)>>>>;

/// The app and the ids of one of each resource, to aim updates at.
struct Harness {
    runtime: actix_web::rt::SystemRunner,
    call: Call,
    key: String,
    ids: Value,
}

thread_local! {
    // Leaked: dropped at the thread's end, the runtime would reach for thread locals that
    // are already gone.
    static HARNESS: OnceCell<&'static Harness> = const { OnceCell::new() };
}

/// The writes a body can be sent to, with `{name}` standing for a resource's id.
const WRITES: [(&str, &str); 17] = [
    ("POST", "/v1/invoices/clients"),
    ("PATCH", "/v1/invoices/clients/{client}"),
    ("POST", "/v1/invoices"),
    ("PATCH", "/v1/invoices/{invoice}"),
    ("PATCH", "/v1/invoices/{invoice}/mark"),
    ("POST", "/v1/track/time"),
    ("PATCH", "/v1/track/time/{entry}"),
    ("POST", "/v1/track/timer/start"),
    ("POST", "/v1/track/timer/stop"),
    ("POST", "/v1/track/tags"),
    ("PATCH", "/v1/track/tags/{tag}"),
    ("POST", "/v1/track/projects"),
    ("PUT", "/v1/track/projects/{project}"),
    ("POST", "/v1/track/sections"),
    ("PUT", "/v1/track/sections/{section}"),
    ("POST", "/mcp"),
    ("POST", "/v1/invoices/from-time"),
];

/// The first byte picks one of the writes (`WRITES`); the rest is its body.
pub fn rest_body(data: &[u8]) {
    let Some((&pick, body)) = data.split_first() else { return };
    let (method, template) = WRITES[usize::from(pick) % WRITES.len()];
    HARNESS.with(|cell| {
        let harness = *cell.get_or_init(|| Box::leak(Box::new(Harness::new())));
        let path = harness.path(template);
        let request = TestRequest::default()
            .method(method.parse().expect("a method"))
            .uri(&path)
            .insert_header(("X-API-Key", harness.key.as_str()))
            .insert_header(("Content-Type", "application/json"))
            .set_payload(body.to_vec());
        let (status, answer) = harness.runtime.block_on((harness.call)(request));
        assert!(status < 500, "{method} {path} answered {status}: {}", String::from_utf8_lossy(&answer));
        if (400..500).contains(&status) {
            let error: Value = serde_json::from_slice(&answer).expect("an error body is JSON");
            // `/mcp` refuses the way JSON-RPC does: `{"error": {"code", "message"}, …}`.
            let message = if path == "/mcp" { &error["error"]["message"] } else { &error["error"] };
            assert!(message.is_string(), "{method} {path} answered {status} with {error}");
        }
    });
}

impl Harness {
    fn new() -> Self {
        let runtime = actix_web::rt::System::new();
        let (call, key) = runtime.block_on(async {
            let (store, key) = super::team_in_memory().await;
            let stores = Stores {
                accounts: store.clone(),
                billing: store.clone(),
                track: store.clone(),
                agent: store.clone(),
                health: store.clone(),
                idempotency: store.clone(),
                notify: store.clone(),
                recurring: store,
            };
            let settings = HttpSettings {
                key_rate: unlimited(),
                ip_rate: unlimited(),
                shared_limits: None,
                key_cache_ttl: std::time::Duration::from_mins(1),
                trust_forwarded: false,
                listing_cache_bytes: 1 << 20,
                statement_limit: 1 << 20,
                idempotency_ttl: std::time::Duration::from_hours(1),
                mcp_origins: http_api::AllowedOrigins::default(),
                // E-mail is not configured (sending answers 409); webhooks go to public
                // addresses only, checked by resolving them.
                sending: http_api::Sending {
                    mail_from: None,
                    links: notify::service::Links::new("http://127.0.0.1:3000"),
                    allow_private_webhooks: false,
                },
            };
            let clock: Arc<dyn kernel::Clock> = Arc::new(kernel::SystemClock);
            let printer = billing::issue::Printer::new(
                Arc::new(renderer::BuiltinRenderer),
                Arc::new(einvoice::Xml),
                Arc::new(pages::Pages),
            );
            let state = ApiState::new(stores, printer, clock, settings);
            let app = std::rc::Rc::new(test::init_service(http_api::app(Data::new(state))).await);
            let call: Call = Box::new(move |request: TestRequest| {
                let app = app.clone();
                Box::pin(async move {
                    let response = app.call(request.to_request()).await.expect("the app answers");
                    let status = response.status().as_u16();
                    (status, test::read_body(response).await.to_vec())
                })
            });
            (call, key)
        });
        let mut harness = Self { runtime, call, key, ids: Value::Null };
        harness.ids = harness.seed();
        harness
    }

    /// One of each resource, so that updates find something to change.
    fn seed(&self) -> Value {
        let made = |path: &str, body: Value| {
            let request =
                TestRequest::post().uri(path).insert_header(("X-API-Key", self.key.as_str())).set_json(body);
            let (status, answer) = self.runtime.block_on((self.call)(request));
            assert_eq!(status, 201, "seeding {path}: {}", String::from_utf8_lossy(&answer));
            serde_json::from_slice::<Value>(&answer).expect("JSON")["id"].clone()
        };
        let client = made(
            "/v1/invoices/clients",
            json!({"name": "C", "email": "c@example.com", "line1": "1 Main Street", "postalCode": "1000"}),
        );
        let invoice = made(
            "/v1/invoices",
            json!({"clientId": client, "lineItems": [{"description": "a", "unitPrice": 1, "quantity": 1}]}),
        );
        let project = made("/v1/track/projects", json!({"title": "P"}));
        let section = made("/v1/track/sections", json!({"title": "S", "projectId": project}));
        let tag = made("/v1/track/tags", json!({"title": "T"}));
        let entry = made(
            "/v1/track/time",
            json!({"date": "2026-11-20", "durationSeconds": 60, "taskName": "t", "projectId": project}),
        );
        json!({"client": client, "invoice": invoice, "project": project, "section": section, "tag": tag, "entry": entry})
    }

    fn path(&self, template: &str) -> String {
        let Some((head, rest)) = template.split_once('{') else { return template.to_owned() };
        let (name, tail) = rest.split_once('}').expect("a closed placeholder");
        format!("{head}{}{tail}", self.ids[name].as_str().unwrap_or_default())
    }
}

fn unlimited() -> http_api::Rate {
    http_api::Rate { burst: std::num::NonZeroU32::MAX, period: std::time::Duration::from_secs(1) }
}
