//! The use cases of webhook endpoints: subscribing, changing and rotating, each held to who
//! may read the events and to where deliveries may go.

use std::net::IpAddr;
use std::time::Duration;

use accounts::{Permission, Principal};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{Id, Replaced, StoreError};

use crate::event::{EventFilter, EventType};
use crate::jobs::later;
use crate::reachable::is_public;
use crate::store::NotifyStore;
use crate::webhooks::{
    Disabled, EndpointDescription, Host, SigningSecret, WebhookEndpoint, WebhookEndpointId, WebhookUrl,
};

/// Finds the addresses of a host name: how a subscription learns where its URL leads.
#[async_trait]
pub trait Resolve: Send + Sync {
    /// The addresses of `host` for `port`, or why there are none (no answer in time, no
    /// such name).
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, String>;
}

/// Where this deployment lets endpoints point.
#[derive(Clone, Copy)]
pub struct Reach<'a> {
    pub resolver: &'a dyn Resolve,
    /// Loopback, private and other addresses that are not globally reachable too (tests,
    /// a receiver on the operator's own network).
    pub allow_private: bool,
}

impl std::fmt::Debug for Reach<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reach").field("allow_private", &self.allow_private).finish_non_exhaustive()
    }
}

/// Why an endpoint was not made or changed.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The caller may not read the data of events it would receive.
    #[error("the key lacks {}, which these events' data needs", .0.as_str())]
    Forbidden(Permission),
    /// The URL's host has no address.
    #[error("{host} does not resolve: {reason}")]
    Unresolved { host: String, reason: String },
    /// The URL leads to an address that is not globally reachable.
    #[error("{host} is {address}, which is not a public address")]
    NotPublic { host: String, address: IpAddr },
    /// The team has [`crate::webhooks::MAX_ENDPOINTS`] already.
    #[error("the team has the most endpoints it may have")]
    TooMany,
    #[error("webhook endpoint not found")]
    NotFound,
    /// It kept changing while the change was tried (the runner disabling it on a 410).
    #[error("the endpoint changed meanwhile")]
    Conflict,
    /// A rotation's previous secret still signs until then.
    #[error("the previous secret still signs until {until}")]
    StillSigning { until: DateTime<Utc> },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether `who` may receive what `filter` takes: the read permission of every event type
/// it matches (a key that may write webhooks but not read payments cannot point an endpoint
/// that receives payments at itself).
pub fn may_subscribe(who: &Principal, filter: &EventFilter) -> Result<(), EndpointError> {
    let lacking = EventType::subscribable()
        .filter(|kind| filter.matches(*kind))
        .map(|kind| kind.family().read_permission())
        .find(|permission| !who.may(*permission));
    match lacking {
        Some(permission) => Err(EndpointError::Forbidden(permission)),
        None => Ok(()),
    }
}

/// `url` if its host is a public address (or resolves only to public ones), unless `reach`
/// allows others. Deliveries check again when they connect.
pub async fn reachable(reach: Reach<'_>, url: WebhookUrl) -> Result<WebhookUrl, EndpointError> {
    if reach.allow_private {
        return Ok(url);
    }
    let addresses = match url.host() {
        Host::Address(ip) => vec![ip],
        Host::Name(name) => reach
            .resolver
            .resolve(&name, url.port())
            .await
            .map_err(|reason| EndpointError::Unresolved { host: name.clone(), reason })?,
    };
    match addresses.into_iter().find(|ip| !is_public(*ip)) {
        Some(address) => Err(EndpointError::NotPublic { host: url.host_text().to_owned(), address }),
        None => Ok(url),
    }
}

/// What a new endpoint is to be, parsed.
#[derive(Debug, Clone)]
pub struct NewEndpoint {
    pub url: WebhookUrl,
    pub events: EventFilter,
    pub description: EndpointDescription,
}

/// Subscribes a new endpoint of `who`'s team, acting for `who`'s user, with a new secret.
pub async fn create_endpoint(
    store: &dyn NotifyStore,
    reach: Reach<'_>,
    who: &Principal,
    new: NewEndpoint,
    now: DateTime<Utc>,
) -> Result<WebhookEndpoint, EndpointError> {
    may_subscribe(who, &new.events)?;
    let url = reachable(reach, new.url).await?;
    let endpoint = WebhookEndpoint {
        id: WebhookEndpointId::generate(),
        team_id: who.team_id,
        url,
        events: new.events,
        description: new.description,
        created_by: who.user_id,
        secret: SigningSecret::generate(),
        previous_secret: None,
        disabled: None,
        created_at: now,
        updated_at: now,
    };
    if !store.create_endpoint(&endpoint).await? {
        return Err(EndpointError::TooMany);
    }
    Ok(endpoint)
}

/// What a change of an endpoint asks; what is `None` stays.
#[derive(Debug, Clone, Default)]
pub struct EndpointChanges {
    pub url: Option<WebhookUrl>,
    pub events: Option<EventFilter>,
    pub description: Option<EndpointDescription>,
    pub enabled: Option<bool>,
}

/// Changes `who`'s team's endpoint `id` as `changes` asks. Where the events now go, or
/// which go there, the caller must be allowed to read all of them.
pub async fn update_endpoint(
    store: &dyn NotifyStore,
    reach: Reach<'_>,
    who: &Principal,
    id: WebhookEndpointId,
    changes: EndpointChanges,
    now: impl Fn() -> DateTime<Utc>,
) -> Result<WebhookEndpoint, EndpointError> {
    if let Some(events) = &changes.events {
        may_subscribe(who, events)?;
    }
    let url = match changes.url {
        Some(url) => Some(reachable(reach, url).await?),
        None => None,
    };
    let redirected = url.is_some() || changes.events.is_some();
    change_endpoint(store, who, id, now, |current, now| {
        let disabled = match changes.enabled {
            Some(true) => None,
            Some(false) => {
                current.disabled.clone().or(Some(Disabled { at: now, reason: "disabled by hand".to_owned() }))
            }
            None => current.disabled.clone(),
        };
        let endpoint = WebhookEndpoint {
            url: url.clone().unwrap_or_else(|| current.url.clone()),
            events: changes.events.clone().unwrap_or_else(|| current.events.clone()),
            description: changes.description.clone().unwrap_or_else(|| current.description.clone()),
            disabled,
            updated_at: now,
            ..current
        };
        if redirected {
            may_subscribe(who, &endpoint.events)?;
        }
        Ok(endpoint)
    })
    .await
}

/// Gives `who`'s team's endpoint `id` a new secret. For `overlap` the previous one signs
/// too; a rotation while an earlier one's overlap runs is refused unless `overlap` is zero,
/// which stops both earlier secrets at once. The new secret verifies what the endpoint
/// receives: only a caller who may read that rotates it.
pub async fn rotate_secret(
    store: &dyn NotifyStore,
    who: &Principal,
    id: WebhookEndpointId,
    overlap: Duration,
    now: impl Fn() -> DateTime<Utc>,
) -> Result<WebhookEndpoint, EndpointError> {
    change_endpoint(store, who, id, now, |current, now| {
        may_subscribe(who, &current.events)?;
        if let Some((_, until)) = current.previous_secret.as_ref().filter(|(_, until)| *until > now)
            && !overlap.is_zero()
        {
            return Err(EndpointError::StillSigning { until: *until });
        }
        let previous = (!overlap.is_zero()).then(|| (current.secret.clone(), later(now, overlap)));
        Ok(WebhookEndpoint {
            secret: SigningSecret::generate(),
            previous_secret: previous,
            updated_at: now,
            ..current
        })
    })
    .await
}

/// Reads the endpoint, changes it with `change` (given it and the time now) and writes it,
/// if nothing changed it meanwhile (another request, the runner disabling it on a 410):
/// read again and changed anew then, a few times, before [`EndpointError::Conflict`].
async fn change_endpoint(
    store: &dyn NotifyStore,
    who: &Principal,
    id: WebhookEndpointId,
    now: impl Fn() -> DateTime<Utc>,
    change: impl Fn(WebhookEndpoint, DateTime<Utc>) -> Result<WebhookEndpoint, EndpointError>,
) -> Result<WebhookEndpoint, EndpointError> {
    const TRIES: usize = 3;
    for _ in 0..TRIES {
        let current = store.get_endpoint(who.team_id, id).await?.ok_or(EndpointError::NotFound)?;
        let read_at = current.updated_at;
        let changed = change(current, now())?;
        match store.replace_endpoint(&changed, read_at).await? {
            Replaced::Written => return Ok(changed),
            Replaced::Stale => {}
            Replaced::Missing => return Err(EndpointError::NotFound),
        }
    }
    Err(EndpointError::Conflict)
}
