//! [`ClientRepository`] over diesel.

use accounts::TeamId;
use async_trait::async_trait;
use billing::client::{KeptPostalCode, OptionalText, RequiredText};
use billing::{
    Client, ClientDetails, ClientId, ClientRepository, CountryCode, DeleteClientError, ReplaceClientError,
};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::DatabaseErrorKind;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{Email, InvalidValue, StoreError};

use crate::TxError;
use crate::chasing::{record_events, refresh_reminders};
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, db_run, violation};

#[derive(Queryable)]
pub(crate) struct ClientRow {
    team_id: DbUuid,
    id: DbUuid,
    name: String,
    email: String,
    #[expect(dead_code, reason = "the lowercase email, selected for matching")]
    email_key: String,
    phone: String,
    vat_number: String,
    line1: String,
    line2: String,
    line3: String,
    postal_code: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    reminders_enabled: bool,
    city: String,
    country_code: Option<String>,
    buyer_reference: String,
    currency: Option<String>,
    payment_terms_days: Option<i32>,
    peppol_id: Option<String>,
    language: Option<String>,
}

impl TryFrom<ClientRow> for Client {
    type Error = StoreError;
    fn try_from(row: ClientRow) -> Result<Self, StoreError> {
        let details = (|| -> Result<ClientDetails, InvalidValue> {
            Ok(ClientDetails {
                name: RequiredText::from_stored(row.name)?,
                email: Email::parse(row.email)?,
                phone: OptionalText::from_stored(row.phone)?,
                vat_number: OptionalText::from_stored(row.vat_number)?,
                line1: OptionalText::from_stored(row.line1)?,
                line2: OptionalText::from_stored(row.line2)?,
                line3: OptionalText::from_stored(row.line3)?,
                postal_code: KeptPostalCode::from_stored(row.postal_code)?,
                city: OptionalText::from_stored(row.city)?,
                country_code: row.country_code.as_deref().map(CountryCode::parse).transpose()?,
                buyer_reference: OptionalText::from_stored(row.buyer_reference)?,
                reminders_enabled: row.reminders_enabled,
                currency: row.currency.as_deref().map(accounts::Currency::parse).transpose()?,
                payment_terms: row
                    .payment_terms_days
                    .map(|days| billing::client::PaymentTerms::new(i64::from(days)))
                    .transpose()?,
                peppol_id: row.peppol_id.as_deref().map(billing::peppol::PeppolId::parse).transpose()?,
                language: row.language.as_deref().map(billing::client::language).transpose()?,
            })
        })()
        .map_err(|e| StoreError::Unexpected(anyhow::anyhow!("stored client is invalid: {e}")))?;
        Ok(Client {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            details,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

macro_rules! details_values {
    ($details:expr) => {
        (
            clients::name.eq($details.name.as_str()),
            clients::email.eq($details.email.as_str()),
            clients::email_key.eq($details.email.normalized()),
            clients::phone.eq($details.phone.as_str()),
            clients::vat_number.eq($details.vat_number.as_str()),
            clients::line1.eq($details.line1.as_str()),
            clients::line2.eq($details.line2.as_str()),
            clients::line3.eq($details.line3.as_str()),
            clients::postal_code.eq($details.postal_code.as_str()),
            clients::reminders_enabled.eq($details.reminders_enabled),
            clients::city.eq($details.city.as_str()),
            clients::country_code.eq($details.country_code.map(billing::CountryCode::as_str)),
            clients::buyer_reference.eq($details.buyer_reference.as_str()),
            clients::currency.eq($details.currency.map(|currency| currency.as_str())),
            clients::payment_terms_days.eq($details.payment_terms.map(|terms| i32::from(terms.days()))),
            clients::peppol_id.eq($details.peppol_id.as_ref().map(ToString::to_string)),
            clients::language.eq($details.language.map(|language| language.code())),
        )
    };
}

/// Inserts `$client`; evaluates to the diesel result. Also used by the invoice
/// transaction that makes an inline client.
macro_rules! insert_client {
    ($conn:ident, $client:expr) => {
        diesel::insert_into(clients::table)
            .values((
                clients::team_id.eq(DbUuid::of($client.team_id)),
                clients::id.eq(DbUuid::of($client.id)),
                details_values!($client.details),
                clients::created_at.eq($client.created_at),
                clients::updated_at.eq($client.updated_at),
            ))
            .execute($conn)
            .await
    };
}
/// The team's client `$id` (a `DbUuid`), in a transaction: `?` on diesel's errors, then a
/// `Result<Option<Client>, StoreError>`.
macro_rules! load_client {
    ($conn:ident, $team:expr, $id:expr) => {{
        let row: Option<$crate::clients::ClientRow> = clients::table
            .filter(clients::team_id.eq($team))
            .filter(clients::id.eq($id))
            .first($conn)
            .await
            .optional()?;
        row.map(billing::Client::try_from).transpose()
    }};
}
pub(crate) use {details_values, insert_client, load_client};

#[async_trait]
impl ClientRepository for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn list(&self, team: TeamId) -> Result<Vec<Client>, StoreError> {
        let rows: Vec<ClientRow> = db_run!(self, |conn| clients::table
            .filter(clients::team_id.eq(DbUuid::of(team)))
            .load(conn)
            .await
            .or_store()?);
        let mut clients = rows.into_iter().map(Client::try_from).collect::<Result<Vec<_>, _>>()?;
        billing::sort_for_listing(&mut clients);
        Ok(clients)
    }

    #[tracing::instrument(skip(self))]
    async fn get(&self, team: TeamId, id: ClientId) -> Result<Option<Client>, StoreError> {
        let row: Option<ClientRow> = db_run!(self, |conn| clients::table
            .filter(clients::team_id.eq(DbUuid::of(team)))
            .filter(clients::id.eq(DbUuid::of(id)))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(Client::try_from).transpose()
    }

    #[tracing::instrument(skip_all, fields(team = %client.team_id, client = %client.id))]
    async fn create(&self, client: &Client) -> Result<(), StoreError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                insert_client!(conn, client)?;
                record_events!(
                    conn,
                    notify::raise::client_created(client).events(&*self.describe, client.created_at)
                );
                Ok::<_, diesel::result::Error>(())
            })
            .await
            .or_store());
        self.signalling(done)
    }

    #[tracing::instrument(skip(self, details))]
    async fn replace(
        &self,
        team: TeamId,
        id: ClientId,
        details: &ClientDetails,
        now: DateTime<Utc>,
    ) -> Result<Client, ReplaceClientError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let row: Option<ClientRow> = diesel::update(
                    clients::table
                        .filter(clients::team_id.eq(DbUuid::of(team)))
                        .filter(clients::id.eq(DbUuid::of(id))),
                )
                .set((details_values!(details), clients::updated_at.eq(now)))
                .get_result(conn)
                .await
                .optional()?;
                let Some(row) = row else { return Err(TxError::Refused(ReplaceClientError::NotFound)) };
                let client = Client::try_from(row).map_err(|e| TxError::Refused(e.into()))?;
                // Its consent to reminders may have changed: so may its invoices' next ones.
                refresh_reminders!(
                    conn,
                    team,
                    invoices::client_id.eq(DbUuid::of(id)).and(invoices::due_date.is_not_null()),
                    TxError<ReplaceClientError>
                );
                record_events!(conn, notify::raise::client_updated(&client).events(&*self.describe, now));
                Ok::<_, TxError<ReplaceClientError>>(client)
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    #[tracing::instrument(skip(self))]
    async fn delete(&self, team: TeamId, id: ClientId, at: DateTime<Utc>) -> Result<(), DeleteClientError> {
        let result = db_run!(self, |conn| conn
            .transaction(async |conn| {
                // The client's row, locked by a write that changes nothing: on SQLite a read
                // before the first write fails ("database is locked") after another write.
                diesel::update(
                    clients::table
                        .filter(clients::team_id.eq(DbUuid::of(team)))
                        .filter(clients::id.eq(DbUuid::of(id))),
                )
                .set(clients::name.eq(clients::name))
                .execute(conn)
                .await?;
                // Projects refer to their client with a restricting foreign key too: asked
                // first, so that the refusal says which.
                let has_projects: bool = diesel::select(diesel::dsl::exists(
                    projects::table
                        .filter(projects::team_id.eq(DbUuid::of(team)))
                        .filter(projects::client_id.eq(DbUuid::of(id))),
                ))
                .get_result(conn)
                .await?;
                if has_projects {
                    return Err(TxError::Refused(DeleteClientError::HasProjects));
                }
                let row: Option<ClientRow> = diesel::delete(
                    clients::table
                        .filter(clients::team_id.eq(DbUuid::of(team)))
                        .filter(clients::id.eq(DbUuid::of(id))),
                )
                .get_result(conn)
                .await
                .optional()?;
                let Some(row) = row else { return Err(TxError::Refused(DeleteClientError::NotFound)) };
                let client = Client::try_from(row).map_err(|e| TxError::Refused(e.into()))?;
                record_events!(conn, notify::raise::client_deleted(&client).events(&*self.describe, at));
                Ok::<_, TxError<DeleteClientError>>(())
            })
            .await);
        let result = match result {
            Ok(()) => Ok(()),
            // Invoices refer to their client with a restricting foreign key (and so does a
            // project filed under it since the check above).
            Err(TxError::Db(e)) if violation(&e) == Some(DatabaseErrorKind::ForeignKeyViolation) => {
                Err(DeleteClientError::HasInvoices)
            }
            Err(error) => Err(error.into_port()),
        };
        self.signalling(result)
    }
}
