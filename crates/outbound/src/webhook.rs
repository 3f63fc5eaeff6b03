//! Webhook deliveries over HTTP with reqwest: one signed POST per attempt, to public
//! addresses only (unless told otherwise), no redirects followed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use notify::webhooks::{AttemptReport, Host, OutgoingDelivery, envelope, is_public};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// How long one attempt may take, from connecting to the answer's status.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(15);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A receiver's answer, or why there was none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub report: AttemptReport,
    /// A 429's or 503's `Retry-After`.
    pub retry_after: Option<Duration>,
}

/// Resolves hosts to their public addresses only: a name that resolves to a loopback,
/// private or link-local address is refused at connection time, so a DNS answer that
/// changed after the endpoint was checked reaches nothing inside.
#[derive(Debug)]
struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let resolved = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let public: Vec<SocketAddr> = resolved.filter(|address| is_public(address.ip())).collect();
            if public.is_empty() {
                let refusal = format!("{} has no public address", name.as_str());
                return Err(Box::<dyn std::error::Error + Send + Sync>::from(refusal));
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// Posts deliveries.
#[derive(Debug, Clone)]
pub struct WebhookSender {
    client: reqwest::Client,
    allow_private: bool,
}

impl WebhookSender {
    /// A sender that refuses loopback, private and link-local addresses unless
    /// `allow_private`.
    pub fn new(allow_private: bool) -> anyhow::Result<Self> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy from the environment (HTTPS_PROXY) would resolve the target itself,
            // past the check of its addresses below.
            .no_proxy()
            .timeout(ATTEMPT_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("billable-webhooks/", env!("CARGO_PKG_VERSION")))
            .pool_max_idle_per_host(16);
        if !allow_private {
            builder = builder.dns_resolver(Arc::new(PublicOnly));
        }
        Ok(Self { client: builder.build()?, allow_private })
    }

    /// One attempt of `delivery`: its body, `webhook-id` the event's id, `webhook-timestamp`
    /// the real time now, and a signature of each secret that signs at `now` (business time).
    pub async fn attempt(&self, delivery: &OutgoingDelivery, now: DateTime<Utc>) -> Attempt {
        let endpoint = &delivery.endpoint;
        let started = Instant::now();
        let report = |status: Option<u16>, error: Option<String>| AttemptReport {
            response_status: status,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            error,
        };
        if let Host::Address(ip) = endpoint.url.host()
            && !self.allow_private
            && !is_public(ip)
        {
            let error = format!("{ip} is not a public address");
            return Attempt { report: report(None, Some(error)), retry_after: None };
        }
        let id = delivery.event.id.to_string();
        let body = envelope(&delivery.event);
        let timestamp = Utc::now().timestamp();
        let signature = endpoint.signature(&id, timestamp, &body, now);
        let sent = self
            .client
            .post(endpoint.url.as_str())
            .header("content-type", "application/json")
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
            .await;
        match sent {
            Ok(response) => {
                let status = response.status();
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|value| value.to_str().ok())
                    .and_then(retry_after);
                let error = (!status.is_success()).then(|| match status.canonical_reason() {
                    Some(reason) => format!("the receiver answered {} {reason}", status.as_u16()),
                    None => format!("the receiver answered {}", status.as_u16()),
                });
                Attempt { report: report(Some(status.as_u16()), error), retry_after }
            }
            Err(error) => Attempt { report: report(None, Some(describe(&error))), retry_after: None },
        }
    }
}

/// A `Retry-After` value: seconds, or an HTTP date.
pub fn retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    (at.to_utc() - Utc::now()).to_std().ok()
}

/// What went wrong with a request that got no answer.
fn describe(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "failed"
    };
    crate::with_causes(format!("the request {kind}"), error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_seconds_or_a_date() {
        assert_eq!(retry_after("120"), Some(Duration::from_mins(2)));
        assert_eq!(retry_after(" 0 "), Some(Duration::ZERO));
        let later = (Utc::now() + chrono::TimeDelta::minutes(10)).to_rfc2822();
        let wait = retry_after(&later).unwrap();
        assert!(wait > Duration::from_secs(590) && wait <= Duration::from_mins(10), "{wait:?}");
        assert_eq!(retry_after("soon"), None);
    }
}
