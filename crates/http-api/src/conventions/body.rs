//! The strict JSON body extractor: content type, size limit, unknown fields, and error
//! messages that name the field as a path.

use std::future::Future;
use std::pin::Pin;

use actix_web::error::{PayloadError, QueryPayloadError};
use actix_web::http::{StatusCode, header};
use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use kernel::FieldError;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::conventions::error::ApiError;

/// Largest request body accepted, in bytes (1 MiB).
pub const BODY_LIMIT: usize = 1024 * 1024;

/// A request body parsed from JSON into `T`. Types used with it deny unknown fields.
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let content_type_ok = is_json(req);
        let bytes = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            if !content_type_ok {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "content-type: must be application/json",
                ));
            }
            let bytes = bytes.await.map_err(|error| unread_body(&error))?;
            parse(&bytes).map(Json)
        })
    }
}

/// A request body that may be left out: an empty body is `T::default()`; any other is
/// read exactly as [`Json`] reads it (content type, size, unknown fields). A type taken so
/// belongs in `OPTIONAL_BODIES` of the OpenAPI document, which marks its body optional.
#[derive(Debug)]
pub struct OptionalJson<T>(pub T);

impl<T: DeserializeOwned + Default + 'static> FromRequest for OptionalJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = is_json(req);
        let bytes = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            let bytes = bytes.await.map_err(|error| unread_body(&error))?;
            if bytes.is_empty() {
                return Ok(Self(T::default()));
            }
            if !json {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "content-type: must be application/json",
                ));
            }
            parse(&bytes).map(OptionalJson)
        })
    }
}

/// Whether the request says its body is JSON.
fn is_json(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
        })
}

/// Why a body could not be read: too long (413), or cut off (400).
pub(crate) fn unread_body(error: &actix_web::Error) -> ApiError {
    match error.as_error::<PayloadError>() {
        Some(PayloadError::Overflow) => {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("body: must be at most {BODY_LIMIT} bytes"))
        }
        _ => ApiError::new(StatusCode::BAD_REQUEST, "body: could not be read"),
    }
}

/// A query string that does not parse (a repeated parameter, a number that is none): a
/// 400 naming the query, as a body's errors name the body.
pub(crate) fn query_error(error: QueryPayloadError, _: &HttpRequest) -> actix_web::Error {
    query_refusal(error).into()
}

/// [`query_error`]'s answer, for a handler that reads its query itself.
pub(crate) fn query_refusal(error: QueryPayloadError) -> ApiError {
    let detail = match error {
        QueryPayloadError::Deserialize(error) => error.to_string(),
        other => other.to_string(),
    };
    let message = match quoted_after(&detail, "unknown field `") {
        Some(name) => not_accepted(name, name, &accepted_names(&detail)),
        None => format!("query: {detail}"),
    };
    ApiError::new(StatusCode::BAD_REQUEST, message)
}

/// The names serde lists after "expected" in an unknown field's message.
fn accepted_names(message: &str) -> Vec<&str> {
    let listed = message.split_once(", expected").map_or("", |(_, rest)| rest);
    listed.split('`').skip(1).step_by(2).collect()
}

/// A field of a partial update: left out, set to `null`, or given a value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Patch<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Only reached when the field is present; `#[serde(default)]` covers absence.
        Ok(Option::<T>::deserialize(deserializer)?.map_or(Self::Null, Self::Value))
    }
}

impl<T> Patch<T> {
    /// For a nullable field: `None` to leave it, `Some(None)` to clear it.
    pub fn nullable(self) -> Option<Option<T>> {
        match self {
            Self::Absent => None,
            Self::Null => Some(None),
            Self::Value(value) => Some(Some(value)),
        }
    }

    /// For a field that cannot be cleared: `null` is refused, naming `field`.
    pub fn required(self, field: &str) -> Result<Option<T>, FieldError> {
        match self {
            Self::Absent => Ok(None),
            Self::Null => Err(FieldError::new(field, "must not be null")),
            Self::Value(value) => Ok(Some(value)),
        }
    }
}

/// Parses `bytes` as `T`, naming the offending field on failure.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // serde reads a struct from an array too (`["a"]`); a body is an object.
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|b| *b != b'{') && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "body: must be a JSON object"));
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        ApiError::new(StatusCode::BAD_REQUEST, describe(&path, error.inner()))
    })?;
    deserializer.end().map_err(|error| ApiError::new(StatusCode::BAD_REQUEST, describe(".", &error)))?;
    Ok(value)
}

/// A body already read as JSON (a tool's arguments) as [`parse`] reads bytes, with the same
/// messages.
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        ApiError::new(StatusCode::BAD_REQUEST, describe(&path, error.inner()))
    })
}

/// `field: message` for a `serde_json` error found at `path` (`.` when at the top).
fn describe(path: &str, error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let text = error.to_string();
    // serde_json appends the position; the field path says more.
    let text = text.rfind(" at line ").map_or(text.as_str(), |at| &text[..at]);
    let here = if path == "." { "" } else { path };
    let join = |name: &str| if here.is_empty() { name.to_owned() } else { format!("{here}.{name}") };
    match error.classify() {
        Category::Syntax | Category::Eof | Category::Io => format!("body: malformed JSON: {text}"),
        Category::Data => {
            if let Some(name) = quoted_after(text, "unknown field `") {
                let field = if here.ends_with(name) { here.to_owned() } else { join(name) };
                match never_sent(name) {
                    Some(why) => format!("{field}: not accepted; {why}"),
                    None => not_accepted(&field, name, &accepted_names(text)),
                }
            } else if let Some(name) = quoted_after(text, "missing field `") {
                format!("{}: is required", join(name))
            } else if here.is_empty() {
                format!("body: {}", in_json_words(text))
            } else {
                format!("{here}: {}", in_json_words(text))
            }
        }
    }
}

/// serde's wording put in JSON's words: no Rust type reaches a client (`expected struct
/// TagInput` is `expected an object`, `sequence` an `array`, `u32` a range of whole
/// numbers).
fn in_json_words(text: &str) -> String {
    if text.contains("did not match any variant of untagged enum") {
        return "is not of an accepted form".to_owned();
    }
    let (found, expected) = text.split_once(", expected ").map_or((text, None), |(f, e)| (f, Some(e)));
    let found = found
        .replace("invalid type: sequence", "invalid type: array")
        .replace("invalid type: map", "invalid type: object")
        .replace("unit value", "null")
        .replace("floating point", "number");
    let Some(expected) = expected else { return found };
    let range = |low: &str, high: &str| format!("a whole number from {low} to {high}");
    let expected = match expected {
        "u8" => range("0", "255"),
        "u16" => range("0", "65535"),
        "u32" => range("0", "4294967295"),
        "u64" | "usize" => range("0", "18446744073709551615"),
        "i32" => range("-2147483648", "2147483647"),
        "i64" | "isize" => range("-9223372036854775808", "9223372036854775807"),
        "f32" | "f64" => "a number".to_owned(),
        "a sequence" => "an array".to_owned(),
        "a map" => "an object".to_owned(),
        "unit" => "null".to_owned(),
        other if other.starts_with("struct ") || other.starts_with("tuple struct ") => "an object".to_owned(),
        other if other.starts_with("enum ") => "a string".to_owned(),
        other => other.to_owned(),
    };
    format!("{found}, expected {expected}")
}

/// `field: not accepted`, and what to send instead: the accepted name `name` was likely
/// meant for (`postcode: not accepted; did you mean postalCode?`), else the accepted names.
/// `field` is the path of the refused name, `name` its last part.
pub(crate) fn not_accepted(field: &str, name: &str, accepted: &[&str]) -> String {
    // A `PUT` of `{id, data}` sent the changes at the top.
    if accepted == ["id", "data"] && field == name {
        return format!(
            "{field}: not accepted; send the changes inside data: {{\"id\": \"<the id in the path>\", \"data\": {{\"{name}\": …}}}}"
        );
    }
    match nearest(name, accepted) {
        Some(meant) => format!("{field}: not accepted; did you mean {meant}?"),
        None if accepted.is_empty() => format!("{field}: not accepted"),
        None => format!("{field}: not accepted; accepted: {}", accepted.join(", ")),
    }
}

/// Why a body field that answers show is never sent: the server or a rule sets it. (Not
/// for query parameters: `?billed=` is a misspelt filter, not a field to leave out.)
fn never_sent(name: &str) -> Option<&'static str> {
    Some(match name {
        "teamId" | "createdAt" | "updatedAt" => "the server sets it",
        "subtotal" | "total" => "it is computed from the line items and the tax",
        "currency" => {
            "an invoice is in its client's currency: the client's currency, or the team's for a client that states none (PATCH /v1/invoices/clients/{id}, PATCH /v1/team)"
        }
        "invoiceId" | "billed" => "billing sets it (POST /v1/invoices/from-time)",
        _ => return None,
    })
}

/// The accepted name closest to `name`: the same but for case and `_` or `-`
/// (`project_id`, `projectID` for `projectId`), else one a few edits away.
fn nearest<'a>(name: &str, accepted: &[&'a str]) -> Option<&'a str> {
    let plain = |text: &str| {
        text.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect::<String>()
    };
    let wanted = plain(name);
    if let Some(same) = accepted.iter().find(|candidate| plain(candidate) == wanted) {
        return Some(same);
    }
    // At most one edit in three characters: `postcode` → `postalcode` (2 of 8) and `state`
    // → `status` (2 of 5) are meant, `id` → `q` (2 of 2) is not.
    let most = wanted.chars().count().div_ceil(3).max(1);
    accepted
        .iter()
        .map(|candidate| (strsim::damerau_levenshtein(&wanted, &plain(candidate)), *candidate))
        .filter(|(distance, _)| *distance <= most && *distance < wanted.len())
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

fn quoted_after<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(prefix)?;
    rest.split('`').next()
}

/// A JSON integer from `min` to `max` at `field`, however it is written: JSON Schema's
/// integers include `60.0` and `6e1`, which serde's integers refuse.
pub(crate) fn whole_in(
    number: &serde_json::Number,
    field: &str,
    min: i64,
    max: i64,
) -> Result<i64, FieldError> {
    kernel::number::whole_number(&number.to_string())
        .filter(|whole| (i128::from(min)..=i128::from(max)).contains(whole))
        .and_then(|whole| i64::try_from(whole).ok())
        .ok_or_else(|| FieldError::new(field, format!("must be a whole number from {min} to {max}")))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::parse;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[expect(dead_code, reason = "the fields are only deserialized")]
    struct Item {
        quantity: u32,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[expect(dead_code, reason = "the fields are only deserialized")]
    struct Body {
        name: String,
        #[serde(default)]
        line_items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Update {
        #[serde(default)]
        note: super::Patch<String>,
    }

    #[test]
    fn patch_fields_tell_absent_from_null() {
        use super::Patch;
        let note = |json: &str| parse::<Update>(json.as_bytes()).unwrap().note;
        assert_eq!(note("{}"), Patch::Absent);
        assert_eq!(note(r#"{"note": null}"#), Patch::Null);
        assert_eq!(note(r#"{"note": "x"}"#), Patch::Value("x".to_owned()));
        assert_eq!(Patch::<u8>::Null.required("note").unwrap_err().to_string(), "note: must not be null");
        assert_eq!(Patch::Value(1).nullable(), Some(Some(1)));
        assert_eq!(Patch::<u8>::Absent.nullable(), None);
    }

    fn error_of(json: &str) -> String {
        parse::<Body>(json.as_bytes()).unwrap_err().message().to_owned()
    }

    #[test]
    fn names_the_field_of_each_failure() {
        assert_eq!(error_of("{}"), "name: is required");
        assert_eq!(error_of(r#"{"name": 5}"#), "name: invalid type: integer `5`, expected a string");
        assert_eq!(
            error_of(r#"{"name": "a", "subtotal": 1}"#),
            "subtotal: not accepted; it is computed from the line items and the tax"
        );
        assert_eq!(
            error_of(r#"{"name": "a", "colour": 1}"#),
            "colour: not accepted; accepted: name, lineItems"
        );
        assert_eq!(
            error_of(r#"{"name": "a", "lineItems": [{"quantity": 1}, {"quantity": -1}]}"#),
            "lineItems[1].quantity: invalid value: integer `-1`, expected a whole number from 0 to 4294967295"
        );
        assert_eq!(error_of(r#"{"name": "a", "lineItems": [{}]}"#), "lineItems[0].quantity: is required");
        assert_eq!(
            error_of(r#"{"name": "a", "lineItems": [{"quantity": 1, "x": 2}]}"#),
            "lineItems[0].x: not accepted; accepted: quantity"
        );
    }

    #[test]
    fn an_unknown_name_points_to_the_accepted_one_meant() {
        use super::not_accepted;
        let client = ["name", "email", "phone", "vatNumber", "line1", "line2", "line3", "postalCode"];
        let said = |name: &str| not_accepted(name, name, &client);
        assert_eq!(said("postcode"), "postcode: not accepted; did you mean postalCode?");
        assert_eq!(said("postal_code"), "postal_code: not accepted; did you mean postalCode?");
        assert_eq!(said("VAT_NUMBER"), "VAT_NUMBER: not accepted; did you mean vatNumber?");
        assert_eq!(said("emial"), "emial: not accepted; did you mean email?");
        assert_eq!(said("line_1"), "line_1: not accepted; did you mean line1?");
        assert_eq!(
            said("country"),
            "country: not accepted; accepted: name, email, phone, vatNumber, line1, line2, line3, postalCode"
        );
        // A query parameter or a tool's argument gets no hint meant for a body.
        assert_eq!(
            said("teamId"),
            "teamId: not accepted; accepted: name, email, phone, vatNumber, line1, line2, line3, postalCode"
        );
        assert_eq!(error_of(r#"{"name": "a", "teamId": "x"}"#), "teamId: not accepted; the server sets it");
        assert_eq!(not_accepted("id", "id", &["q"]), "id: not accepted; accepted: q");
        assert_eq!(not_accepted("x", "x", &["q"]), "x: not accepted; accepted: q");
        assert_eq!(not_accepted("x", "x", &[]), "x: not accepted");
        assert_eq!(
            not_accepted("title", "title", &["id", "data"]),
            r#"title: not accepted; send the changes inside data: {"id": "<the id in the path>", "data": {"title": …}}"#
        );
        assert_eq!(
            error_of(r#"{"name": "a", "line_items": []}"#),
            "line_items: not accepted; did you mean lineItems?"
        );
    }

    #[test]
    fn no_message_names_a_rust_type() {
        assert_eq!(
            error_of(r#"{"name": "a", "lineItems": {}}"#),
            "lineItems: invalid type: object, expected an array"
        );
        assert_eq!(
            error_of(r#"{"name": "a", "lineItems": ["x"]}"#),
            "lineItems[0]: invalid type: string \"x\", expected an object"
        );
        assert_eq!(
            error_of(r#"{"name": "a", "lineItems": [{"quantity": 1.5}]}"#),
            "lineItems[0].quantity: invalid type: number `1.5`, expected a whole number from 0 to 4294967295"
        );
        assert_eq!(error_of(r#"{"name": []}"#), "name: invalid type: array, expected a string");
        assert_eq!(
            error_of(r#"{"name": "a", "lineItems": null}"#),
            "lineItems: invalid type: null, expected an array"
        );
    }

    #[test]
    fn malformed_json_is_reported_on_the_body() {
        assert!(error_of(r#"{"name": "#).starts_with("body: malformed JSON"));
        assert!(error_of("").starts_with("body: malformed JSON"));
        assert!(error_of(r#"{"name": "a"} trailing"#).starts_with("body: malformed JSON"));
        assert_eq!(error_of("[1]"), "body: must be a JSON object");
        assert_eq!(error_of(r#"["a"]"#), "body: must be a JSON object");
        assert_eq!(error_of("null"), "body: must be a JSON object");
    }
}
