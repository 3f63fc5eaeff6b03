//! The time report's sums, added up by the database: one statement per report, grouped by
//! the report's key and the hourly rate of each entry's project.

use std::str::FromStr;

use accounts::TeamId;
use billing::money::Decimal;
use diesel::QueryableByName;
use diesel::sql_types::{Nullable, Text};
use diesel_async::RunQueryDsl;
use kernel::{Id, StoreError};
use tracking::{HourlyRate, ReportGroupBy, ReportQuery, ReportRow};

use crate::{OrStoreError, SqlStore, corrupt};

/// Which SQL dialect a statement is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Sqlite,
}

/// The report's statement in `dialect`. Its parameters, in order: the team, the first
/// instant, the instant after the last, and (with `one_user`) the user. Each row is one
/// group at one rate: `key`, `rate`, and the `seconds`, `billable_seconds` and
/// `invoiced_seconds` summed, all as text (SQLite's in parts, below).
///
/// The entries are summed first by key and project, on the keys' own types, and only the
/// few sums are joined to their projects' rates and turned into text: a third of the
/// time of joining and casting every entry.
///
/// No sum can overflow. PostgreSQL sums `bigint` into a `numeric`. SQLite's `SUM` of
/// integers stops with "integer overflow" past 2^63, which 1,025 entries of the longest
/// duration (2^53 − 1 s) reach; so there each duration is summed in three parts of 18
/// bits (below 2^18 each): even the most rows a SQLite file can hold (under 2^45: 2^48
/// bytes, over 8 a row) sum to less than 2^63 in each part.
pub fn report_sql(dialect: Dialect, group_by: ReportGroupBy, one_user: bool) -> String {
    let postgres = dialect == Dialect::Postgres;
    // (the key of an entry, the key as the answer writes it)
    let (key, shown) = match (group_by, postgres) {
        (ReportGroupBy::Project, true) => ("e.project_id", "s.key::text"),
        (ReportGroupBy::User, true) => ("e.user_id", "s.key::text"),
        (ReportGroupBy::Tag, true) => ("t.tag_id", "s.key::text"),
        (ReportGroupBy::Day, true) => ("(e.date AT TIME ZONE 'UTC')::date", "to_char(s.key, 'YYYY-MM-DD')"),
        (ReportGroupBy::Project, false) => ("e.project_id", "s.key"),
        (ReportGroupBy::User, false) => ("e.user_id", "s.key"),
        (ReportGroupBy::Tag, false) => ("t.tag_id", "s.key"),
        // Stored as RFC 3339 text in UTC: the day is its first ten characters.
        (ReportGroupBy::Day, false) => ("substr(e.date, 1, 10)", "s.key"),
        (ReportGroupBy::Task, _) => ("e.task_name", "s.key"),
    };
    let rate = if postgres { "p.rate::text" } else { "p.rate" };
    // SQLite numbers its parameters `?N`, so that the team's can be named twice.
    let param = |n: usize| if postgres { format!("${n}") } else { format!("?{n}") };
    let tags = if group_by == ReportGroupBy::Tag {
        " LEFT JOIN time_entry_tags t ON t.team_id = e.team_id AND t.entry_id = e.id"
    } else {
        ""
    };
    let user = if one_user { format!(" AND e.user_id = {}", param(4)) } else { String::new() };
    // (the inner sums of one measure, named `name…`; the outer sum of them, as text)
    let measure = |name: &str, only: Option<&str>| -> (String, String) {
        let of = |value: &str| match only {
            Some(condition) => format!("CASE WHEN {condition} THEN {value} ELSE 0 END"),
            None => value.to_owned(),
        };
        if postgres {
            (format!("SUM({}) AS {name}", of("e.duration_seconds")), format!("SUM(s.{name})::text"))
        } else {
            let parts: Vec<(String, String)> = SECONDS_PARTS
                .iter()
                .enumerate()
                .map(|(i, (shift, mask))| {
                    let part = format!("((e.duration_seconds >> {shift}) & {mask})");
                    (format!("SUM({}) AS {name}{i}", of(&part)), format!("CAST(SUM(s.{name}{i}) AS TEXT)"))
                })
                .collect();
            let inner: Vec<&str> = parts.iter().map(|(inner, _)| inner.as_str()).collect();
            let outer: Vec<&str> = parts.iter().map(|(_, outer)| outer.as_str()).collect();
            (inner.join(", "), outer.join(" || ' ' || "))
        }
    };
    let (seconds, seconds_text) = measure("seconds", None);
    let (billable, billable_text) = measure("billable", Some("e.billable"));
    let (invoiced, invoiced_text) = measure("invoiced", Some("e.invoice_id IS NOT NULL"));
    format!(
        "SELECT {shown} AS key, {rate} AS rate, {seconds_text} AS seconds, {billable_text} AS billable_seconds, \
         {invoiced_text} AS invoiced_seconds \
         FROM (SELECT {key} AS key, e.project_id, {seconds}, {billable}, {invoiced} \
         FROM time_entries e{tags} \
         WHERE e.team_id = {team} AND e.date >= {from} AND e.date < {until}{user} \
         GROUP BY 1, 2) s \
         LEFT JOIN projects p ON p.team_id = {team} AND p.id = s.project_id \
         GROUP BY 1, 2",
        team = param(1),
        from = param(2),
        until = param(3),
    )
}

/// How SQLite sums a duration: in parts `(duration >> shift) & mask`, whose sums come back
/// as one text, separated by spaces, and add up to the sum as `part << shift`.
const SECONDS_PARTS: [(u32, u64); 3] = [(36, 0x3_FFFF), (18, 0x3_FFFF), (0, 0x3_FFFF)];

/// A sum of seconds as the statement writes it: one number (PostgreSQL), or SQLite's
/// parts.
fn seconds_sum(text: &str) -> Option<u128> {
    let parts: Vec<&str> = text.split(' ').collect();
    match parts.as_slice() {
        [whole] => whole.parse().ok(),
        parts if parts.len() == SECONDS_PARTS.len() => {
            parts.iter().zip(SECONDS_PARTS).try_fold(0_u128, |sum, (part, (shift, _))| {
                let part: u128 = part.parse().ok()?;
                sum.checked_add(part.checked_mul(1 << shift)?)
            })
        }
        _ => None,
    }
}

#[derive(QueryableByName)]
struct SumRow {
    #[diesel(sql_type = Nullable<Text>)]
    key: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    rate: Option<String>,
    #[diesel(sql_type = Text)]
    seconds: String,
    #[diesel(sql_type = Text)]
    billable_seconds: String,
    #[diesel(sql_type = Text)]
    invoiced_seconds: String,
}

impl SumRow {
    fn into_row(self) -> Result<ReportRow, StoreError> {
        let count = |text: &str| seconds_sum(text).ok_or_else(|| corrupt("sum of seconds", text));
        let rate = self
            .rate
            .map(|text| {
                Decimal::from_str(&text)
                    .ok()
                    .and_then(|r| HourlyRate::parse(r).ok())
                    .ok_or_else(|| corrupt("rate", &text))
            })
            .transpose()?;
        Ok(ReportRow {
            rate,
            seconds: count(&self.seconds)?,
            billable_seconds: count(&self.billable_seconds)?,
            invoiced_seconds: count(&self.invoiced_seconds)?,
            key: self.key,
        })
    }
}

impl SqlStore {
    pub(crate) async fn report_rows(
        &self,
        team: TeamId,
        query: &ReportQuery,
    ) -> Result<Vec<ReportRow>, StoreError> {
        let (from, until) = (query.period.start, query.period.end);
        let user = query.user.map(|user| user.as_uuid());
        let rows: Vec<SumRow> = crate::db_run!(self,
            postgres: |conn| {
                use diesel::sql_types::{Timestamptz, Uuid};
                let sql = report_sql(Dialect::Postgres, query.group_by, user.is_some());
                let statement = diesel::sql_query(sql)
                    .into_boxed()
                    .bind::<Uuid, _>(team.as_uuid())
                    .bind::<Timestamptz, _>(from)
                    .bind::<Timestamptz, _>(until);
                let statement = match user {
                    Some(user) => statement.bind::<Uuid, _>(user),
                    None => statement,
                };
                statement.load(conn).await.or_store()?
            },
            sqlite: |conn| {
                use diesel::sql_types::TimestamptzSqlite;
                let sql = report_sql(Dialect::Sqlite, query.group_by, user.is_some());
                let statement = diesel::sql_query(sql)
                    .into_boxed()
                    .bind::<Text, _>(team.as_uuid().to_string())
                    .bind::<TimestamptzSqlite, _>(from)
                    .bind::<TimestamptzSqlite, _>(until);
                let statement = match user {
                    Some(user) => statement.bind::<Text, _>(user.to_string()),
                    None => statement,
                };
                statement.load(conn).await.or_store()?
            }
        );
        rows.into_iter().map(SumRow::into_row).collect()
    }
}

#[cfg(test)]
mod tests {
    use tracking::ReportGroupBy;

    use super::{Dialect, report_sql, seconds_sum};

    #[test]
    fn sums_of_seconds_read_whole_or_in_sqlites_parts() {
        assert_eq!(seconds_sum("36000"), Some(36_000));
        assert_eq!(seconds_sum("1 2 3"), Some((1 << 36) + (2 << 18) + 3));
        // 1,025 entries of 2^53 − 1 seconds, in parts: beyond 2^63.
        let max = (1_u128 << 53) - 1;
        let part = |shift: u32| ((max >> shift) & 0x3_FFFF) * 1025;
        let text = format!("{} {} {}", part(36), part(18), part(0));
        assert_eq!(seconds_sum(&text), Some(max * 1025));
        for bad in ["", "1 2", "x", "1 2 3 4", "-1"] {
            assert_eq!(seconds_sum(bad), None, "{bad:?}");
        }
    }

    /// `make bench` runs pgbench on this file beside the report: it must be the report's SQL.
    #[test]
    fn the_benchmark_runs_the_reports_own_statement() {
        let file = include_str!("../../../../scripts/report-by-project.sql");
        let statement = report_sql(Dialect::Postgres, ReportGroupBy::Project, false);
        assert_eq!(file.trim_end().trim_end_matches(';'), statement);
    }
}
