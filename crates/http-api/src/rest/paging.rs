//! Pages of a listing: `limit` and an opaque `cursor` in the query, and the next page's
//! URL in a `Link: <…>; rel="next"` header (RFC 8288), so the body stays an array.

use std::future::{Ready, ready};

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{FromRequest, HttpRequest, HttpResponse};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kernel::FieldError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::IntoParams;

use crate::conventions::error::ApiError;

/// The most items a page holds.
pub const MAX_LIMIT: u32 = 1000;

/// `limit` as the query gives it: a whole number from 1 to [`MAX_LIMIT`].
pub(crate) fn limit(text: Option<&str>) -> Result<Option<u32>, FieldError> {
    text.map(|text| {
        text.parse::<u32>()
            .ok()
            .filter(|limit| (1..=MAX_LIMIT).contains(limit))
            .ok_or_else(|| FieldError::new("limit", format!("must be a whole number from 1 to {MAX_LIMIT}")))
    })
    .transpose()
}

/// The page parameters every listing takes.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageQuery {
    /// At most this many items (1 to 1000); the `Link` header then names the next page.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
    /// Where to continue: the `cursor` of a `Link: <…>; rel="next"` this listing gave.
    /// Empty is the same as left out: the first page.
    #[serde(default, deserialize_with = "empty_as_absent")]
    pub cursor: Option<String>,
}

/// A query parameter given empty (`cursor=`) read as one left out.
pub(crate) fn empty_as_absent<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.filter(|text| !text.is_empty()))
}

/// A listing request: its query parameters as a JSON object (see [`query_object`]), and
/// the request to link the next page to.
pub(crate) struct Listing {
    request: HttpRequest,
    pub parameters: Map<String, Value>,
}

impl FromRequest for Listing {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(request: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let pairs = actix_web::web::Query::<Vec<(String, String)>>::from_query(request.query_string());
        ready(match pairs {
            Ok(pairs) => Ok(Self { request: request.clone(), parameters: query_object(pairs.into_inner()) }),
            Err(error) => Err(crate::conventions::body::query_error(error, request)),
        })
    }
}

impl Listing {
    /// The HTTP answer of `page`: see [`Page::respond`].
    pub(crate) fn respond<T: Serialize>(
        &self,
        page: Result<Page<T>, ApiError>,
    ) -> Result<HttpResponse, ApiError> {
        Ok(page?.respond(&self.request))
    }
}

/// A listing's own parameters and its page parameters, read from `parameters`.
pub(crate) fn read_listing<T: serde::de::DeserializeOwned>(
    parameters: Map<String, Value>,
) -> Result<(T, PageQuery), ApiError> {
    Ok((read_query(parameters.clone())?, read_query(parameters)?))
}

/// A page of a listing: its items, and the cursor of the next page when more follow.
#[derive(Debug)]
pub(crate) struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<String>,
}

impl<T> Page<T> {
    /// The same page of other items, one for each of its own.
    pub(crate) fn map<U>(self, each: impl FnMut(T) -> U) -> Page<U> {
        Page { items: self.items.into_iter().map(each).collect(), next: self.next }
    }
}

impl<T: Serialize> Page<T> {
    /// The HTTP answer: the items as a JSON array, and the next page in a `Link` header.
    pub(crate) fn respond(self, request: &HttpRequest) -> HttpResponse {
        let mut response = HttpResponse::Ok();
        if let Some(next) = &self.next {
            response.insert_header(next_link(request, next));
        }
        response.json(self.items)
    }

    /// The answer of a tool: the array, or on a page with more after it,
    /// `{"items": […], "nextCursor": "…"}`, since a tool's caller sees no headers.
    pub(crate) fn into_tool_result(self) -> Result<Value, ApiError> {
        let items = serde_json::to_value(self.items).map_err(|e| ApiError::internal(e.into()))?;
        Ok(match self.next {
            Some(next) => serde_json::json!({"items": items, "nextCursor": next}),
            None => items,
        })
    }
}

/// A page of a listing the store pages itself, in its order after a position: one more
/// than `limit` is read to tell whether more follow, and the next page's cursor is the
/// last item's position (`cursor`); `position` reads a cursor back.
pub(crate) async fn page_from_store<T, P, Fut>(
    page: &PageQuery,
    position: impl Fn(&str) -> Result<P, FieldError>,
    cursor: impl Fn(&T) -> String,
    read: impl FnOnce(Option<P>, Option<u32>) -> Fut,
) -> Result<Page<T>, ApiError>
where
    Fut: std::future::Future<Output = Result<Vec<T>, ApiError>>,
{
    let after = page.cursor.as_deref().map(position).transpose()?;
    let limit = limit(page.limit.as_deref())?;
    let mut items = read(after, one_more(limit)).await?;
    let more = cut(&mut items, limit);
    let next = if more { items.last().map(cursor) } else { None };
    Ok(Page { items, next })
}

/// Cuts `items`, read with one more than `limit`, to the page; whether more follow.
pub(crate) fn cut<T>(items: &mut Vec<T>, limit: Option<u32>) -> bool {
    match limit {
        Some(limit) if items.len() > limit as usize => {
            items.truncate(limit as usize);
            true
        }
        _ => false,
    }
}

/// One more than the page holds, to tell whether there is a next page.
pub(crate) fn one_more(limit: Option<u32>) -> Option<u32> {
    limit.map(|limit| limit + 1)
}

/// A page of a listing the process holds whole, in the order of `key`: the items after
/// the cursor's key, at most `limit` of them. The cursor is the key of a page's last item.
pub(crate) fn page_in_order<T>(
    items: Vec<T>,
    key: impl Fn(&T) -> [String; 2],
    query: &PageQuery,
) -> Result<Page<T>, FieldError> {
    let limit = limit(query.limit.as_deref())?;
    let after = match query.cursor.as_deref().map(decode_cursor).transpose()? {
        Some(parts) => Some(<[String; 2]>::try_from(parts).map_err(|_| not_a_cursor())?),
        None => None,
    };
    let mut items: Vec<T> = match &after {
        Some(after) => items.into_iter().skip_while(|item| key(item) <= *after).collect(),
        None => items,
    };
    let more = cut(&mut items, limit);
    let next = if more { items.last().map(|last| encode_cursor(&key(last))) } else { None };
    Ok(Page { items, next })
}

/// A query string's parameters as a JSON object, the shape a tool's arguments already
/// have: a parameter given once is a string, one given again an array of them.
pub(crate) fn query_object(pairs: Vec<(String, String)>) -> Map<String, Value> {
    let mut object = Map::new();
    for (name, value) in pairs {
        match object.get_mut(&name) {
            Some(Value::Array(values)) => values.push(value.into()),
            Some(first) => *first = Value::Array(vec![first.take(), value.into()]),
            None => {
                object.insert(name, value.into());
            }
        }
    }
    object
}

/// Reads a listing's parameters from `object`: query parameters, or a tool's arguments,
/// whose numbers and booleans stand for the text a query string would hold.
pub(crate) fn read_query<T: serde::de::DeserializeOwned>(object: Map<String, Value>) -> Result<T, ApiError> {
    let as_text = |value: Value| match value {
        Value::Number(n) => Value::String(n.to_string()),
        Value::Bool(b) => Value::String(b.to_string()),
        other => other,
    };
    let object: Map<String, Value> = object
        .into_iter()
        .map(|(name, value)| match value {
            Value::Array(values) => (name, Value::Array(values.into_iter().map(as_text).collect())),
            value => (name, as_text(value)),
        })
        .collect();
    crate::conventions::body::from_value(Value::Object(object))
}

/// One parameter or several: how a repeatable parameter arrives.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub(crate) fn into_vec(self) -> Vec<String> {
        match self {
            Self::One(one) => vec![one],
            Self::Many(many) => many,
        }
    }
}

/// A cursor: the position a page ended at, as the listing writes it (its sort key's parts),
/// encoded so that clients treat it as opaque.
pub(crate) fn encode_cursor(parts: &[String]) -> String {
    // A JSON array: a part may hold any character (a client's name, a newline included).
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(parts).unwrap_or_default())
}

/// The parts of a cursor this API gave, or a 400 naming `cursor`.
pub(crate) fn decode_cursor(text: &str) -> Result<Vec<String>, FieldError> {
    URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(not_a_cursor)
}

pub(crate) fn not_a_cursor() -> FieldError {
    FieldError::new("cursor", "is not a cursor of this listing")
}

/// The `Link` header to the next page: this request's URL with `cursor` set to `next`.
pub(crate) fn next_link(request: &HttpRequest, next: &str) -> (HeaderName, HeaderValue) {
    let kept =
        request.query_string().split('&').filter(|pair| !pair.is_empty() && !pair.starts_with("cursor="));
    let query: Vec<String> = kept.map(str::to_owned).chain([format!("cursor={next}")]).collect();
    let link = format!("<{}?{}>; rel=\"next\"", request.path(), query.join("&"));
    // The path and query came in a request line, so they hold no control characters
    // (bytes above 0x7F, which a lenient parser lets in, are obs-text); the cursor is
    // base64url.
    let value = HeaderValue::from_bytes(link.as_bytes()).unwrap_or_else(|_| HeaderValue::from_static(""));
    (actix_web::http::header::LINK, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_strangers_are_refused() {
        let parts = vec!["2026-11-24T09:00:00.000Z".to_owned(), "0199".to_owned()];
        assert_eq!(decode_cursor(&encode_cursor(&parts)).unwrap(), parts);
        let odd = vec!["two\nlines, \"quoted\"".to_owned(), String::new()];
        assert_eq!(decode_cursor(&encode_cursor(&odd)).unwrap(), odd, "any text in a part");
        assert_eq!(decode_cursor("%%%").unwrap_err().field, "cursor");
    }

    #[test]
    fn limits_are_whole_numbers_from_1_to_1000() {
        assert_eq!(limit(None).unwrap(), None);
        assert_eq!(limit(Some("1000")).unwrap(), Some(1000));
        for bad in ["0", "1001", "-1", "ten", "1.5", ""] {
            assert_eq!(limit(Some(bad)).unwrap_err().field, "limit", "{bad:?}");
        }
    }

    #[test]
    fn pages_in_order_continue_after_the_cursor_key() {
        let names = ["ant", "bee", "cat", "dog", "eel"];
        let key = |name: &&str| [(*name).to_owned(), String::new()];
        let query = |cursor: Option<String>| PageQuery { limit: Some("2".into()), cursor };
        let first = page_in_order(names.to_vec(), key, &query(None)).unwrap();
        assert_eq!(first.items, ["ant", "bee"]);
        // "bee" is gone by the time the next page is asked for: the page goes on after it.
        let rest: Vec<&str> = names.iter().copied().filter(|n| *n != "bee").collect();
        let second = page_in_order(rest.clone(), key, &query(first.next)).unwrap();
        assert_eq!(second.items, ["cat", "dog"]);
        let last = page_in_order(rest, key, &query(second.next)).unwrap();
        assert_eq!((last.items, last.next), (vec!["eel"], None));
        let stranger = PageQuery { limit: None, cursor: Some(encode_cursor(&["a".into()])) };
        assert_eq!(page_in_order(names.to_vec(), key, &stranger).unwrap_err().field, "cursor");
    }

    #[test]
    fn repeated_parameters_become_arrays() {
        let pairs = [("status", "PAID"), ("q", "x"), ("status", "PENDING"), ("status", "OVERDUE")];
        let object = query_object(pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
        assert_eq!(
            Value::Object(object),
            serde_json::json!({"status": ["PAID", "PENDING", "OVERDUE"], "q": "x"})
        );
    }

    #[test]
    fn the_next_link_keeps_the_query_and_replaces_the_cursor() {
        let request = actix_web::test::TestRequest::get()
            .uri("/v1/track/time?limit=2&cursor=old&tagId=x")
            .to_http_request();
        let (name, value) = next_link(&request, "new");
        assert_eq!(name, "link");
        assert_eq!(value, "</v1/track/time?limit=2&tagId=x&cursor=new>; rel=\"next\"");
    }
}
