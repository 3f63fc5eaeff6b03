//! Limits on slow and numerous clients: a request's body must arrive within a deadline,
//! and one process holds a bounded number of connections.

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::{InternalError, PayloadError};
use actix_web::http::header;
use actix_web::http::{ConnectionType, StatusCode};
use actix_web::middleware::Next;
use actix_web::web::{Bytes, Data};
use actix_web::{HttpMessage, ResponseError};
use futures_core::Stream;
use tokio::time::Sleep;

use crate::conventions::error::ApiError;

/// How long clients may take and how many may be connected at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientLimits {
    /// From the end of a request's head to the last byte of its body.
    pub body_deadline: Duration,
    /// Open connections per listener, over all its workers.
    pub max_connections: usize,
    /// How long requests in flight have to finish after SIGTERM.
    pub shutdown_timeout: Duration,
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            body_deadline: Duration::from_secs(30),
            max_connections: 10_000,
            shutdown_timeout: Duration::from_secs(30),
        }
    }
}

impl ClientLimits {
    /// Connections each of `workers` may hold, so that together they hold at most
    /// [`Self::max_connections`] (rounded up to a multiple of the workers).
    pub fn per_worker(self, workers: usize) -> usize {
        self.max_connections.div_ceil(workers.max(1)).max(1)
    }
}

/// Gives a request's body [`ClientLimits::body_deadline`] to arrive. Past it, whatever the
/// handler made of the cut-off body is replaced by a 408 and the connection is closed, so
/// a client that promises bytes it never sends holds nothing for long.
pub(crate) async fn body_deadline(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if !has_body(&req) {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    }
    let deadline = req
        .app_data::<Data<ClientLimits>>()
        .map_or_else(|| ClientLimits::default().body_deadline, |l| l.body_deadline);
    let expired = Rc::new(Cell::new(false));
    let payload = Deadlined {
        inner: req.take_payload(),
        sleep: Box::pin(tokio::time::sleep(deadline)),
        expired: Rc::clone(&expired),
    };
    req.set_payload(Payload::from(Box::pin(payload) as Pin<Box<dyn Stream<Item = _>>>));
    let answer = next.call(req).await;
    if !expired.get() {
        return answer.map(ServiceResponse::map_into_boxed_body);
    }
    let mut response = ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        format!("body: did not arrive within {} s", deadline.as_secs_f64()),
    )
    .error_response();
    response.head_mut().set_connection_type(ConnectionType::Close);
    match answer {
        // The request is taken back only now: cloned before, routing could not have used it.
        Ok(answered) => Ok(ServiceResponse::new(answered.request().clone(), response)),
        Err(_) => Err(InternalError::from_response("the body did not arrive in time", response).into()),
    }
}

/// Whether the request announces a body (a length above 0, or chunks).
fn has_body(req: &ServiceRequest) -> bool {
    let headers = req.headers();
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|length| length.trim() != "0")
}

/// A body stream that fails with a timeout once its deadline passes.
struct Deadlined {
    inner: Payload,
    sleep: Pin<Box<Sleep>>,
    expired: Rc<Cell<bool>>,
}

impl Stream for Deadlined {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.expired.get() {
            return Poll::Ready(None);
        }
        if let Poll::Ready(chunk) = Pin::new(&mut self.inner).poll_next(cx) {
            return Poll::Ready(chunk);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.expired.set(true);
            let late = io::Error::new(io::ErrorKind::TimedOut, "the body did not arrive in time");
            return Poll::Ready(Some(Err(PayloadError::Io(late))));
        }
        Poll::Pending
    }
}
