//! Rendered time-entry listings, kept while their team's listing revision holds.
//!
//! A month of a busy team's time is thousands of entries and about a megabyte of JSON;
//! reading and rendering it costs milliseconds, and the same listing is asked for again and
//! again (every open timesheet polls it). The store's listing revision grows in the
//! transaction of every change a listing can show, so a listing rendered after reading
//! revision `r` is current for as long as the revision reads `r`: a request pays one small
//! read for the revision and gets the kept bytes. Any process's write moves the revision,
//! so several instances on one database never serve each other's stale copies.
//!
//! Most of a kept listing's cost is then moving its bytes, so a listing is also kept
//! gzipped, compressed once on the first request that accepts gzip: the JSON's repeated
//! field names shrink it about tenfold.

use std::io::Write;
use std::sync::{Arc, OnceLock};

use accounts::{Permission, Principal, TeamId};
use actix_web::web::Bytes;
use billing::InvoiceId;
use flate2::Compression;
use flate2::write::GzEncoder;
use tracking::{EntryFilter, EntryPosition};

/// Bodies smaller than this are sent as they are: gzip would save less than a packet.
const MIN_GZIP_BYTES: usize = 1400;

/// Whether a caller is shown which invoice billed an entry. The invoice id is the PDF's
/// only credential, so only a key that may read invoices sees it; others see `billed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum InvoiceIds {
    Shown,
    Withheld,
}

impl InvoiceIds {
    pub(crate) fn for_caller(who: &Principal) -> Self {
        if who.may(Permission::InvoicesRead) { Self::Shown } else { Self::Withheld }
    }

    pub(crate) fn show(self, id: Option<InvoiceId>) -> Option<InvoiceId> {
        match self {
            Self::Shown => id,
            Self::Withheld => None,
        }
    }
}

/// A rendered listing: its JSON, gzipped once when first asked for, and the revision read
/// before it was listed.
#[derive(Clone)]
pub struct Listing {
    revision: u64,
    body: Bytes,
    /// Where the next page starts, when this is a page with more after it.
    next: Option<EntryPosition>,
    gzipped: Arc<OnceLock<Option<Bytes>>>,
}

impl std::fmt::Debug for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listing")
            .field("revision", &self.revision)
            .field("bytes", &self.body.len())
            .finish_non_exhaustive()
    }
}

impl Listing {
    fn new(revision: u64, body: Bytes, next: Option<EntryPosition>) -> Self {
        Self { revision, body, next, gzipped: Arc::new(OnceLock::new()) }
    }

    /// The position the next page continues after, if there is a next page.
    pub fn next(&self) -> Option<EntryPosition> {
        self.next
    }

    /// The JSON.
    pub fn body(&self) -> Bytes {
        self.body.clone()
    }

    /// The JSON gzipped, when it is large enough for that to pay.
    pub fn gzipped(&self) -> Option<Bytes> {
        self.gzipped
            .get_or_init(|| (self.body.len() >= MIN_GZIP_BYTES).then(|| gzip(&self.body)).flatten())
            .clone()
    }
}

/// `None` only if the encoder fails, which writing to memory does not.
fn gzip(body: &[u8]) -> Option<Bytes> {
    // Fast: level 1 already gets most of the gain on repetitive JSON, at a fraction of the CPU.
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 8), Compression::fast());
    encoder.write_all(body).ok()?;
    encoder.finish().ok().map(Bytes::from)
}

/// The kept listings, bounded by the bytes of their bodies; least recently used go first.
pub struct ListingCache {
    /// By team, filter, and whether the reader sees invoice ids.
    kept: Option<moka::sync::Cache<(TeamId, EntryFilter, InvoiceIds), Listing>>,
}

impl std::fmt::Debug for ListingCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept.as_ref().map(moka::sync::Cache::entry_count);
        f.debug_struct("ListingCache").field("kept", &kept).finish()
    }
}

impl ListingCache {
    /// Keeps at most `max_bytes` of listings; 0 keeps none.
    pub fn new(max_bytes: u64) -> Self {
        let kept = (max_bytes > 0).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(max_bytes)
                // The gzipped copy is counted in advance: it is about a tenth of the body.
                .weigher(|_, listing: &Listing| {
                    u32::try_from(listing.body.len() + listing.body.len() / 8).unwrap_or(u32::MAX)
                })
                .build()
        });
        Self { kept }
    }

    /// Whether listings are kept at all (`BILLABLE_LISTING_CACHE_MB` above 0).
    pub fn keeps(&self) -> bool {
        self.kept.is_some()
    }

    /// The listing of `filter`, as readers who see `invoice_ids` are shown it, kept at
    /// exactly `revision`, if any.
    pub(crate) fn get(
        &self,
        team: TeamId,
        filter: &EntryFilter,
        invoice_ids: InvoiceIds,
        revision: u64,
    ) -> Option<Listing> {
        let listing = self.kept.as_ref()?.get(&(team, *filter, invoice_ids))?;
        (listing.revision == revision).then_some(listing)
    }

    /// Keeps `body`, the listing of `filter` read after `revision` was read (with the
    /// position of the next page, if any), and returns it.
    pub(crate) fn keep(
        &self,
        team: TeamId,
        filter: EntryFilter,
        invoice_ids: InvoiceIds,
        revision: u64,
        body: Bytes,
        next: Option<EntryPosition>,
    ) -> Listing {
        let listing = Listing::new(revision, body, next);
        if let Some(kept) = &self.kept {
            kept.insert((team, filter, invoice_ids), listing.clone());
        }
        listing
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use chrono::{TimeZone, Utc};
    use flate2::read::GzDecoder;
    use kernel::Id;
    use tracking::{Frequency, Period};

    use super::*;

    fn month() -> Period {
        Frequency::Month.period_around(Utc.with_ymd_and_hms(2026, 10, 15, 0, 0, 0).unwrap())
    }

    fn body_at(cache: &ListingCache, team: TeamId, filter: &EntryFilter, revision: u64) -> Option<Bytes> {
        cache.get(team, filter, InvoiceIds::Shown, revision).map(|listing| listing.body())
    }

    #[test]
    fn a_listing_is_served_only_at_the_revision_it_was_kept_at() {
        let cache = ListingCache::new(1 << 20);
        let team = TeamId::generate();
        let filter = EntryFilter::within(month());
        assert_eq!(body_at(&cache, team, &filter, 0), None);
        cache.keep(team, filter, InvoiceIds::Shown, 3, Bytes::from_static(b"[1]"), None);
        assert_eq!(body_at(&cache, team, &filter, 3), Some(Bytes::from_static(b"[1]")));
        assert!(
            cache.get(team, &filter, InvoiceIds::Withheld, 3).is_none(),
            "a reader who may not see invoice ids is not served a listing that shows them"
        );
        assert_eq!(body_at(&cache, team, &filter, 4), None, "a change since");
        // Another team, another user, another period: other listings.
        assert_eq!(body_at(&cache, TeamId::generate(), &filter, 3), None);
        let mine = EntryFilter { user: Some(accounts::UserId::generate()), ..filter };
        assert_eq!(body_at(&cache, team, &mine, 3), None);
        let day = EntryFilter { period: Frequency::Day.period_around(month().start), ..filter };
        assert_eq!(body_at(&cache, team, &day, 3), None);
        cache.keep(team, filter, InvoiceIds::Shown, 4, Bytes::from_static(b"[1,2]"), None);
        assert_eq!(body_at(&cache, team, &filter, 4), Some(Bytes::from_static(b"[1,2]")));
    }

    #[test]
    fn a_size_of_zero_keeps_nothing_but_still_renders() {
        let cache = ListingCache::new(0);
        let team = TeamId::generate();
        let filter = EntryFilter::within(month());
        let listing = cache.keep(team, filter, InvoiceIds::Shown, 1, Bytes::from_static(b"[]"), None);
        assert_eq!(listing.body(), Bytes::from_static(b"[]"));
        assert_eq!(body_at(&cache, team, &filter, 1), None);
    }

    #[test]
    fn large_listings_are_gzipped_once_and_small_ones_not_at_all() {
        let entry = r#"{"id":"019a0000-0000-7000-8000-000000000000","taskName":"Write the report"}"#;
        let json = format!("[{}]", vec![entry; 200].join(","));
        let listing = Listing::new(1, Bytes::from(json.clone()), None);
        let gzipped = listing.gzipped().expect("large enough");
        assert!(gzipped.len() * 10 < json.len(), "{} bytes of {}", gzipped.len(), json.len());
        let mut unzipped = String::new();
        GzDecoder::new(&gzipped[..]).read_to_string(&mut unzipped).unwrap();
        assert_eq!(unzipped, json);
        // The same bytes again: compressed once.
        assert_eq!(listing.gzipped().unwrap().as_ptr(), gzipped.as_ptr());
        assert_eq!(Listing::new(1, Bytes::from_static(b"[]"), None).gzipped(), None);
    }
}
