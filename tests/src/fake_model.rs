//! A fake OpenAI-compatible Chat Completions server on a free port: real HTTP, answers
//! scripted per test, every request it received kept for inspection.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A final reply with the given usage (prompt, completion tokens).
    Reply { text: String, usage: (u64, u64) },
    /// A call of tool `name` with JSON `arguments`.
    ToolCall { name: String, arguments: String, usage: (u64, u64) },
    /// An error status, with `Retry-After` seconds if given.
    Status { status: u16, retry_after: Option<u64> },
    /// Waits, then replies `text`.
    Slow { delay: Duration, text: String },
    /// Replies with every message it was given, one `role: content` per line.
    Reflect,
    /// A response body as a model's server sent it (a recorded reply), served unchanged.
    Recorded(Value),
}

impl Answer {
    pub fn reply(text: &str) -> Self {
        Self::Reply { text: text.to_owned(), usage: (0, 0) }
    }

    /// A call of tool `name` with `arguments`.
    pub fn call(name: &str, arguments: &Value) -> Self {
        Self::ToolCall { name: name.to_owned(), arguments: arguments.to_string(), usage: (0, 0) }
    }
}

#[derive(Debug, Default)]
struct Script {
    answers: VecDeque<Answer>,
    /// Answer once the script is used up.
    fallback: Option<Answer>,
    /// Waited before every answer.
    delay: Duration,
    requests: Vec<Value>,
}

/// The running fake server.
#[derive(Debug, Clone)]
pub struct FakeModel {
    pub base_url: String,
    script: Arc<Mutex<Script>>,
    in_flight: Arc<AtomicUsize>,
    most_in_flight: Arc<AtomicUsize>,
}

impl FakeModel {
    /// Starts a server answering `answers` in order, then `fallback` (500 when `None`).
    pub fn start(answers: Vec<Answer>, fallback: Option<Answer>) -> Self {
        let script = Arc::new(Mutex::new(Script { answers: answers.into(), fallback, ..Script::default() }));
        let model = Self {
            base_url: String::new(),
            script,
            in_flight: Arc::default(),
            most_in_flight: Arc::default(),
        };
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let shared = model.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(web::Data::new(shared.clone()))
                .route("/v1/chat/completions", web::post().to(complete))
        })
        .workers(2)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        tokio::spawn(server);
        Self { base_url, ..model }
    }

    /// Answers `answers` in order from now on, then the fallback.
    pub fn queue_answers(&self, answers: Vec<Answer>) {
        self.script.lock().unwrap().answers = answers.into();
    }

    /// Waits before every answer from now on.
    pub fn set_delay(&self, delay: Duration) {
        self.script.lock().unwrap().delay = delay;
    }

    /// The request bodies received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.script.lock().unwrap().requests.clone()
    }

    /// The most requests it was answering at the same time.
    pub fn most_in_flight(&self) -> usize {
        self.most_in_flight.load(Ordering::SeqCst)
    }

    /// Waits until `count` requests have arrived.
    pub async fn wait_for_requests(&self, count: usize) {
        for _ in 0..500 {
            if self.requests().len() >= count {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the fake model got {} requests, expected {count}", self.requests().len());
    }
}

/// The last user message of a request body.
pub fn last_user_message(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn completion(message: &Value, usage: (u64, u64)) -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1, "total_tokens": usage.0 + usage.1},
    }))
}

async fn complete(model: web::Data<FakeModel>, body: web::Json<Value>) -> HttpResponse {
    let now = model.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    model.most_in_flight.fetch_max(now, Ordering::SeqCst);
    let (answer, delay) = {
        let mut script = model.script.lock().unwrap();
        script.requests.push(body.0.clone());
        let answer = script.answers.pop_front().or_else(|| script.fallback.clone());
        (answer, script.delay)
    };
    tokio::time::sleep(delay).await;
    let response = match answer {
        None => HttpResponse::InternalServerError().body("no scripted answer"),
        Some(Answer::Reply { text, usage }) => {
            completion(&json!({"role": "assistant", "content": text}), usage)
        }
        Some(Answer::ToolCall { name, arguments, usage }) => completion(
            &json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}],
            }),
            usage,
        ),
        Some(Answer::Status { status, retry_after }) => {
            let mut response = HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap());
            if let Some(seconds) = retry_after {
                response.insert_header(("Retry-After", seconds.to_string()));
            }
            response.json(json!({"error": {"message": "scripted failure"}}))
        }
        Some(Answer::Slow { delay, text }) => {
            tokio::time::sleep(delay).await;
            completion(&json!({"role": "assistant", "content": text}), (0, 0))
        }
        Some(Answer::Recorded(body)) => HttpResponse::Ok().json(body),
        Some(Answer::Reflect) => {
            let lines: Vec<String> = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    format!("{}: {}", m["role"].as_str().unwrap_or("?"), m["content"].as_str().unwrap_or(""))
                })
                .collect();
            completion(&json!({"role": "assistant", "content": lines.join("\n")}), (7, 3))
        }
    };
    model.in_flight.fetch_sub(1, Ordering::SeqCst);
    response
}
