//! `/mcp`: the built-in tools over MCP's streamable HTTP transport, as a key's scopes allow.

use acceptance::{TestApp, create_key, spawn_app};
use accounts::Scope;
use reqwest::Method;
use serde_json::{Value, json};

/// Posts one JSON-RPC message with `key` in `X-API-Key`.
async fn rpc(app: &TestApp, key: &str, message: &Value) -> reqwest::Response {
    app.request(Method::POST, "/mcp", key)
        .header("accept", "application/json, text/event-stream")
        .json(message)
        .send()
        .await
        .unwrap()
}

/// The `result` of request `method` with `params`.
async fn result(app: &TestApp, key: &str, method: &str, params: Value) -> Value {
    let response =
        rpc(app, key, &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})).await;
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!((&answer["jsonrpc"], &answer["id"]), (&json!("2.0"), &json!(7)), "{answer}");
    answer["result"].clone()
}

async fn tool_names(app: &TestApp, key: &str) -> Vec<String> {
    let listed = result(app, key, "tools/list", json!({})).await;
    listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_client_initializes_lists_and_calls_the_tools_its_key_allows() {
    let app = spawn_app().await;
    let init = result(&app, &app.key, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).await;
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "billable");
    assert!(init["capabilities"]["tools"].is_object());
    let newest = result(&app, &app.key, "initialize", json!({"protocolVersion": "1999-01-01"})).await;
    assert_eq!(newest["protocolVersion"], "2025-11-25", "an unknown revision gets the newest");
    let notified =
        rpc(&app, &app.key, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(notified.status(), 202);
    assert_eq!(result(&app, &app.key, "ping", json!({})).await, json!({}));

    assert_eq!(
        tool_names(&app, &app.key).await.len(),
        http_api::tools::CATALOGUE.len(),
        "a write key gets every tool"
    );
    let create = result(
        &app,
        &app.key,
        "tools/call",
        json!({"name": "create_client", "arguments": {
            "name": "Acme", "email": "billing@acme.test", "line1": "1 Main St", "postalCode": "10001"
        }}),
    )
    .await;
    assert_eq!(create["isError"], false, "{create}");
    let made: Value = serde_json::from_str(create["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!((made["name"].as_str(), create["content"][0]["type"].as_str()), (Some("Acme"), Some("text")));
    let (_, read_only) = create_key(&app.store, app.team, app.owner, Scope::ReadOnly, None).await;
    let names = tool_names(&app, &read_only).await;
    assert!(names.contains(&"list_clients".to_owned()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("create_")
            || n.starts_with("update_")
            || n.starts_with("delete_")
            || n.starts_with("mark_")),
        "{names:?}"
    );
    let listed = result(&app, &read_only, "tools/call", json!({"name": "list_clients"})).await;
    let clients: Value = serde_json::from_str(listed["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(clients[0]["id"], made["id"]);
    let refused = result(
        &app,
        &read_only,
        "tools/call",
        json!({"name": "create_client", "arguments": {"name": "X", "email": "x@x.test"}}),
    )
    .await;
    assert_eq!(refused["isError"], true);
    assert_eq!(refused["content"][0]["text"], "this caller lacks the clients:write permission");
    let bad =
        result(&app, &app.key, "tools/call", json!({"name": "get_client", "arguments": {"id": "nope"}}))
            .await;
    assert_eq!(
        (bad["isError"].as_bool(), bad["content"][0]["text"].as_str()),
        (Some(true), Some("client not found"))
    );
    // Arguments the tool's schema does not name are refused, as unknown body fields are.
    for (name, arguments, text) in [
        ("list_clients", json!({"id": "x"}), "id: not accepted; accepted: cursor, limit, q"),
        (
            "list_time_entries",
            json!({"date": "2026-11-20", "project_id": 1}),
            "project_id: not accepted; did you mean projectId?",
        ),
        ("create_tag", json!({"title": "t", "color": "red"}), "color: not accepted; accepted: title"),
    ] {
        let refused =
            result(&app, &app.key, "tools/call", json!({"name": name, "arguments": arguments})).await;
        assert_eq!(
            (refused["isError"].as_bool(), refused["content"][0]["text"].as_str()),
            (Some(true), Some(text)),
            "{name}"
        );
    }
    let tags = app.request(Method::GET, "/v1/track/tags", &app.key).send().await.unwrap();
    assert_eq!(tags.json::<Value>().await.unwrap(), json!([]), "a refused call writes nothing");
}

#[tokio::test]
async fn the_key_comes_as_a_header_or_a_bearer_and_bad_messages_get_json_rpc_errors() {
    let app = spawn_app().await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let missing = app.http.post(app.url("/mcp")).json(&ping).send().await.unwrap();
    assert_eq!(missing.status(), 401);
    let said: Value = missing.json().await.unwrap();
    assert_eq!(said["error"], "missing API key (X-API-Key or Authorization: Bearer)");
    let bearer = app.http.post(app.url("/mcp")).bearer_auth(&app.key).json(&ping).send().await.unwrap();
    assert_eq!(bearer.status(), 200, "Authorization: Bearer works as X-API-Key does");
    assert!(bearer.headers().contains_key("ratelimit-remaining"), "limited as the API is");

    let unknown = rpc(&app, &app.key, &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"})).await;
    let unknown: Value = unknown.json().await.unwrap();
    assert_eq!(unknown["error"]["code"], -32_601);
    let no_tool = rpc(
        &app,
        &app.key,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "drop"}}),
    )
    .await;
    let no_tool: Value = no_tool.json().await.unwrap();
    assert_eq!((no_tool["id"].as_u64(), no_tool["error"]["code"].as_i64()), (Some(3), Some(-32_602)));
    let malformed = app
        .request(Method::POST, "/mcp", &app.key)
        .header("content-type", "application/json")
        .body("{")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), 400);
    let malformed: Value = malformed.json().await.unwrap();
    assert_eq!(malformed["error"]["code"], -32_700);
    let batch = rpc(&app, &app.key, &json!([ping])).await;
    assert_eq!(batch.status(), 400);
    let get = app.request(Method::GET, "/mcp", &app.key).send().await.unwrap();
    assert_eq!(get.status(), 405, "no server-sent event stream");
}

/// The JSON a successful tool call answered with.
async fn tool_answer(app: &TestApp, name: &str, arguments: Value) -> Value {
    let called = result(app, &app.key, "tools/call", json!({"name": name, "arguments": arguments})).await;
    assert_eq!(called["isError"], false, "{name}: {called}");
    serde_json::from_str(called["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn listing_tools_filter_and_page_with_the_next_cursor_in_their_answer() {
    let app = spawn_app().await;
    for name in ["Ada", "Bea", "Cid"] {
        app.create_client(&app.key, name).await;
    }
    let first = tool_answer(&app, "list_clients", json!({"limit": 2})).await;
    let names = |page: &Value| page.as_array().unwrap().iter().map(|c| c["name"].clone()).collect::<Vec<_>>();
    assert_eq!(names(&first["items"]), ["Ada", "Bea"], "{first}");
    let cursor = first["nextCursor"].as_str().expect("a cursor while more follow");
    let last = tool_answer(&app, "list_clients", json!({"limit": 2, "cursor": cursor})).await;
    assert_eq!(names(&last), ["Cid"], "the last page is the array itself");
    assert_eq!(names(&tool_answer(&app, "list_clients", json!({"q": "bea"})).await), ["Bea"]);

    for day in ["2026-11-02", "2026-11-03"] {
        let body = json!({"durationSeconds": 60, "taskName": "Work", "date": day});
        let logged = app.request(Method::POST, "/v1/track/time", &app.key).json(&body).send().await.unwrap();
        assert_eq!(logged.status(), 201);
    }
    let month = json!({"from": "2026-11-01", "to": "2026-11-30", "limit": 1});
    let page = tool_answer(&app, "list_time_entries", month.clone()).await;
    let cursor = page["nextCursor"].as_str().expect("a cursor while more follow");
    let rest = tool_answer(
        &app,
        "list_time_entries",
        json!({"cursor": cursor, "from": "2026-11-01", "to": "2026-11-30", "limit": 1}),
    )
    .await;
    let dates = [&page["items"][0]["date"], &rest[0]["date"]];
    assert_eq!(dates, ["2026-11-02T00:00:00.000Z", "2026-11-03T00:00:00.000Z"]);
    let statuses = tool_answer(&app, "list_invoices", json!({"status": ["PAID", "OVERDUE"]})).await;
    assert_eq!(statuses, json!([]));
}

/// The MCP specification asks servers to check `Origin`: a browser page of another origin
/// (a DNS-rebinding attack on a server on localhost, say) gets a 403 before its key is
/// looked at; listed origins and clients that are not browsers pass.
#[tokio::test]
async fn a_browser_origin_must_be_allowed() {
    let app = spawn_app().await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let send = |origin: Option<&str>, key: &str| {
        let mut request = app
            .request(Method::POST, "/mcp", key)
            .header("accept", "application/json, text/event-stream")
            .json(&ping);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    for origin in ["https://evil.example", "http://127.0.0.1:3000", "null"] {
        for key in [app.key.as_str(), "bk_wrong"] {
            let refused = send(Some(origin), key).await.unwrap();
            assert_eq!(refused.status(), 403, "{origin}");
            let body: Value = refused.json().await.unwrap();
            assert_eq!(
                body["error"],
                format!(
                    "Origin: {origin} may not call /mcp; list it in BILLABLE_MCP_ALLOWED_ORIGINS to allow it"
                )
            );
        }
    }
    // The test server allows https://allowed.example (as BILLABLE_MCP_ALLOWED_ORIGINS would).
    for origin in [Some("https://allowed.example"), Some("https://ALLOWED.example:443"), None] {
        let answered = send(origin, &app.key).await.unwrap();
        assert_eq!(answered.status(), 200, "{origin:?}");
    }
    assert_eq!(send(Some("https://allowed.example"), "bk_wrong").await.unwrap().status(), 401);
}

/// What MCP's transport takes, and only that: one request, notification or response; an
/// `id` a string or an integer; `params` an object.
#[tokio::test]
async fn only_messages_mcp_takes_are_answered() {
    let app = spawn_app().await;
    for (message, status) in [
        (json!({"jsonrpc": "2.0", "id": "a", "method": "ping"}), 200),
        (json!({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {}}), 200),
        (
            serde_json::from_str(r#"{"jsonrpc": "2.0", "id": -2779398939633865426206720, "method": "ping"}"#)
                .unwrap(),
            200,
        ),
        (json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), 202),
        (json!({"jsonrpc": "2.0", "id": 3, "result": {}}), 202),
        (json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": "no"}}), 202),
        (json!({"jsonrpc": "2.0", "id": 1}), 400),
        (json!({"jsonrpc": "2.0", "id": 3, "error": 5}), 400),
        (json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}), 400),
        (json!({"jsonrpc": "2.0", "id": null, "method": "ping"}), 400),
        (json!({"jsonrpc": "2.0", "id": true, "method": "ping"}), 400),
        (json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}), 400),
        (json!({"jsonrpc": "2.0", "id": 1, "method": 5}), 400),
        (json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": []}), 400),
        (json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}), 400),
    ] {
        let response = rpc(&app, &app.key, &message).await;
        assert_eq!(response.status(), status, "{message}");
        if status == 400 {
            let answer: Value = response.json().await.unwrap();
            let id = &answer["id"];
            assert!(
                id.is_null() || id.is_string() || id.is_i64(),
                "{message}: an id a client could match: {answer}"
            );
            assert!(answer["error"]["code"].is_i64(), "{answer}");
        }
    }
}

#[tokio::test]
async fn the_invoice_tools_take_a_rate_per_line() {
    let app = spawn_app().await;
    let client = tool_answer(
        &app,
        "create_client",
        json!({"name": "Buchhandlung", "email": "buch@example.com", "line1": "Weg 1", "postalCode": "10115"}),
    )
    .await;
    let invoice = tool_answer(
        &app,
        "create_invoice",
        json!({"clientId": client["id"], "taxPercentage": 19, "lineItems": [
            {"description": "Fachbuch", "unitPrice": 20, "quantity": 1, "taxPercentage": 7},
            {"description": "Workshop", "unitPrice": 100, "quantity": 1}]}),
    )
    .await;
    let groups: Vec<(String, String)> = invoice["vatBreakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|group| (group["taxPercentage"].to_string(), group["taxAmount"].to_string()))
        .collect();
    assert_eq!(groups, [("7".to_owned(), "1.40".to_owned()), ("19".to_owned(), "19.00".to_owned())]);
    assert_eq!(invoice["tax"].to_string(), "20.40");
}
