use chrono::{DateTime, Datelike, NaiveDate, SubsecRound, Utc};

use crate::InvalidValue;

/// Parses an instant as the API accepts it: an RFC 3339 datetime with an offset
/// (`2026-11-20T09:30:00+02:00`), or a bare date `YYYY-MM-DD` meaning 00:00 UTC.
///
/// The result is in UTC and truncated to the millisecond, the precision the API shows and
/// every store keeps, so a value reads back exactly as it was stored. It must fall in the
/// years 0001 to 9999 once in UTC (`9999-12-31T23:59:59-01:00` does not): only those are
/// written by RFC 3339's four-digit years and sort as text the way they sort in time.
pub fn parse_instant(text: &str) -> Result<DateTime<Utc>, InvalidValue> {
    let parsed = if text.len() == 10 {
        NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|d| d.and_utc())
    } else {
        DateTime::parse_from_rfc3339(text).ok().map(|d| d.with_timezone(&Utc))
    };
    let at = parsed.map(|at| at.trunc_subsecs(3)).ok_or_else(|| {
        InvalidValue::new("must be an RFC 3339 datetime with an offset or a date YYYY-MM-DD")
    })?;
    if !(1..=9999).contains(&at.year()) {
        return Err(InvalidValue::new("must fall in the years 0001 to 9999 in UTC"));
    }
    Ok(at)
}

/// `end`, the instant a span ends before (`t < end`), brought back to the last nanosecond
/// of the year 9999 when it is later: no stored instant is later (see [`parse_instant`]),
/// and where instants are kept as text (SQLite) a year past 9999 would sort before them all.
pub fn span_end(end: DateTime<Utc>) -> DateTime<Utc> {
    let last = NaiveDate::from_ymd_opt(9999, 12, 31)
        .and_then(|day| day.and_hms_nano_opt(23, 59, 59, 999_999_999))
        .map(|last| last.and_utc());
    last.map_or(end, |last| end.min(last))
}

#[cfg(test)]
mod tests {
    use super::{parse_instant, span_end};

    fn parsed(text: &str) -> String {
        parse_instant(text).map_or_else(|e| e.0, |at| at.to_rfc3339())
    }

    #[test]
    fn accepts_datetimes_with_offsets_and_bare_dates() {
        assert_eq!(parsed("2026-11-20"), "2026-11-20T00:00:00+00:00");
        assert_eq!(parsed("2026-11-20T09:30:00Z"), "2026-11-20T09:30:00+00:00");
        assert_eq!(parsed("2026-11-20T01:30:00+02:00"), "2026-11-19T23:30:00+00:00");
        assert_eq!(parsed("2026-11-20T09:30:00.123456789Z"), "2026-11-20T09:30:00.123+00:00");
        assert_eq!(parsed("2024-02-29"), "2024-02-29T00:00:00+00:00");
    }

    #[test]
    fn refuses_instants_outside_the_years_0001_to_9999_in_utc() {
        let outside = "must fall in the years 0001 to 9999 in UTC";
        for text in [
            "9999-12-31T23:59:59-23:59",
            "9999-12-31T23:00:00-01:00",
            "0001-01-01T00:00:00+00:01",
            "0000-06-01",
            "0000-06-01T00:00:00Z",
        ] {
            assert_eq!(parsed(text), outside, "{text:?}");
        }
        assert_eq!(parsed("9999-12-31T23:59:59.999Z"), "9999-12-31T23:59:59.999+00:00");
        assert_eq!(parsed("0001-01-01T00:00:00-05:00"), "0001-01-01T05:00:00+00:00");
        assert_eq!(parsed("0001-01-01"), "0001-01-01T00:00:00+00:00");
    }

    #[test]
    fn refuses_everything_else() {
        for text in ["", "2026-11-20T09:30:00", "2026-13-01", "2026-02-30", "20261120", "now", "2026-11-2"] {
            assert!(parse_instant(text).is_err(), "{text:?} was accepted");
        }
    }

    #[test]
    fn a_span_ends_at_the_last_nanosecond_of_9999_at_the_latest() {
        let day = |text: &str| parse_instant(text).unwrap();
        assert_eq!(span_end(day("2026-11-21")), day("2026-11-21"));
        let last = span_end(day("9999-12-31") + chrono::TimeDelta::days(1));
        assert_eq!(last.to_rfc3339(), "9999-12-31T23:59:59.999999999+00:00");
        assert!(day("9999-12-31T23:59:59.999Z") < last);
    }
}
