//! The renderer over GitHub's own example deliveries: every `*.payload.json` of
//! octokit/webhooks' `payload-examples`, kept in `tests/fixtures/github/octokit/`, one
//! folder per event. Each rendering is a snapshot (`tests/snapshots/`), so a change to the
//! renderer shows in review as the text the agent will read; and each is checked for the
//! facts its payload holds.

#![expect(clippy::unwrap_used, reason = "tests")]

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use triggers::github::render::{DEFAULT_TEXT_LIMIT, EventFacts, TYPED_EVENTS, model_input, render};

const OPEN: &str = "<<<UNTRUSTED GITHUB EVENT>>>";
const CLOSE: &str = "<<<END UNTRUSTED GITHUB EVENT>>>";

/// One example delivery: its event (the folder), its name (the file's) and its payload.
struct Example {
    event: String,
    name: String,
    payload: Value,
}

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/github/octokit")
}

fn examples() -> Vec<Example> {
    let mut examples = Vec::new();
    for folder in std::fs::read_dir(examples_dir()).unwrap() {
        let folder = folder.unwrap().path();
        if !folder.is_dir() {
            continue;
        }
        let event = folder.file_name().unwrap().to_str().unwrap().to_owned();
        for file in std::fs::read_dir(&folder).unwrap() {
            let file = file.unwrap().path();
            // `payload.json`, or `<variant>.payload.json`.
            let Some(stem) = file.file_name().unwrap().to_str().unwrap().strip_suffix("payload.json") else {
                continue;
            };
            let name = match stem.trim_end_matches('.') {
                "" => "default",
                name => name,
            };
            let payload = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            examples.push(Example { event: event.clone(), name: name.to_owned(), payload });
        }
    }
    examples.sort_by(|a, b| (&a.event, &a.name).cmp(&(&b.event, &b.name)));
    examples
}

fn text<'a>(payload: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(payload, |value, key| value.get(key))?.as_str().filter(|t| !t.trim().is_empty())
}

/// How a one-line field reads in the rendering: control characters are spaces.
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

#[test]
fn there_are_the_examples_of_sixty_event_types() {
    let examples = examples();
    let events: std::collections::BTreeSet<&str> = examples.iter().map(|e| e.event.as_str()).collect();
    assert!(examples.len() >= 270, "{} examples", examples.len());
    assert!(events.len() >= 60, "{} event types", events.len());
}

#[test]
fn every_example_renders_as_its_snapshot() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for example in examples() {
            let text = render(&example.event, &example.payload);
            insta::assert_snapshot!(format!("{}__{}", example.event, example.name), text);
        }
    });
}

/// The facts of the typed renderings: the subject's number, title, state, branches, URL,
/// the first line of its body, and what an edit changed.
#[test]
fn typed_renderings_name_what_the_payload_holds() {
    for example in examples().iter().filter(|e| TYPED_EVENTS.contains(&e.event.as_str())) {
        let payload = &example.payload;
        let rendered = render(&example.event, payload);
        let name = format!("{}/{}", example.event, example.name);
        let must = |what: &str, expected: Option<String>| {
            if let Some(expected) = expected {
                assert!(rendered.contains(&expected), "{name}: {what} {expected:?} missing:\n{rendered}");
            }
        };
        let subject = ["pull_request", "issue"].iter().find_map(|key| payload.get(key));
        if let Some(subject) = subject {
            must("number", subject.get("number").and_then(Value::as_u64).map(|n| format!("#{n}")));
            must("title", text(subject, &["title"]).map(one_line));
            must("state", text(subject, &["state"]).map(str::to_owned));
            must("base branch", text(subject, &["base", "ref"]).map(str::to_owned));
        }
        let primary = ["comment", "review", "release", "workflow_run", "pull_request", "issue"]
            .iter()
            .find_map(|key| payload.get(key));
        if let Some(primary) = primary {
            must("URL", text(primary, &["html_url"]).map(str::to_owned));
            let body = text(primary, &["body"]).and_then(|body| body.lines().find(|l| !l.trim().is_empty()));
            must("body", body.map(|line| line.trim_end().to_owned()));
        }
        must("reviewer", text(payload, &["requested_reviewer", "login"]).map(|l| format!("Reviewer: @{l}")));
        must(
            "milestone",
            text(payload, &["milestone", "title"]).map(|t| format!("Milestone: {}", one_line(t))),
        );
        must("label", text(payload, &["label", "name"]).map(|l| format!("Label: {}", one_line(l))));
        must("assignee", text(payload, &["assignee", "login"]).map(|l| format!("Assignee: @{l}")));
        must("transfer", text(payload, &["changes", "new_repository", "full_name"]).map(str::to_owned));
        if text(payload, &["action"]) == Some("synchronize") {
            must("new head", text(payload, &["after"]).map(|sha| sha[..7].to_owned()));
        }
        if text(payload, &["action"]) == Some("edited") {
            for (field, change) in payload["changes"].as_object().into_iter().flatten() {
                if let Some(old) = change.get("from").and_then(Value::as_str).filter(|t| !t.contains('\n')) {
                    must("old value", Some(format!("Changed {field}")));
                    must("old value", Some(one_line(old)));
                }
            }
        }
        if example.event == "workflow_run" {
            assert!(!rendered.contains("Workflow: ,"), "{name}: the workflow is named:\n{rendered}");
        }
    }
}

#[test]
fn events_about_a_pull_request_or_issue_have_its_conversation() {
    for example in examples() {
        let payload = &example.payload;
        let facts = EventFacts::of(&example.event, payload);
        let number = ["pull_request", "issue"]
            .iter()
            .find_map(|key| payload.get(key)?.get("number")?.as_u64())
            .or_else(|| payload.get("number").and_then(Value::as_u64));
        let expected = match (text(payload, &["repository", "full_name"]), number) {
            (Some(repository), Some(number)) => Some(format!("github:{repository}#{number}")),
            _ => None,
        };
        let key = facts.conversation_key().map(|key| key.as_str().to_owned());
        assert_eq!(key, expected, "{}/{}", example.event, example.name);
    }
}

#[test]
fn no_rendering_carries_account_or_api_clutter() {
    for example in examples() {
        let rendered = render(&example.event, &example.payload);
        for clutter in ["node_id", "gravatar_id", "site_admin", "api.github.com", "user_view_type"] {
            assert!(
                !rendered.contains(clutter),
                "{}/{}: {clutter}:\n{rendered}",
                example.event,
                example.name
            );
        }
    }
}

#[test]
fn every_input_stays_within_its_bound_with_the_frame_intact() {
    for example in examples() {
        let facts = EventFacts::of(&example.event, &example.payload);
        let summary = facts.summary(&example.payload);
        assert!(summary.chars().count() <= 200 && !summary.contains('\n'), "{summary}");
        assert!(summary.starts_with(&example.event), "{summary}");
        for limit in [256, 2048, DEFAULT_TEXT_LIMIT] {
            let input = model_input(&facts, &example.payload, limit);
            let name = format!("{}/{} at {limit}", example.event, example.name);
            assert_eq!((input.matches(OPEN).count(), input.matches(CLOSE).count()), (1, 1), "{name}");
            assert!(input.ends_with(CLOSE), "{name}");
            let inside = &input[input.find(OPEN).unwrap() + OPEN.len() + 1..input.len() - CLOSE.len() - 1];
            // Marker neutralisation may widen `<<<` to `‹‹‹` (2 bytes more each): a bound
            // on the text, not on what the neutralising makes of it.
            assert!(
                inside.len() <= limit + 2 * inside.matches('‹').count() + 2 * inside.matches('›').count(),
                "{name}"
            );
            match &facts.author {
                Some(author) => assert!(input.contains(&format!("written by @{author}. ")), "{name}"),
                None => assert!(input.contains("no GitHub user sent"), "{name}"),
            }
        }
    }
}

const TABLE_BEGIN: &str =
    "<!-- github-examples:begin (generated by crates/triggers/tests/github_examples.rs) -->\n";
const TABLE_END: &str = "<!-- github-examples:end -->";

/// How [`parts`] names a top-level key of a payload shown as JSON.
const JSON_KEY: &str = "json:";

/// What a rendering is made of, in order: the subject line's kind, each labelled line's
/// label, and what its block holds (for JSON, each top-level key).
fn parts(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut lines = text.lines().skip(1);
    for line in lines.by_ref() {
        if line.is_empty() {
            break;
        }
        let label = line.split(": ").next().unwrap_or(line).trim_end_matches(", from");
        // `Pull request #42` and `Workflow run #7` are the same part in every example.
        let label = match label.find(" #") {
            Some(hash) => format!("{} #N", &label[..hash]),
            None => label.to_owned(),
        };
        parts.push(label);
    }
    match lines.next() {
        Some(line) if line.starts_with('{') => {
            let keys = text[text.find('{').unwrap_or(0)..]
                .lines()
                .filter_map(|line| line.strip_prefix("  \"").and_then(|rest| rest.split('"').next()));
            parts.extend(keys.map(|key| format!("{JSON_KEY}{key}")));
        }
        Some(line) if line.starts_with("Diff:") => {
            parts.extend(["diff hunk".to_owned(), "comment".to_owned()]);
        }
        Some(line) if line.starts_with("Commits (") => parts.push("commits".to_owned()),
        Some(line) if line.starts_with("Changed ") => {
            parts.push(format!("{} (old text)", line.split(';').next().unwrap_or(line)));
        }
        Some(_) => parts.push("body".to_owned()),
        None => {}
    }
    parts
}

/// The table of docs/agent.md: per event type, the actions of its examples and the parts
/// of their renderings (each part once, in first-seen order).
fn event_table() -> String {
    let mut rows: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    for example in examples() {
        if rows.last().is_none_or(|(event, _, _)| *event != example.event) {
            rows.push((example.event.clone(), Vec::new(), Vec::new()));
        }
        let (_, actions, shown) = rows.last_mut().unwrap();
        if let Some(action) = text(&example.payload, &["action"])
            && !actions.iter().any(|a| a == action)
        {
            actions.push(action.to_owned());
        }
        for part in parts(&render(&example.event, &example.payload)) {
            if !shown.contains(&part) {
                shown.push(part);
            }
        }
    }
    let mut table =
        String::from("| Event | Actions in the examples | What the agent reads |\n|---|---|---|\n");
    for (event, mut actions, shown) in rows {
        actions.sort();
        let (keys, mut shown): (Vec<String>, Vec<String>) =
            shown.into_iter().partition(|p| p.starts_with(JSON_KEY));
        if !keys.is_empty() {
            let mut keys: Vec<&str> = keys.iter().map(|key| &key[JSON_KEY.len()..]).collect();
            keys.sort_unstable();
            shown.push(format!("the payload as JSON, pruned: {}", keys.join(", ")));
        }
        writeln!(table, "| `{event}` | {} | {} |", actions.join(", "), shown.join("; ")).unwrap();
    }
    table
}

#[test]
fn the_agent_guide_shows_what_each_event_renders() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/agent.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (before, rest) = doc.split_once(TABLE_BEGIN).expect("docs/agent.md has the table's begin marker");
    let (_, after) = rest.split_once(TABLE_END).expect("docs/agent.md has the table's end marker");
    let regenerated = format!("{before}{TABLE_BEGIN}{}{TABLE_END}{after}", event_table());
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &regenerated).unwrap();
    }
    assert!(
        doc == regenerated,
        "docs/agent.md's event table is stale: run `UPDATE_DOCS=1 cargo test -p triggers --test github_examples`"
    );
}
