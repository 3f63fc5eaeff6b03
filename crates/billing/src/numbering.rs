//! How a team numbers its documents: a pattern per series (`INV-{0000}`, `{YYYY}-{0000}`,
//! `RE{YY}{000}`) and the numbers it makes. Each series counts on its own, gapless; a
//! pattern with a year counts each year from 1, by the issue date's year in UTC.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Utc};
use kernel::InvalidValue;

/// The numbered series of a team's documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Series {
    Invoices,
    CreditNotes,
    Quotes,
}

impl Series {
    pub const ALL: [Self; 3] = [Self::Invoices, Self::CreditNotes, Self::Quotes];

    /// Its name in storage.
    pub fn key(self) -> &'static str {
        match self {
            Self::Invoices => "invoices",
            Self::CreditNotes => "credit_notes",
            Self::Quotes => "quotes",
        }
    }

    /// The pattern of a team that chose none: every team's numbers before patterns existed.
    pub fn default_pattern(self) -> NumberingPattern {
        let prefix = match self {
            Self::Invoices => "INV-",
            Self::CreditNotes => "CN-",
            Self::Quotes => "Q-",
        };
        NumberingPattern {
            text: format!("{prefix}{{0000}}"),
            parts: vec![Part::Literal(prefix.to_owned()), Part::Counter(4)],
        }
    }
}

/// The longest pattern, placeholders included.
pub const MAX_PATTERN_LENGTH: usize = 40;
/// The most digits a counter is padded to.
const MAX_COUNTER_WIDTH: usize = 9;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// The counter, padded with zeros to this many digits (more when it has more).
    Counter(usize),
    /// The issue year in four digits.
    Year,
    /// The issue year's last two digits.
    ShortYear,
}

/// A numbering pattern: letters, digits and `- _ . /`, one counter placeholder of one to
/// nine zeros (`{0000}`), and optionally `{YYYY}` or `{YY}`, whose counter then restarts
/// each year.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberingPattern {
    text: String,
    parts: Vec<Part>,
}

impl NumberingPattern {
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        if text.is_empty() || text.chars().count() > MAX_PATTERN_LENGTH {
            return Err(InvalidValue::new(format!(
                "must be 1 to {MAX_PATTERN_LENGTH} characters, such as INV-{{0000}}"
            )));
        }
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('{') {
                let Some(end) = after.find('}') else {
                    return Err(InvalidValue::new("has a { without its }"));
                };
                let name = &after[..end];
                parts.push(match name {
                    "YYYY" => Part::Year,
                    "YY" => Part::ShortYear,
                    zeros if !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') => {
                        if zeros.len() > MAX_COUNTER_WIDTH {
                            return Err(InvalidValue::new(format!(
                                "the counter is padded to at most {MAX_COUNTER_WIDTH} digits"
                            )));
                        }
                        Part::Counter(zeros.len())
                    }
                    unknown => {
                        return Err(InvalidValue::new(format!(
                            "unknown placeholder {{{unknown}}}: use {{0000}} (the counter, one zero per digit), {{YYYY}} or {{YY}}"
                        )));
                    }
                });
                rest = &after[end + 1..];
            } else {
                let end = rest.find('{').unwrap_or(rest.len());
                let literal = &rest[..end];
                if let Some(bad) =
                    literal.chars().find(|c| !(c.is_ascii_alphanumeric() || "-_./".contains(*c)))
                {
                    return Err(InvalidValue::new(format!(
                        "may hold only letters, digits, - _ . / and placeholders, not {bad:?}"
                    )));
                }
                parts.push(Part::Literal(literal.to_owned()));
                rest = &rest[end..];
            }
        }
        match parts.iter().filter(|part| matches!(part, Part::Counter(_))).count() {
            0 => Err(InvalidValue::new("needs the counter, such as {0000}")),
            1 => Ok(Self { text: text.to_owned(), parts }),
            _ => Err(InvalidValue::new("has more than one counter")),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether its counter restarts each year.
    pub fn is_yearly(&self) -> bool {
        self.parts.iter().any(|part| matches!(part, Part::Year | Part::ShortYear))
    }

    /// Which count a document issued at `issue_date` takes its number from: the issue
    /// year's (in UTC) for a yearly pattern, the series' one count otherwise.
    pub fn count_for(&self, issue_date: DateTime<Utc>) -> Count {
        if self.is_yearly() { Count::Year(issue_date.year()) } else { Count::Running }
    }

    /// The number `counter` makes of a document issued at `issue_date`.
    pub fn number(&self, counter: u32, issue_date: DateTime<Utc>) -> DocumentNumber {
        let year = issue_date.year();
        let text = self
            .parts
            .iter()
            .map(|part| match part {
                Part::Literal(text) => text.clone(),
                Part::Counter(width) => format!("{counter:0width$}"),
                Part::Year => format!("{year:04}"),
                Part::ShortYear => format!("{:02}", year.rem_euclid(100)),
            })
            .collect();
        DocumentNumber { text, counter }
    }
}

impl std::fmt::Display for NumberingPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Which count of a series a number comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Count {
    /// The series' one running count, of the patterns without a year.
    Running,
    /// The count of one issue year, of the patterns with one.
    Year(i32),
}

impl Count {
    /// Its key in storage: 0 for the running count, else the year.
    pub fn key(self) -> i32 {
        match self {
            Self::Running => 0,
            Self::Year(year) => year,
        }
    }
}

/// How a team numbers each series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbering {
    pub invoices: NumberingPattern,
    pub credit_notes: NumberingPattern,
    pub quotes: NumberingPattern,
}

impl Default for Numbering {
    fn default() -> Self {
        Self {
            invoices: Series::Invoices.default_pattern(),
            credit_notes: Series::CreditNotes.default_pattern(),
            quotes: Series::Quotes.default_pattern(),
        }
    }
}

impl Numbering {
    pub fn of(&self, series: Series) -> &NumberingPattern {
        match series {
            Series::Invoices => &self.invoices,
            Series::CreditNotes => &self.credit_notes,
            Series::Quotes => &self.quotes,
        }
    }

    pub fn set(&mut self, series: Series, pattern: NumberingPattern) {
        match series {
            Series::Invoices => self.invoices = pattern,
            Series::CreditNotes => self.credit_notes = pattern,
            Series::Quotes => self.quotes = pattern,
        }
    }
}

/// A change of a team's numbering: the series it names take their new patterns, the others
/// keep theirs. Stored as it is, so that two changes of different series both hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NumberingChange(BTreeMap<Series, NumberingPattern>);

impl NumberingChange {
    /// Every series, as `numbering` has it.
    pub fn all(numbering: &Numbering) -> Self {
        Self(Series::ALL.into_iter().map(|series| (series, numbering.of(series).clone())).collect())
    }

    pub fn set(&mut self, series: Series, pattern: NumberingPattern) {
        self.0.insert(series, pattern);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The series it changes, with their new patterns.
    pub fn patterns(&self) -> impl Iterator<Item = (Series, &NumberingPattern)> {
        self.0.iter().map(|(series, pattern)| (*series, pattern))
    }

    /// `numbering` after the change.
    pub fn applied_to(&self, mut numbering: Numbering) -> Numbering {
        for (series, pattern) in self.patterns() {
            numbering.set(series, pattern.clone());
        }
        numbering
    }
}

/// A document's number as issued (`INV-0042`, `2026-0007`), and the counter it shows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocumentNumber {
    text: String,
    counter: u32,
}

impl DocumentNumber {
    /// A number as storage kept it.
    pub fn stored(text: String, counter: u32) -> Self {
        Self { text, counter }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn counter(&self) -> u32 {
        self.counter
    }

    /// What a search compares: in lower case, each run of digits without its leading
    /// zeros, so that `inv-42` finds `INV-0042`.
    pub fn search_key(&self) -> String {
        search_key(&self.text)
    }
}

impl std::fmt::Display for DocumentNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// A pattern made a number that a document of its series has already: numbers never
/// repeat, so nothing is issued until the team chooses a pattern that makes another.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{number} is taken by another document of the series")]
pub struct NumberTaken {
    pub number: DocumentNumber,
}

/// The file name, without extension, of a document numbered `number`: a `/` of the number
/// is a `-`.
pub fn file_stem(number: &str) -> String {
    number.replace('/', "-")
}

/// `text` as [`DocumentNumber::search_key`] compares it.
fn search_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c.is_ascii_digit() {
            let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let digits = rest[..end].trim_start_matches('0');
            key.push_str(if digits.is_empty() { "0" } else { digits });
            rest = &rest[end..];
        } else {
            key.extend(c.to_lowercase());
            rest = &rest[c.len_utf8()..];
        }
    }
    key
}

/// Which documents a search text names by number: those whose number has its search key,
/// and, for a text of digits only, those whose counter it is (`42` finds `2026-0042`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberQuery {
    pub key: String,
    pub counter: Option<u32>,
}

impl NumberQuery {
    pub fn of(text: &str) -> Self {
        let counter = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            text.trim_start_matches('0').parse().ok().filter(|counter| *counter > 0)
        } else {
            None
        };
        Self { key: search_key(text), counter }
    }

    pub fn names(&self, number: &DocumentNumber) -> bool {
        self.counter == Some(number.counter) || number.search_key() == self.key
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn on(year: i32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(year, 12, 31, 23, 59, 59).unwrap()
    }

    fn number(pattern: &str, counter: u32, year: i32) -> String {
        NumberingPattern::parse(pattern).unwrap().number(counter, on(year)).to_string()
    }

    #[test]
    fn a_pattern_pads_its_counter_and_grows_past_its_width() {
        assert_eq!(number("INV-{0000}", 1, 2026), "INV-0001");
        assert_eq!(number("INV-{0000}", 12345, 2026), "INV-12345");
        assert_eq!(number("{YYYY}-{0000}", 7, 2026), "2026-0007");
        assert_eq!(number("RE{YY}{000}", 42, 2026), "RE26042");
        assert_eq!(number("RE{YY}{000}", 1000, 2007), "RE071000");
        assert_eq!(number("{0}", 9, 2026), "9");
        assert_eq!(number("F/{YYYY}/{00}", 3, 2026), "F/2026/03");
    }

    #[test]
    fn the_default_patterns_are_what_their_text_parses_to() {
        for series in Series::ALL {
            let pattern = series.default_pattern();
            assert_eq!(NumberingPattern::parse(pattern.as_str()).unwrap(), pattern);
        }
        assert_eq!(Series::CreditNotes.default_pattern().number(7, on(2026)).as_str(), "CN-0007");
    }

    #[test]
    fn a_yearly_pattern_counts_by_the_issue_year() {
        let yearly = NumberingPattern::parse("{YYYY}-{0000}").unwrap();
        assert!(yearly.is_yearly());
        assert_eq!(yearly.count_for(on(2026)), Count::Year(2026));
        let running = Series::Invoices.default_pattern();
        assert!(!running.is_yearly());
        assert_eq!(running.count_for(on(2026)), Count::Running);
        assert_eq!(Count::Running.key(), 0);
    }

    #[test]
    fn a_pattern_needs_one_counter_and_known_placeholders() {
        for (text, message) in [
            ("", "1 to 40"),
            ("INV-", "needs the counter"),
            ("{YYYY}", "needs the counter"),
            ("{00}-{00}", "more than one counter"),
            ("INV-{NNNN}", "unknown placeholder {NNNN}"),
            ("{MM}{000}", "unknown placeholder {MM}"),
            ("{}{000}", "unknown placeholder {}"),
            ("INV-{0000", "without its }"),
            ("INV {0000}", "not ' '"),
            ("INV-{0000}}", "not '}'"),
            ("{0000000000}", "at most 9 digits"),
        ] {
            let error = NumberingPattern::parse(text).unwrap_err();
            assert!(error.0.contains(message), "{text}: {error}");
        }
        assert!(NumberingPattern::parse(&format!("{}{{0}}", "A".repeat(37))).is_ok());
        assert!(NumberingPattern::parse(&format!("{}{{0}}", "A".repeat(38))).is_err());
    }

    #[test]
    fn a_search_names_a_number_with_or_without_zeros_or_by_its_counter() {
        let number = NumberingPattern::parse("INV-{0000}").unwrap().number(42, on(2026));
        for text in ["INV-0042", "inv-42", "0042", "42", "Inv-00042"] {
            assert!(NumberQuery::of(text).names(&number), "{text}");
        }
        for text in ["INV-", "0", "INV-0", "4 2", "INV-42x", "99999999999", "-42", "42 ", "43"] {
            assert!(!NumberQuery::of(text).names(&number), "{text}");
        }
        let yearly = NumberingPattern::parse("{YYYY}/{000}").unwrap().number(7, on(2026));
        for text in ["2026/007", "2026/7", "7", "007"] {
            assert!(NumberQuery::of(text).names(&yearly), "{text}");
        }
        assert!(!NumberQuery::of("2026").names(&yearly));
        let zeros = NumberingPattern::parse("A{YY}-{00}").unwrap().number(5, on(2000));
        assert_eq!(zeros.to_string(), "A00-05");
        assert_eq!(zeros.search_key(), "a0-5");
        assert!(NumberQuery::of("a0-5").names(&zeros));
    }

    #[test]
    fn a_file_stem_has_no_slash() {
        let number = NumberingPattern::parse("F/{YYYY}/{00}").unwrap().number(3, on(2026));
        assert_eq!(file_stem(number.as_str()), "F-2026-03");
    }
}
