//! The floor `scripts/bench-agent.sh` measures the webhook trigger against: an actix-web
//! server, one worker per core like the trigger listener, answering every `POST /` with
//! the constant body of a successful run and nothing else (no token, no parsing, no agent).
//! It does read the request body, as the trigger does: actix-web answers a handler that
//! leaves it unread about three times slower on keep-alive connections.
//!
//! `cargo run --release -p http-api --example bare_handler -- 127.0.0.1:8081`
//! (the address may also come from `BARE_HANDLER_LISTEN`; default `127.0.0.1:8081`).

use actix_web::http::header::ContentType;
use actix_web::{App, HttpResponse, HttpServer, web};

const REPLY: &str = r#"{"status":"ok","reply":"ok","steps":1}"#;

/// Takes the body only to have read it.
async fn reply(_body: web::Bytes) -> HttpResponse {
    HttpResponse::Ok().content_type(ContentType::json()).body(REPLY)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("BARE_HANDLER_LISTEN").ok())
        .unwrap_or_else(|| "127.0.0.1:8081".to_owned());
    let workers = std::thread::available_parallelism().map_or(2, usize::from);
    HttpServer::new(|| App::new().route("/", web::post().to(reply)))
        .workers(workers)
        .bind(address)?
        .run()
        .await
}
