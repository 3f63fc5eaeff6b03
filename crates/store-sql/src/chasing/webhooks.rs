//! Webhook endpoints and their deliveries over diesel. An endpoint's secrets are kept as
//! its owner configures a verifier with them (`whsec_…`): signing needs the secret itself.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::DatabaseErrorKind;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::Replaced;
use kernel::{Id, StoreError, Words};
use notify::jobs::NewJob;
use notify::webhooks::{
    AttemptReport, DeliveryFilter, Disabled, EndpointDescription, MAX_ENDPOINTS, OutgoingDelivery,
    RedeliverError,
};
use notify::{
    ClaimedJob, DeliveryStatus, Event, Finish, JobKind, NewEvent, SigningSecret, WebhookDelivery,
    WebhookDeliveryId, WebhookEndpoint, WebhookEndpointId, WebhookStore, WebhookUrl,
};

use super::events::{EventRow, filter_column, filter_from};
use super::{event_type, finish_job_row, insert_job};
use crate::TxError;
use crate::accounts::{Makers, load_makers, makers_for};
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, corrupt, db_run, violation};

#[derive(Queryable)]
struct EndpointRow {
    team_id: DbUuid,
    id: DbUuid,
    url: String,
    events: String,
    description: String,
    secret: String,
    previous_secret: Option<String>,
    previous_secret_until: Option<DateTime<Utc>>,
    disabled_at: Option<DateTime<Utc>>,
    disabled_reason: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    created_by: Option<DbUuid>,
}

fn secret(text: &str) -> Result<SigningSecret, StoreError> {
    SigningSecret::parse(text).ok_or_else(|| corrupt("signing secret", "not whsec_ and base64"))
}

impl EndpointRow {
    /// The endpoint, acting for its maker (`makers` holds its team's users where the row
    /// names none).
    fn endpoint(self, makers: &Makers) -> Result<WebhookEndpoint, StoreError> {
        let row = self;
        let created_by = makers.maker(row.team_id, row.created_by)?;
        let previous_secret = match (row.previous_secret, row.previous_secret_until) {
            (Some(text), Some(until)) => Some((secret(&text)?, until)),
            _ => None,
        };
        let disabled = match (row.disabled_at, row.disabled_reason) {
            (Some(at), Some(reason)) => Some(Disabled { at, reason }),
            _ => None,
        };
        Ok(WebhookEndpoint {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            url: WebhookUrl::parse(&row.url).map_err(|e| corrupt("webhook url", e))?,
            events: filter_from(&row.events)?,
            description: EndpointDescription::from_stored(row.description)
                .map_err(|e| corrupt("description", e))?,
            created_by,
            secret: secret(&row.secret)?,
            previous_secret,
            disabled,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// The endpoints of `rows`, each acting for its maker.
macro_rules! endpoints_of {
    ($store:expr, $rows:expr) => {{
        let rows: Vec<EndpointRow> = $rows;
        let makers = makers_for!($store, rows.iter().map(|r| (r.team_id, r.created_by)));
        rows.into_iter()
            .map(|row| row.endpoint(&makers))
            .collect::<Result<Vec<WebhookEndpoint>, StoreError>>()
    }};
}

#[derive(Queryable)]
struct DeliveryRow {
    team_id: DbUuid,
    id: DbUuid,
    endpoint_id: DbUuid,
    event_id: DbUuid,
    event_type: String,
    status: String,
    attempts: i32,
    response_status: Option<i32>,
    duration_ms: Option<i64>,
    error: Option<String>,
    last_attempt_at: Option<DateTime<Utc>>,
    next_attempt_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
}

impl TryFrom<DeliveryRow> for WebhookDelivery {
    type Error = StoreError;
    fn try_from(row: DeliveryRow) -> Result<Self, StoreError> {
        Ok(WebhookDelivery {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            endpoint_id: row.endpoint_id.into_id(),
            event_id: row.event_id.into_id(),
            event_type: event_type(&row.event_type)?,
            status: DeliveryStatus::from_word(&row.status)
                .ok_or_else(|| corrupt("delivery status", &row.status))?,
            attempts: u32::try_from(row.attempts).map_err(|e| corrupt("attempts", e))?,
            response_status: row
                .response_status
                .map(u16::try_from)
                .transpose()
                .map_err(|e| corrupt("response status", e))?,
            duration_ms: row
                .duration_ms
                .map(u64::try_from)
                .transpose()
                .map_err(|e| corrupt("duration", e))?,
            error: row.error,
            last_attempt_at: row.last_attempt_at,
            next_attempt_at: row.next_attempt_at,
            created_at: row.created_at,
        })
    }
}

/// The columns an endpoint's replacement writes.
macro_rules! endpoint_values {
    ($endpoint:expr) => {{
        let endpoint: &WebhookEndpoint = $endpoint;
        (
            webhook_endpoints::url.eq(endpoint.url.as_str()),
            webhook_endpoints::events.eq(filter_column(&endpoint.events)),
            webhook_endpoints::description.eq(endpoint.description.as_str()),
            webhook_endpoints::secret.eq(endpoint.secret.expose()),
            webhook_endpoints::previous_secret.eq(endpoint.previous_secret.as_ref().map(|(s, _)| s.expose())),
            webhook_endpoints::previous_secret_until
                .eq(endpoint.previous_secret.as_ref().map(|(_, until)| *until)),
            webhook_endpoints::disabled_at.eq(endpoint.disabled.as_ref().map(|d| d.at)),
            webhook_endpoints::disabled_reason.eq(endpoint.disabled.as_ref().map(|d| d.reason.as_str())),
            webhook_endpoints::updated_at.eq(endpoint.updated_at),
        )
    }};
}

/// The team's endpoint `$id` (a `DbUuid`), as a filter.
macro_rules! the_endpoint {
    ($team:expr, $id:expr) => {
        webhook_endpoints::table
            .filter(webhook_endpoints::team_id.eq($team))
            .filter(webhook_endpoints::id.eq($id))
    };
}

#[async_trait]
impl WebhookStore for SqlStore {
    #[tracing::instrument(skip_all, fields(team = %endpoint.team_id, endpoint = %endpoint.id))]
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<bool, StoreError> {
        let team = DbUuid::of(endpoint.team_id);
        let most = i64::try_from(MAX_ENDPOINTS).unwrap_or(i64::MAX);
        macro_rules! count_and_insert {
            ($conn:ident) => {{
                let count: i64 = webhook_endpoints::table
                    .filter(webhook_endpoints::team_id.eq(team))
                    .count()
                    .get_result($conn)
                    .await?;
                if count >= most {
                    return Ok(false);
                }
                diesel::insert_into(webhook_endpoints::table)
                    .values((
                        webhook_endpoints::team_id.eq(team),
                        webhook_endpoints::id.eq(DbUuid::of(endpoint.id)),
                        webhook_endpoints::created_at.eq(endpoint.created_at),
                        webhook_endpoints::created_by.eq(Some(DbUuid::of(endpoint.created_by))),
                        endpoint_values!(endpoint),
                    ))
                    .execute($conn)
                    .await?;
                Ok::<_, diesel::result::Error>(true)
            }};
        }
        let created = db_run!(self,
            postgres: |conn| conn
                .transaction(async |conn| {
                    // The team's row is the lock its endpoint count is kept under.
                    teams::table.filter(teams::id.eq(team)).select(teams::id).for_update().execute(conn).await?;
                    count_and_insert!(conn)
                })
                .await
                .or_store()?,
            sqlite: |conn| conn
                .transaction(async |conn| {
                    diesel::sql_query(super::SQLITE_WRITE_FIRST).execute(conn).await?;
                    count_and_insert!(conn)
                })
                .await
                .or_store()?
        );
        Ok(created)
    }

    #[tracing::instrument(skip(self))]
    async fn get_endpoint(
        &self,
        team: TeamId,
        id: WebhookEndpointId,
    ) -> Result<Option<WebhookEndpoint>, StoreError> {
        let row: Option<EndpointRow> = db_run!(self, |conn| the_endpoint!(DbUuid::of(team), DbUuid::of(id))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        Ok(endpoints_of!(self, row.into_iter().collect())?.pop())
    }

    #[tracing::instrument(skip(self))]
    async fn list_endpoints(&self, team: TeamId) -> Result<Vec<WebhookEndpoint>, StoreError> {
        let rows: Vec<EndpointRow> = db_run!(self, |conn| webhook_endpoints::table
            .filter(webhook_endpoints::team_id.eq(DbUuid::of(team)))
            .order((webhook_endpoints::created_at, webhook_endpoints::id))
            .load(conn)
            .await
            .or_store()?);
        endpoints_of!(self, rows)
    }

    #[tracing::instrument(skip_all, fields(team = %endpoint.team_id, endpoint = %endpoint.id))]
    async fn replace_endpoint(
        &self,
        endpoint: &WebhookEndpoint,
        read_at: DateTime<Utc>,
    ) -> Result<Replaced, StoreError> {
        let (team, id) = (DbUuid::of(endpoint.team_id), DbUuid::of(endpoint.id));
        Ok(crate::replace_if_unchanged!(
            self,
            webhook_endpoints,
            the_endpoint!(team, id),
            read_at,
            endpoint_values!(endpoint)
        ))
    }

    #[tracing::instrument(skip(self))]
    async fn delete_endpoint(&self, team: TeamId, id: WebhookEndpointId) -> Result<bool, StoreError> {
        // Its deliveries go with it (ON DELETE CASCADE); their jobs find nothing to send.
        let deleted = db_run!(self, |conn| diesel::delete(the_endpoint!(DbUuid::of(team), DbUuid::of(id)))
            .execute(conn)
            .await
            .or_store()?);
        Ok(deleted == 1)
    }

    #[tracing::instrument(skip_all, fields(%team, %endpoint))]
    async fn queue_test(
        &self,
        team: TeamId,
        endpoint: WebhookEndpointId,
        event: &NewEvent,
    ) -> Result<Option<WebhookDelivery>, StoreError> {
        let at = event.occurred_at;
        let delivery = WebhookDelivery::pending(team, endpoint, event.id, event.kind, at);
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                // Dispatched already: it goes to this endpoint only.
                diesel::insert_into(events::table)
                    .values((
                        events::team_id.eq(DbUuid::of(team)),
                        events::id.eq(DbUuid::of(event.id)),
                        events::kind.eq(event.kind.as_str()),
                        events::subject_id.eq(DbUuid(event.subject)),
                        events::thread.eq(&event.thread),
                        events::data.eq(&event.data),
                        events::owner_id.eq(event.owner.map(DbUuid::of)),
                        events::occurred_at.eq(at),
                        events::dispatched_at.eq(Some(at)),
                    ))
                    .execute(conn)
                    .await?;
                diesel::insert_into(webhook_deliveries::table)
                    .values((
                        webhook_deliveries::team_id.eq(DbUuid::of(team)),
                        webhook_deliveries::id.eq(DbUuid::of(delivery.id)),
                        webhook_deliveries::endpoint_id.eq(DbUuid::of(endpoint)),
                        webhook_deliveries::event_id.eq(DbUuid::of(event.id)),
                        webhook_deliveries::event_type.eq(event.kind.as_str()),
                        webhook_deliveries::status.eq(DeliveryStatus::Pending.as_str()),
                        webhook_deliveries::attempts.eq(0),
                        webhook_deliveries::next_attempt_at.eq(Some(at)),
                        webhook_deliveries::created_at.eq(at),
                    ))
                    .execute(conn)
                    .await?;
                insert_job!(conn, &NewJob::new(team, JobKind::Webhook, delivery.id.as_uuid(), at));
                Ok::<_, diesel::result::Error>(())
            })
            .await);
        match done {
            Ok(()) => self.signalling(Ok(Some(delivery))),
            // No such endpoint of the team.
            Err(error) if violation(&error) == Some(DatabaseErrorKind::ForeignKeyViolation) => Ok(None),
            Err(error) => Err(crate::store_error(error)),
        }
    }

    #[tracing::instrument(skip(self))]
    async fn list_deliveries(
        &self,
        team: TeamId,
        endpoint: WebhookEndpointId,
        filter: &DeliveryFilter,
    ) -> Result<Vec<WebhookDelivery>, StoreError> {
        let rows: Vec<DeliveryRow> = db_run!(self, |conn| {
            let mut query = webhook_deliveries::table
                .filter(webhook_deliveries::team_id.eq(DbUuid::of(team)))
                .filter(webhook_deliveries::endpoint_id.eq(DbUuid::of(endpoint)))
                .order(webhook_deliveries::id.desc())
                .limit(i64::from(filter.limit))
                .into_boxed();
            if let Some(status) = filter.status {
                query = query.filter(webhook_deliveries::status.eq(status.as_str()));
            }
            if let Some(before) = filter.before {
                query = query.filter(webhook_deliveries::id.lt(DbUuid::of(before)));
            }
            query.load(conn).await.or_store()?
        });
        rows.into_iter().map(WebhookDelivery::try_from).collect()
    }

    #[tracing::instrument(skip(self))]
    async fn redeliver(
        &self,
        team: TeamId,
        endpoint: WebhookEndpointId,
        delivery: WebhookDeliveryId,
        at: DateTime<Utc>,
    ) -> Result<WebhookDelivery, RedeliverError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let mine = webhook_deliveries::table
                    .filter(webhook_deliveries::team_id.eq(DbUuid::of(team)))
                    .filter(webhook_deliveries::endpoint_id.eq(DbUuid::of(endpoint)))
                    .filter(webhook_deliveries::id.eq(DbUuid::of(delivery)));
                let row: Option<DeliveryRow> = diesel::update(
                    mine.filter(webhook_deliveries::status.ne(DeliveryStatus::Pending.as_str())),
                )
                .set((
                    webhook_deliveries::status.eq(DeliveryStatus::Pending.as_str()),
                    webhook_deliveries::next_attempt_at.eq(Some(at)),
                ))
                .returning(webhook_deliveries::all_columns)
                .get_result(conn)
                .await
                .optional()?;
                let Some(row) = row else {
                    let exists: Option<String> =
                        mine.select(webhook_deliveries::status).first(conn).await.optional()?;
                    return Err(TxError::Refused(if exists.is_some() {
                        RedeliverError::Pending
                    } else {
                        RedeliverError::NotFound
                    }));
                };
                let disabled: Option<Option<DateTime<Utc>>> =
                    the_endpoint!(DbUuid::of(team), DbUuid::of(endpoint))
                        .select(webhook_endpoints::disabled_at)
                        .first(conn)
                        .await
                        .optional()?;
                if disabled.flatten().is_some() {
                    return Err(TxError::Refused(RedeliverError::Disabled));
                }
                insert_job!(conn, &NewJob::new(team, JobKind::Webhook, delivery.as_uuid(), at));
                WebhookDelivery::try_from(row).map_err(|e| TxError::Refused(e.into()))
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    #[tracing::instrument(skip_all, fields(job = %job.id, attempt = job.attempt))]
    async fn start_delivery(&self, job: &ClaimedJob) -> Result<Option<OutgoingDelivery>, StoreError> {
        let team = DbUuid::of(job.team_id);
        let found: Option<(DeliveryRow, EndpointRow, EventRow, Makers)> = db_run!(self, |conn| {
            let delivery: Option<DeliveryRow> = webhook_deliveries::table
                .filter(webhook_deliveries::team_id.eq(team))
                .filter(webhook_deliveries::id.eq(DbUuid(job.subject)))
                .first(conn)
                .await
                .optional()
                .or_store()?;
            match delivery {
                None => None,
                Some(delivery) => {
                    let endpoint: Option<EndpointRow> =
                        the_endpoint!(team, delivery.endpoint_id).first(conn).await.optional().or_store()?;
                    let event: Option<EventRow> = events::table
                        .filter(events::team_id.eq(team))
                        .filter(events::id.eq(delivery.event_id))
                        .first(conn)
                        .await
                        .optional()
                        .or_store()?;
                    // Who the endpoint's maker is in the team now decides what it may get.
                    let makers = load_makers!(conn, &[team]).or_store()?;
                    endpoint.zip(event).map(|(endpoint, event)| (delivery, endpoint, event, makers))
                }
            }
        });
        let Some((delivery, endpoint, event, makers)) = found else { return Ok(None) };
        let endpoint = endpoint.endpoint(&makers)?;
        Ok(Some(OutgoingDelivery {
            delivery: delivery.try_into()?,
            reader: makers.actor(team, endpoint.created_by),
            endpoint,
            event: Event::try_from(event)?,
        }))
    }

    #[tracing::instrument(skip_all, fields(job = %job.id, attempt = job.attempt))]
    async fn finish_delivery(
        &self,
        job: &ClaimedJob,
        report: &AttemptReport,
        finish: &Finish,
        disable: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let team = DbUuid::of(job.team_id);
        let (status, next) = match finish {
            Finish::Done => (DeliveryStatus::Succeeded, None),
            Finish::Retry { at, .. } => (DeliveryStatus::Pending, Some(*at)),
            Finish::Failed { .. } => (DeliveryStatus::Failed, None),
        };
        let held = db_run!(self, |conn| conn
            .transaction(async |conn| {
                if !finish_job_row!(conn, job, finish, at) {
                    return Ok(false);
                }
                let endpoint: Option<DbUuid> = diesel::update(
                    webhook_deliveries::table
                        .filter(webhook_deliveries::team_id.eq(team))
                        .filter(webhook_deliveries::id.eq(DbUuid(job.subject))),
                )
                .set((
                    webhook_deliveries::status.eq(status.as_str()),
                    webhook_deliveries::attempts.eq(webhook_deliveries::attempts + 1),
                    webhook_deliveries::response_status.eq(report.response_status.map(i32::from)),
                    webhook_deliveries::duration_ms
                        .eq(Some(i64::try_from(report.duration_ms).unwrap_or(i64::MAX))),
                    webhook_deliveries::error.eq(report.error.as_deref()),
                    webhook_deliveries::last_attempt_at.eq(Some(at)),
                    webhook_deliveries::next_attempt_at.eq(next),
                ))
                .returning(webhook_deliveries::endpoint_id)
                .get_result(conn)
                .await
                .optional()?;
                if let (Some(endpoint), Some(reason)) = (endpoint, disable) {
                    diesel::update(
                        the_endpoint!(team, endpoint).filter(webhook_endpoints::disabled_at.is_null()),
                    )
                    .set((
                        webhook_endpoints::disabled_at.eq(Some(at)),
                        webhook_endpoints::disabled_reason.eq(Some(reason)),
                        webhook_endpoints::updated_at.eq(at),
                    ))
                    .execute(conn)
                    .await?;
                }
                Ok::<_, diesel::result::Error>(true)
            })
            .await
            .or_store()?);
        if held && next.is_some() {
            self.signal.notify_one();
        }
        Ok(held)
    }
}
