//! The run loop, the providers and the runtime's limits, against the fake model server.

use std::sync::Arc;
use std::time::{Duration, Instant};

use acceptance::fake_model::{Answer, FakeModel};
use accounts::TeamId;
use agent::{AgentRuntime, EchoModel, LocalTurns, ModelSettings, OpenAiModel};
use app::agent_definition::AgentDefinition;
use async_trait::async_trait;
use kernel::{Id, SystemClock};
use serde_json::{Value, json};
use store_memory::MemoryStore;
use triggers::{
    Agent, Model, RunFilter, RunHistory, RunOutcome, RunRecord, RunRequest, RunStatus, Tool, ToolRegistry,
    ToolSpec, TriggerKind,
};

/// A definition with `settings` spliced in (memory, limits), using the fake model.
fn definition(model: &FakeModel, settings: &str) -> AgentDefinition {
    let yaml = format!(
        "name: test\ninstructions: Be brief.\nmodel:\n  provider: openai\n  base_url: {}\n  model: fake-1\n  request_timeout: 2s\n  max_retries: 2\n{settings}\ntriggers:\n  - type: webhook\n    port: 0\n    token_env: T\n",
        model.base_url
    );
    AgentDefinition::parse("agent.yaml", &yaml).unwrap()
}

struct Setup {
    runtime: AgentRuntime,
    store: Arc<MemoryStore>,
    turns: Arc<LocalTurns>,
    team: TeamId,
}

fn setup_with(definition: &AgentDefinition, model: Arc<dyn Model>, tools: ToolRegistry) -> Setup {
    let store = Arc::new(MemoryStore::new());
    let turns = Arc::new(LocalTurns::new(store.clone()));
    let team = TeamId::generate();
    let runtime = AgentRuntime::new(
        definition.settings(),
        team,
        model,
        tools,
        store.clone(),
        turns.clone(),
        Arc::new(SystemClock),
    );
    Setup { runtime, store, turns, team }
}

fn setup(fake: &FakeModel, settings: &str) -> Setup {
    let definition = definition(fake, settings);
    let ModelSettings::OpenAi(openai) = &definition.model else { unreachable!() };
    let model = OpenAiModel::new(openai, Some("sk-test".into()))
        .unwrap()
        .with_first_backoff(Duration::from_millis(50));
    setup_with(&definition, Arc::new(model), ToolRegistry::default())
}

fn request(input: &str, conversation: Option<&str>) -> RunRequest {
    RunRequest::parse(input.to_owned(), conversation).unwrap()
}

impl Setup {
    async fn run(&self, input: &str, conversation: Option<&str>) -> RunOutcome {
        self.runtime.run(TriggerKind::Webhook, request(input, conversation)).await
    }

    async fn runs(&self) -> Vec<RunRecord> {
        self.store.list_runs(self.team, &RunFilter { conversation: None, limit: 100 }).await.unwrap()
    }

    async fn only_run(&self) -> RunRecord {
        let runs = self.runs().await;
        assert_eq!(runs.len(), 1, "{runs:?}");
        runs.into_iter().next().unwrap()
    }
}

fn replied(outcome: RunOutcome) -> (String, u32) {
    match outcome {
        RunOutcome::Replied { reply, steps, .. } => (reply, steps),
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn failed(outcome: RunOutcome) -> String {
    match outcome {
        RunOutcome::Failed { error, .. } => error,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn a_plain_reply_is_one_step_with_the_reported_usage() {
    let fake = FakeModel::start(vec![Answer::Reply { text: "Hello there".into(), usage: (12, 5) }], None);
    let setup = setup(&fake, "");
    assert_eq!(replied(setup.run("Hi", None).await), ("Hello there".to_owned(), 1));
    let request = &fake.requests()[0];
    assert_eq!(request["model"], "fake-1");
    assert_eq!(
        request["messages"],
        json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    );
    assert!(request.get("tools").is_none(), "no tools registered, none offered");
    let run = setup.only_run().await;
    assert_eq!(
        (run.status, run.steps, run.usage.input_tokens, run.usage.output_tokens),
        (RunStatus::Ok, 1, 12, 5)
    );
    assert_eq!((run.trigger, run.input_excerpt.as_str(), run.error), (TriggerKind::Webhook, "Hi", None));
}

struct Adder;

#[async_trait]
impl Tool for Adder {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "add".into(),
            description: "Adds two numbers".into(),
            parameters: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
        }
    }

    async fn call(&self, arguments: Value) -> Result<String, String> {
        let (a, b) = (arguments["a"].as_i64(), arguments["b"].as_i64());
        match (a, b) {
            (Some(a), Some(b)) => Ok((a + b).to_string()),
            _ => Err("a and b must be numbers".into()),
        }
    }
}

#[tokio::test]
async fn the_model_calls_a_registered_tool_then_replies() {
    let fake = FakeModel::start(
        vec![
            Answer::ToolCall { name: "add".into(), arguments: r#"{"a": 2, "b": 3}"#.into(), usage: (10, 2) },
            Answer::Reply { text: "2 + 3 = 5".into(), usage: (20, 4) },
        ],
        None,
    );
    let definition = definition(&fake, "");
    let ModelSettings::OpenAi(openai) = &definition.model else { unreachable!() };
    let mut tools = ToolRegistry::default();
    tools.register(Arc::new(Adder));
    let setup = setup_with(&definition, Arc::new(OpenAiModel::new(openai, None).unwrap()), tools);
    assert_eq!(replied(setup.run("What is 2 + 3?", None).await), ("2 + 3 = 5".to_owned(), 2));

    let requests = fake.requests();
    assert_eq!(requests[0]["tools"][0]["function"]["name"], "add");
    let second = requests[1]["messages"].as_array().unwrap();
    let call = &second[second.len() - 2];
    assert_eq!(call["role"], "assistant");
    assert_eq!(call["tool_calls"][0]["id"], "call_1");
    assert_eq!(second.last().unwrap(), &json!({"role": "tool", "tool_call_id": "call_1", "content": "5"}));
    let run = setup.only_run().await;
    assert_eq!((run.steps, run.usage.input_tokens, run.usage.output_tokens), (2, 30, 6));
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_go_back_to_the_model_as_text() {
    let fake = FakeModel::start(
        vec![
            Answer::ToolCall { name: "delete_everything".into(), arguments: "{}".into(), usage: (1, 1) },
            Answer::ToolCall { name: "add".into(), arguments: "{not json".into(), usage: (1, 1) },
            Answer::reply("sorry"),
        ],
        None,
    );
    let definition = definition(&fake, "");
    let ModelSettings::OpenAi(openai) = &definition.model else { unreachable!() };
    let mut tools = ToolRegistry::default();
    tools.register(Arc::new(Adder));
    let setup = setup_with(&definition, Arc::new(OpenAiModel::new(openai, None).unwrap()), tools);
    assert_eq!(replied(setup.run("go", None).await).1, 3);
    let answer =
        |i: usize| fake.requests()[i]["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(answer(1), "error: there is no tool named \"delete_everything\"");
    assert!(answer(2).as_str().unwrap().starts_with("error: the arguments are not JSON"), "{}", answer(2));
}

#[tokio::test]
async fn a_429_is_retried_after_the_wait_it_asks_for() {
    let fake = FakeModel::start(
        vec![
            Answer::Status { status: 429, retry_after: Some(1) },
            Answer::Reply { text: "ok".into(), usage: (3, 1) },
        ],
        None,
    );
    let setup = setup(&fake, "");
    let started = Instant::now();
    assert_eq!(replied(setup.run("Hi", None).await), ("ok".to_owned(), 1));
    assert!(started.elapsed() >= Duration::from_secs(1), "Retry-After: 1 was honoured");
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(setup.only_run().await.usage.input_tokens, 3);
}

#[tokio::test]
async fn a_5xx_is_retried_then_given_up_and_recorded() {
    let fake = FakeModel::start(vec![], Some(Answer::Status { status: 500, retry_after: None }));
    let setup = setup(&fake, "");
    let error = failed(setup.run("Hi", None).await);
    assert!(error.contains("500") && error.contains("after 3 attempts"), "{error}");
    assert_eq!(fake.requests().len(), 3, "one attempt and max_retries (2) more");
    let run = setup.only_run().await;
    assert_eq!((run.status, run.steps), (RunStatus::Failed, 1));
    assert_eq!(run.error.as_deref(), Some(error.as_str()));
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let fake = FakeModel::start(vec![Answer::Status { status: 401, retry_after: None }], None);
    let setup = setup(&fake, "");
    assert!(failed(setup.run("Hi", None).await).contains("401"));
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_slow_answer_past_the_request_timeout_fails() {
    let fake =
        FakeModel::start(vec![], Some(Answer::Slow { delay: Duration::from_secs(5), text: "late".into() }));
    let setup = setup(&fake, "");
    let started = Instant::now();
    let error = failed(setup.run("Hi", None).await);
    assert!(error.contains("timed out"), "{error}");
    // 2 s per attempt, three attempts, short backoffs: well under the 120 s run timeout.
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_run_past_the_run_timeout_times_out_and_is_recorded() {
    let fake = FakeModel::start(
        vec![Answer::Slow { delay: Duration::from_millis(1500), text: "late".into() }],
        None,
    );
    let setup = setup(&fake, "limits:\n  run_timeout: 1s");
    assert!(matches!(setup.run("Hi", None).await, RunOutcome::TimedOut { .. }));
    let run = setup.only_run().await;
    assert_eq!((run.status, run.steps), (RunStatus::Timeout, 1));
    assert!(run.error.unwrap().contains("limits.run_timeout"));
}

#[tokio::test]
async fn a_model_that_never_stops_calling_tools_is_stopped_at_max_steps() {
    let call = Answer::ToolCall { name: "add".into(), arguments: r#"{"a":1,"b":1}"#.into(), usage: (1, 1) };
    let fake = FakeModel::start(vec![], Some(call));
    let setup = setup(&fake, "limits:\n  max_steps: 3");
    let error = failed(setup.run("loop", None).await);
    assert!(error.contains("limits.max_steps (3)"), "{error}");
    assert_eq!(fake.requests().len(), 3);
    let run = setup.only_run().await;
    assert_eq!((run.steps, run.usage.input_tokens), (3, 3));
}

#[tokio::test]
async fn the_echo_provider_replies_with_the_input_and_no_tokens() {
    let fake = FakeModel::start(vec![], None);
    let setup = setup_with(&definition(&fake, ""), Arc::new(EchoModel), ToolRegistry::default());
    assert_eq!(replied(setup.run("repeat after me", None).await), ("repeat after me".to_owned(), 1));
    let run = setup.only_run().await;
    assert_eq!((run.usage.input_tokens, run.usage.output_tokens), (0, 0));
    assert!(fake.requests().is_empty(), "echo calls no model");
}

#[tokio::test]
async fn thread_memory_feeds_the_last_messages_back() {
    let fake = FakeModel::start(vec![], Some(Answer::Reflect));
    let setup = setup(&fake, "memory:\n  scope: thread\n  max_messages: 3");
    setup.run("first", Some("c1")).await;
    setup.run("second", Some("c1")).await;
    setup.run("third", Some("c1")).await;
    // The third call: instructions, the last three of the four remembered messages, the input.
    let messages = fake.requests()[2]["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "assistant", "user", "assistant", "user"]);
    assert_eq!(messages[1]["content"], "system: Be brief.\nuser: first", "the first reply");
    assert_eq!(messages[2]["content"], "second");
    assert_eq!(messages[4]["content"], "third");
    // Another conversation and a one-shot run start fresh.
    let (fresh, _) = replied(setup.run("alone", Some("c2")).await);
    assert_eq!(fresh, "system: Be brief.\nuser: alone");
    let (one_shot, _) = replied(setup.run("once", None).await);
    assert_eq!(one_shot, "system: Be brief.\nuser: once");
}

#[tokio::test]
async fn scope_none_makes_every_run_one_shot() {
    let fake = FakeModel::start(vec![], Some(Answer::Reflect));
    let setup = setup(&fake, "memory:\n  scope: none");
    setup.run("first", Some("c1")).await;
    let (reply, _) = replied(setup.run("second", Some("c1")).await);
    assert_eq!(reply, "system: Be brief.\nuser: second");
}

#[tokio::test]
async fn idle_conversations_are_forgotten() {
    let fake = FakeModel::start(vec![], None);
    let setup = setup_with(&definition(&fake, ""), Arc::new(EchoModel), ToolRegistry::default());
    for i in 0..300 {
        setup.run("hi", Some(&format!("conversation-{i}"))).await;
    }
    assert_eq!(setup.turns.active(), 0);
    assert_eq!(setup.runs().await.len(), 100, "the listing's limit");
}

#[tokio::test]
async fn runs_across_conversations_are_bounded_by_max_concurrent_runs() {
    let fake = FakeModel::start(vec![], Some(Answer::reply("done")));
    fake.set_delay(Duration::from_millis(300));
    let setup = Arc::new(setup(&fake, "limits:\n  max_concurrent_runs: 2"));
    let runs: Vec<_> = (0..5)
        .map(|i| {
            let setup = setup.clone();
            tokio::spawn(async move { setup.run("hi", Some(&format!("conversation-{i}"))).await })
        })
        .collect();
    for run in runs {
        replied(run.await.unwrap());
    }
    assert_eq!(fake.most_in_flight(), 2, "five conversations, two runs at a time");
    assert_eq!(fake.requests().len(), 5);
}
