//! Handlers, one module per resource, and what they share: the error responses every
//! keyed endpoint documents, id parsing, timestamps.

pub(crate) mod agent;
pub(crate) mod banking;
pub(crate) mod billed_time;
pub(crate) mod cards;
pub(crate) mod clients;
pub(crate) mod credit_notes;
pub(crate) mod discounts;
pub(crate) mod einvoices;
pub(crate) mod invoices;
pub(crate) mod messages;
pub(crate) mod numbers;
pub(crate) mod ops;
pub(crate) mod page;
pub(crate) mod payment_qr;
pub(crate) mod payments;
pub(crate) mod pdf;
pub(crate) mod quote_page;
pub(crate) mod quotes;
pub(crate) mod recurring;
pub(crate) mod refusals;
pub(crate) mod reminders;
pub(crate) mod team;
pub(crate) mod track;
pub(crate) mod vat_report;
pub(crate) mod webhooks;

use actix_web::HttpResponse;
use actix_web::http::{StatusCode, header};
use chrono::{DateTime, SecondsFormat, Utc};
use kernel::{FieldError, Id};
use serde::Serialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{IntoResponses, ToSchema};

use crate::conventions::error::{ApiError, ErrorBody};

/// Answer of a successful delete.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Deleted {
    pub(crate) message: String,
}

impl Deleted {
    pub(crate) fn new(what: &str) -> actix_web::web::Json<Self> {
        actix_web::web::Json(Self::of(what))
    }

    pub(crate) fn of(what: &str) -> Self {
        Self { message: format!("{what} deleted") }
    }
}

/// A timestamp as responses show it: RFC 3339 in UTC with milliseconds,
/// `2026-11-20T09:30:00.000Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timestamp(pub(crate) DateTime<Utc>);

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // A listing writes thousands: formatted on the stack, not through `fmt`.
        let mut text = [0_u8; 24];
        match self.write_into(&mut text) {
            Some(text) => serializer.serialize_str(text),
            None => serializer.serialize_str(&self.text()),
        }
    }
}

impl Timestamp {
    /// The timestamp as responses write it.
    pub(crate) fn text(self) -> String {
        let mut text = [0_u8; 24];
        match self.write_into(&mut text) {
            Some(text) => text.to_owned(),
            None => self.0.to_rfc3339_opts(SecondsFormat::Millis, true),
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` written into `text`, for the years 0 to 9999 (others are
    /// `None`: their year takes another width).
    fn write_into(self, text: &mut [u8; 24]) -> Option<&str> {
        use chrono::{Datelike, Timelike};
        let (at, year) = (self.0, self.0.year());
        if !(0..=9999).contains(&year) {
            return None;
        }
        // A leap second's millisecond reads 1000 and up: shown as chrono shows it.
        let millis = at.timestamp_subsec_millis();
        if millis > 999 {
            return None;
        }
        let parts = [
            (0, 4, year.unsigned_abs()),
            (5, 2, at.month()),
            (8, 2, at.day()),
            (11, 2, at.hour()),
            (14, 2, at.minute()),
            (17, 2, at.second()),
            (20, 3, millis),
        ];
        text.copy_from_slice(b"0000-00-00T00:00:00.000Z");
        for (start, width, mut value) in parts {
            for digit in text[start..start + width].iter_mut().rev() {
                *digit = b'0' + u8::try_from(value % 10).unwrap_or(0);
                value /= 10;
            }
        }
        std::str::from_utf8(text).ok()
    }
}

impl utoipa::PartialSchema for Timestamp {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .description(Some("RFC 3339, UTC, milliseconds."))
            .examples(["2026-11-20T09:30:00.000Z"])
            .into()
    }
}

impl ToSchema for Timestamp {}

/// 201 with the new resource and its `Location`.
pub(crate) fn created(location: String, body: impl Serialize) -> HttpResponse {
    HttpResponse::Created().insert_header((header::LOCATION, location)).json(body)
}

/// The id in a request path: a malformed one is reported like an unknown one.
pub(crate) fn path_id<I: Id>(text: &str, what: &str) -> Result<I, ApiError> {
    I::parse(text).ok_or_else(|| not_found(what))
}

/// 404 `"<what> not found"`.
pub(crate) fn not_found(what: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, format!("{what} not found"))
}

/// An id given in a body field: malformed or another team's, it names the field.
pub(crate) fn body_id<I: Id>(text: &str, field: &str, what: &str) -> Result<I, FieldError> {
    I::parse(text).ok_or_else(|| no_such(field, what))
}

/// The 400 for a body field naming something the team does not have.
pub(crate) fn no_such(field: &str, what: &str) -> FieldError {
    FieldError::new(field, format!("no such {what} in the team"))
}

/// An id given as a query parameter.
pub(crate) fn query_id<I: Id>(text: Option<&str>, field: &str) -> Result<Option<I>, FieldError> {
    text.map(|text| I::parse(text).ok_or_else(|| FieldError::new(field, "must be a UUID"))).transpose()
}

/// A UTC day `YYYY-MM-DD` given as a query parameter: four digits of year (0001 to 9999),
/// two of month, two of day, and nothing else (chrono alone would take a sign, a longer
/// year or leading blanks).
pub(crate) fn query_day(text: &str, field: &str) -> Result<chrono::NaiveDate, FieldError> {
    let shaped = text.len() == 10
        && text
            .bytes()
            .enumerate()
            .all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    let day = shaped
        .then(|| chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
        .flatten()
        .ok_or_else(|| FieldError::new(field, "must be a date YYYY-MM-DD"))?;
    // The year 0000 is a date by RFC 3339, but no instant the API keeps lies in it.
    if chrono::Datelike::year(&day) < 1 {
        return Err(FieldError::new(field, "must fall in the years 0001 to 9999"));
    }
    Ok(day)
}

/// The UTC days `from` to `to` (texts `YYYY-MM-DD` of the fields so named), both included,
/// as a period: at most `most` days when given.
pub(crate) fn days(from: &str, to: &str, most: Option<i64>) -> Result<tracking::Period, FieldError> {
    let (first, last) = (query_day(from, "from")?, query_day(to, "to")?);
    let days = (last - first).num_days() + 1;
    if days < 1 {
        return Err(FieldError::new("to", "must not be before from"));
    }
    if let Some(most) = most.filter(|most| days > *most) {
        return Err(FieldError::new("to", format!("the period may be at most {most} days")));
    }
    let end = last.succ_opt().ok_or_else(|| FieldError::new("to", "is too far in the future"))?;
    Ok(tracking::Period::new(midnight(first), midnight(end)))
}

/// The instant a UTC day starts.
pub(crate) fn midnight(day: chrono::NaiveDate) -> DateTime<Utc> {
    day.and_time(chrono::NaiveTime::MIN).and_utc()
}

/// A listing's `q`, as a search.
pub(crate) fn query_search(text: Option<&str>) -> Result<Option<kernel::SearchText>, FieldError> {
    text.map(|text| kernel::SearchText::parse(text).map_err(|e| e.at("q"))).transpose()
}

/// The failures of a listing that takes query parameters.
#[derive(IntoResponses)]
#[expect(dead_code, reason = "only their OpenAPI description is read")]
pub(crate) enum QueryErrors {
    /// A query parameter is invalid (the message names it), or the cursor is not one this
    /// listing gave.
    #[response(status = 400)]
    Invalid(ErrorBody),
}

/// The failures every keyed endpoint can answer with.
#[derive(IntoResponses)]
#[expect(dead_code, reason = "only their OpenAPI description is read")]
pub(crate) enum KeyedErrors {
    /// Missing, invalid, expired or revoked key.
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// The key lacks the permission the endpoint needs (its scope, or a role rule).
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// Rate limit exceeded.
    #[response(status = 429, headers(("Retry-After" = u64, description = "Seconds to wait")))]
    TooManyRequests(ErrorBody),
    /// Internal error.
    #[response(status = 500)]
    Internal(ErrorBody),
    /// Storage unavailable; retry.
    #[response(status = 503, headers(("Retry-After" = u64, description = "Seconds to wait")))]
    Unavailable(ErrorBody),
    /// The database's disk is full: writes are refused until there is room again.
    #[response(status = 507)]
    InsufficientStorage(ErrorBody),
}

/// The failures of an endpoint that reads a JSON body.
#[derive(IntoResponses)]
#[expect(dead_code, reason = "only their OpenAPI description is read")]
pub(crate) enum BodyErrors {
    /// Invalid input; the message starts with the offending field.
    #[response(status = 400)]
    Invalid(ErrorBody),
    /// The body did not arrive within the server's body deadline (30 s by default); the
    /// connection is closed.
    #[response(status = 408)]
    RequestTimeout(ErrorBody),
    /// Body over 1 MiB.
    #[response(status = 413)]
    TooLarge(ErrorBody),
    /// Body is not `application/json`.
    #[response(status = 415)]
    UnsupportedMediaType(ErrorBody),
}

/// The failure of an endpoint that addresses one resource by id.
#[derive(IntoResponses)]
#[expect(dead_code, reason = "only their OpenAPI description is read")]
pub(crate) enum NotFound {
    /// No such resource in the key's team (a malformed id included).
    #[response(status = 404)]
    NotFound(ErrorBody),
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

    use super::Timestamp;

    fn shown(at: DateTime<Utc>) -> String {
        serde_json::to_value(Timestamp(at)).unwrap().as_str().unwrap().to_owned()
    }

    #[test]
    fn timestamps_read_as_chrono_writes_them() {
        let mut at = Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap();
        // Over ten thousand years, by steps of about two years and an odd number of millis.
        while chrono::Datelike::year(&at) < 9999 {
            assert_eq!(shown(at), at.to_rfc3339_opts(SecondsFormat::Millis, true));
            at += chrono::TimeDelta::milliseconds(63_113_904_123 + 3_601_007);
        }
        let odd = [Utc.timestamp_millis_opt(-62_200_000_000_000).unwrap(), DateTime::<Utc>::MAX_UTC];
        for at in odd {
            assert_eq!(shown(at), at.to_rfc3339_opts(SecondsFormat::Millis, true), "{at:?}");
        }
        assert_eq!(shown(Utc.with_ymd_and_hms(2026, 11, 20, 9, 30, 5).unwrap()), "2026-11-20T09:30:05.000Z");
    }
}
