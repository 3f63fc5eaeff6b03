//! One way to list a collection the team holds whole (clients, projects, sections, tags):
//! a resource says which filters its listing takes, which of the team's rows they find, and
//! the order they are listed in; reading the query (or a tool's arguments), paging with
//! `limit` and `cursor`, and answering (a JSON array with a `Link` to the next page, or a
//! tool's page) are the same for every one. Listings paged by the store itself (invoices,
//! time entries) share the pages and their answers ([`paging`]).

use accounts::Principal;
use actix_web::HttpResponse;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::conventions::error::ApiError;
use crate::rest::paging::{self, Page};
use crate::rest::state::ApiState;

/// A collection the API lists.
pub(crate) trait Collection {
    /// The listing's own filters, as a query string or a tool's arguments give them.
    type Filters: DeserializeOwned;
    type Row;
    /// How a row is answered.
    type Body: Serialize + From<Self::Row>;

    /// The rows of the caller's team that `filters` find, in any order.
    async fn find(
        state: &ApiState,
        who: &Principal,
        filters: Self::Filters,
    ) -> Result<Vec<Self::Row>, ApiError>;

    /// The listing's order: a key of each row, unique in the team, compared part by part.
    fn order(row: &Self::Row) -> [String; 2];
}

/// A listing without filters of its own.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct NoFilters {}

/// The page of `C` that `parameters` ask for.
pub(crate) async fn page<C: Collection>(
    state: &ApiState,
    who: &Principal,
    parameters: Map<String, Value>,
) -> Result<Page<C::Body>, ApiError> {
    let (filters, page) = paging::read_listing::<C::Filters>(parameters)?;
    let mut rows = C::find(state, who, filters).await?;
    rows.sort_by_cached_key(C::order);
    Ok(paging::page_in_order(rows, C::order, &page)?.map(C::Body::from))
}

impl paging::Listing {
    /// The HTTP answer of the page of `C` this request asks for.
    pub(crate) async fn answer<C: Collection>(
        &self,
        state: &ApiState,
        who: &Principal,
    ) -> Result<HttpResponse, ApiError> {
        self.respond(page::<C>(state, who, self.parameters.clone()).await)
    }
}
