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

use crate::error::ApiError;

/// Largest request body accepted, in bytes (1 MiB).
pub const BODY_LIMIT: usize = 1024 * 1024;

/// A request body parsed from JSON into `T`. Types used with it deny unknown fields.
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let content_type_ok = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|mime| {
                let mime = mime.trim().to_ascii_lowercase();
                mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
            });
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
    let detail = match error {
        QueryPayloadError::Deserialize(error) => error.to_string(),
        other => other.to_string(),
    };
    ApiError::new(StatusCode::BAD_REQUEST, format!("query: {detail}")).into()
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
                format!("{field}: not accepted")
            } else if let Some(name) = quoted_after(text, "missing field `") {
                format!("{}: is required", join(name))
            } else if here.is_empty() {
                format!("body: {text}")
            } else {
                format!("{here}: {text}")
            }
        }
    }
}

fn quoted_after<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(prefix)?;
    rest.split('`').next()
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::parse;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Item {
        quantity: u32,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)]
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
        assert_eq!(error_of(r#"{"name": "a", "subtotal": 1}"#), "subtotal: not accepted");
        assert_eq!(
            error_of(r#"{"name": "a", "lineItems": [{"quantity": 1}, {"quantity": -1}]}"#),
            "lineItems[1].quantity: invalid value: integer `-1`, expected u32"
        );
        assert_eq!(error_of(r#"{"name": "a", "lineItems": [{}]}"#), "lineItems[0].quantity: is required");
        assert_eq!(
            error_of(r#"{"name": "a", "lineItems": [{"quantity": 1, "x": 2}]}"#),
            "lineItems[0].x: not accepted"
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
