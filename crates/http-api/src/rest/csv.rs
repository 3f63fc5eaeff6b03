//! CSV answers, for `Accept: text/csv`: RFC 4180 with one header row, every cell safe to
//! open in a spreadsheet. A listing is read and written a page at a time, so a long range
//! streams out as it is read instead of waiting whole in memory.

use std::borrow::Cow;
use std::future::Future;

use actix_web::http::header::{self, Accept, Header, Quality};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse};
use kernel::FieldError;
use serde_json::{Map, Value};

use crate::conventions::error::ApiError;
use crate::rest::paging;

/// The media type of every CSV answer.
pub(crate) const CONTENT_TYPE: &str = "text/csv; charset=utf-8";

/// What an answer that may be CSV or JSON varies on.
pub(crate) const VARY: &str = "accept, accept-encoding";

/// How many items a streamed listing reads at a time.
const PAGE: u32 = 1000;

/// Whether the request prefers CSV to JSON by its `Accept` (a type at `q=0` is refused,
/// not preferred).
pub(crate) fn wanted(request: &HttpRequest) -> bool {
    let Ok(Accept(items)) = Accept::parse(request) else { return false };
    let acceptable = items.into_iter().filter(|item| item.quality > Quality::ZERO).collect();
    Accept(acceptable)
        .ranked()
        .into_iter()
        .find(|mime| mime.essence_str() == "text/csv" || mime.type_() == "application" || mime.type_() == "*")
        .is_some_and(|mime| mime.essence_str() == "text/csv")
}

/// Paging is for JSON: a CSV holds every match, so `limit` and `cursor` are refused with it.
pub(crate) fn refuse_paging(limit: Option<&str>, cursor: Option<&str>) -> Result<(), FieldError> {
    let given = [("limit", limit), ("cursor", cursor)].into_iter().find(|(_, value)| value.is_some());
    match given {
        Some((name, _)) => {
            Err(FieldError::new(name, "is not taken with Accept: text/csv, which answers every match"))
        }
        None => Ok(()),
    }
}

/// Every match of a paged listing as the CSV file `name`: the listing's `parameters` read
/// as its query `Q` (paging refused), and the listing `of` makes of that query streamed.
pub(crate) async fn listing<Q, L>(
    name: &str,
    parameters: Map<String, Value>,
    of: impl FnOnce(Q) -> Result<L, ApiError>,
) -> Result<HttpResponse, ApiError>
where
    Q: serde::de::DeserializeOwned,
    L: PagedListing,
{
    let (query, page) = paging::read_listing::<Q>(parameters)?;
    refuse_paging(page.limit.as_deref(), page.cursor.as_deref())?;
    stream(name, of(query)?).await
}

/// `response`, of a request that could have asked for CSV instead, marked as varying with
/// what it accepts.
pub(crate) fn varying(mut response: HttpResponse) -> HttpResponse {
    response.headers_mut().insert(header::VARY, header::HeaderValue::from_static(VARY));
    response
}

/// A cell as a spreadsheet should read it: text beginning with `=`, `+`, `-`, `@`, a tab
/// or a carriage return would run as a formula, so it gets a `'` first.
pub(crate) fn cell(text: &str) -> Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Rows written as CSV bytes: quoted where RFC 4180 needs it, lines ending in CRLF.
pub(crate) struct Rows(csv::Writer<Vec<u8>>);

impl Rows {
    pub(crate) fn new() -> Self {
        Self(Self::writer())
    }

    fn writer() -> csv::Writer<Vec<u8>> {
        csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new())
    }

    /// Writes one row; each cell is escaped with [`cell`].
    pub(crate) fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) -> Result<(), ApiError> {
        self.0
            .write_record(cells.into_iter().map(|c| cell(c.as_ref()).into_owned()))
            .map_err(|e| ApiError::internal(e.into()))
    }

    /// The bytes written so far, leaving the writer empty.
    pub(crate) fn take(&mut self) -> Result<Bytes, ApiError> {
        let written = std::mem::replace(&mut self.0, Self::writer());
        written.into_inner().map(Bytes::from).map_err(|e| ApiError::internal(anyhow::anyhow!("{e}")))
    }
}

/// 200 with `body` as the CSV file `name`.
pub(crate) fn answer(name: &str, body: Bytes) -> HttpResponse {
    ok(name).body(body)
}

/// A 200 of the CSV file `name`, its body to come.
fn ok(name: &str) -> actix_web::HttpResponseBuilder {
    let mut response = HttpResponse::Ok();
    response
        .content_type(CONTENT_TYPE)
        .insert_header((header::VARY, VARY))
        .insert_header((header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")));
    response
}

/// How a listing is read a page at a time, and written.
pub(crate) trait PagedListing: Clone + Send + 'static {
    type Item: Send;
    /// Where an item stands, to read the page after it.
    type Position: Send;

    /// At most `limit` items after `after`, in listing order.
    fn read(
        &self,
        after: Option<Self::Position>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<Self::Item>, ApiError>> + Send;
    fn position(item: &Self::Item) -> Self::Position;
    fn header() -> &'static [&'static str];
    fn cells(&self, item: &Self::Item) -> Vec<String>;
}

/// 200 with every item of `listing` as the CSV file `name`: the first page is read before
/// the answer starts, so that its failure is an error status; the rest stream after it,
/// and a failure there cuts the body short.
pub(crate) async fn stream<L: PagedListing>(name: &str, listing: L) -> Result<HttpResponse, ApiError> {
    use futures_util::{StreamExt, TryStreamExt};
    let mut rows = Rows::new();
    rows.row(L::header().iter().copied())?;
    let first = listing.read(None, PAGE).await?;
    let after = write_page(&listing, &mut rows, &first)?;
    let head = rows.take()?;
    let rest =
        futures_util::stream::try_unfold((listing, rows, after), |(listing, mut rows, after)| async move {
            let Some(after) = after else { return Ok(None) };
            let page = listing.read(Some(after), PAGE).await?;
            let next = write_page(&listing, &mut rows, &page)?;
            let chunk = rows.take()?;
            Ok::<_, ApiError>(Some((chunk, (listing, rows, next))))
        });
    let body = futures_util::stream::once(std::future::ready(Ok(head))).chain(rest).map_err(|error| {
        tracing::error!(%error, "a CSV answer was cut short");
        actix_web::Error::from(error)
    });
    Ok(ok(name).streaming(body))
}

/// Writes a page's items; the position to read on from, when the page was full.
fn write_page<L: PagedListing>(
    listing: &L,
    rows: &mut Rows,
    page: &[L::Item],
) -> Result<Option<L::Position>, ApiError> {
    for item in page {
        rows.row(listing.cells(item))?;
    }
    let full = page.len() >= PAGE as usize;
    Ok(page.last().filter(|_| full).map(L::position))
}
