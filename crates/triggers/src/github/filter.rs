//! Which deliveries wake the agent: the trigger's `events` and `repos`. Both are matched
//! case-insensitively, as GitHub treats its names.

/// The `events` of a trigger: `<event>` (any action), `<event>.<action>`, or `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFilter(Vec<EventPattern>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum EventPattern {
    Any,
    Event(String),
    EventAction(String, String),
}

impl EventFilter {
    /// Parses the entries; `Err((index, message))` names the refused entry.
    pub fn parse(entries: &[String]) -> Result<Self, (usize, String)> {
        if entries.is_empty() {
            return Err((0, "must name at least one event, or *".into()));
        }
        let word =
            |text: &str| !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        entries
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let entry = entry.trim().to_ascii_lowercase();
                match entry.split_once('.') {
                    _ if entry == "*" => Ok(EventPattern::Any),
                    None if word(&entry) => Ok(EventPattern::Event(entry)),
                    Some((event, action)) if word(event) && word(action) => {
                        Ok(EventPattern::EventAction(event.to_owned(), action.to_owned()))
                    }
                    _ => Err((
                        i,
                        format!("{entry:?} is not an event name: use <event>, <event>.<action> or *"),
                    )),
                }
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    pub fn matches(&self, event: &str, action: Option<&str>) -> bool {
        self.0.iter().any(|pattern| match pattern {
            EventPattern::Any => true,
            EventPattern::Event(name) => name.eq_ignore_ascii_case(event),
            EventPattern::EventAction(name, wanted) => {
                name.eq_ignore_ascii_case(event) && action.is_some_and(|a| wanted.eq_ignore_ascii_case(a))
            }
        })
    }
}

/// The `repos` of a trigger: `owner/name`, or a prefix ending in `*` (`octo-org/*`,
/// `octo-org/api-*`). No patterns means every repository.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RepoPatterns(Vec<RepoPattern>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum RepoPattern {
    Exact(String),
    Prefix(String),
}

impl RepoPatterns {
    /// Parses the entries; `Err((index, message))` names the refused entry.
    pub fn parse(entries: &[String]) -> Result<Self, (usize, String)> {
        entries
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let entry = entry.trim().to_ascii_lowercase();
                let refused = || (i, format!("{entry:?} is not owner/name (a trailing * is allowed)"));
                let (stem, wildcard) = match entry.strip_suffix('*') {
                    Some(stem) => (stem, true),
                    None => (entry.as_str(), false),
                };
                let (owner, name) = stem.split_once('/').ok_or_else(refused)?;
                let allowed = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
                let valid = !owner.is_empty()
                    && owner.chars().all(allowed)
                    && name.chars().all(allowed)
                    && (wildcard || !name.is_empty());
                if !valid {
                    return Err(refused());
                }
                Ok(if wildcard { RepoPattern::Prefix(stem.to_owned()) } else { RepoPattern::Exact(entry) })
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Whether the delivery's repository (`owner/name`) passes. An event about no
    /// repository passes only when there are no patterns.
    pub fn matches(&self, repository: Option<&str>) -> bool {
        if self.0.is_empty() {
            return true;
        }
        let Some(repository) = repository.map(str::to_ascii_lowercase) else {
            return false;
        };
        self.0.iter().any(|pattern| match pattern {
            RepoPattern::Exact(name) => *name == repository,
            RepoPattern::Prefix(stem) => repository.starts_with(stem.as_str()),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::{EventFilter, RepoPatterns};

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn event_filter_table() {
        let filter =
            EventFilter::parse(&strings(&["pull_request", "issues.opened", "Issue_Comment.Created"]))
                .unwrap();
        let table = [
            ("pull_request", Some("opened"), true),
            ("pull_request", Some("closed"), true),
            ("pull_request", None, true),
            ("PULL_REQUEST", Some("synchronize"), true),
            ("issues", Some("opened"), true),
            ("issues", Some("OPENED"), true),
            ("issues", Some("closed"), false),
            ("issues", None, false),
            ("issue_comment", Some("created"), true),
            ("issue_comment", Some("edited"), false),
            ("push", None, false),
            ("pull_request_review", Some("submitted"), false),
        ];
        for (event, action, expected) in table {
            assert_eq!(filter.matches(event, action), expected, "{event} {action:?}");
        }
        let any = EventFilter::parse(&strings(&["*"])).unwrap();
        assert!(any.matches("workflow_run", Some("completed")) && any.matches("star", None));
    }

    #[test]
    fn event_filter_refuses_malformed_entries() {
        assert_eq!(EventFilter::parse(&[]).unwrap_err().0, 0);
        for bad in ["pull request", "", "issues.", ".opened", "a.b.c", "pull_*", "issues.*"] {
            let error = EventFilter::parse(&strings(&["push", bad])).unwrap_err();
            assert_eq!(error.0, 1, "{bad:?}");
        }
    }

    #[test]
    fn repo_patterns_table() {
        let patterns =
            RepoPatterns::parse(&strings(&["octo-org/hello-world", "acme/*", "tools/api-*"])).unwrap();
        let table = [
            (Some("octo-org/hello-world"), true),
            (Some("Octo-Org/Hello-World"), true),
            (Some("octo-org/hello-world2"), false),
            (Some("octo-org/other"), false),
            (Some("acme/anything"), true),
            (Some("ACME/Widgets"), true),
            (Some("acme-corp/widgets"), false),
            (Some("tools/api-gateway"), true),
            (Some("tools/web"), false),
            (None, false),
        ];
        for (repository, expected) in table {
            assert_eq!(patterns.matches(repository), expected, "{repository:?}");
        }
        let everything = RepoPatterns::parse(&[]).unwrap();
        assert!(everything.matches(Some("any/repo")) && everything.matches(None));
    }

    #[test]
    fn repo_patterns_refuse_malformed_entries() {
        for bad in ["justaname", "/name", "owner/", "*/name", "own*er/name", "a/b/c", "a/b*c", "a b/c"] {
            assert!(RepoPatterns::parse(&strings(&[bad])).is_err(), "{bad:?}");
        }
        assert!(RepoPatterns::parse(&strings(&["owner/*", "owner/name*", "a.b/c_d-e"])).is_ok());
    }
}
