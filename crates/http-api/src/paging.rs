//! Pages of a listing: `limit` and an opaque `cursor` in the query, and the next page's
//! URL in a `Link: <…>; rel="next"` header (RFC 8288), so the body stays an array.

use actix_web::HttpRequest;
use actix_web::http::header::{HeaderName, HeaderValue};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kernel::FieldError;

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

/// A cursor: the position a page ended at, as the listing writes it (its sort key's parts),
/// encoded so that clients treat it as opaque.
pub(crate) fn encode_cursor(parts: &[String]) -> String {
    URL_SAFE_NO_PAD.encode(parts.join("\n"))
}

/// The parts of a cursor this API gave, or a 400 naming `cursor`.
pub(crate) fn decode_cursor(text: &str) -> Result<Vec<String>, FieldError> {
    URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map(|text| text.split('\n').map(str::to_owned).collect())
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
    fn the_next_link_keeps_the_query_and_replaces_the_cursor() {
        let request = actix_web::test::TestRequest::get()
            .uri("/v1/track/time?limit=2&cursor=old&tagId=x")
            .to_http_request();
        let (name, value) = next_link(&request, "new");
        assert_eq!(name, "link");
        assert_eq!(value, "</v1/track/time?limit=2&tagId=x&cursor=new>; rel=\"next\"");
    }
}
