use acceptance::{TestApp, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};

fn document() -> Value {
    http_api::openapi()
}

/// Every documented operation as `(path template, method, operation)`.
fn operations(doc: &Value) -> Vec<(String, Method, Value)> {
    http_api::documented_routes(doc)
        .into_iter()
        .map(|(path, method)| {
            let operation = doc["paths"][&path][method.as_str().to_lowercase()].clone();
            // actix and reqwest use different releases of the `http` crate: go through text.
            (path, Method::from_bytes(method.as_str().as_bytes()).unwrap(), operation)
        })
        .collect()
}

/// The documented response of `operation` for `status`; fails the test when there is none.
fn documented_response<'a>(operation: &'a Value, status: u16, what: &str) -> &'a Value {
    let response = &operation["responses"][status.to_string()];
    assert!(response.is_object(), "{what} answered {status}, which its operation does not document");
    response
}

/// Every header the document promises for this response is on it.
fn assert_promised_headers(response: &reqwest::Response, documented: &Value, what: &str) {
    for (name, header) in documented["headers"].as_object().into_iter().flatten() {
        if header["required"] == true {
            assert!(response.headers().contains_key(name.as_str()), "{what}: header {name} is missing");
        }
    }
}

#[tokio::test]
async fn the_description_is_openapi_3_1_with_the_key_scheme() {
    let app = spawn_app().await;
    let doc: Value = app.http.get(app.url("/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(doc["info"]["version"], "2026.6.2");
    let scheme = &doc["components"]["securitySchemes"]["api_key"];
    assert_eq!(
        (scheme["type"].as_str(), scheme["in"].as_str(), scheme["name"].as_str()),
        (Some("apiKey"), Some("header"), Some("X-API-Key"))
    );
    assert_eq!(doc, document(), "served as generated");
}

/// Every property of every response schema is required: clients may rely on all of them.
#[tokio::test]
async fn every_response_field_is_required() {
    let doc = document();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for name in
        ["ClientBody", "InvoiceBody", "TimeEntryBody", "DeliveryBody", "ErrorBody", "Deleted", "Health"]
    {
        let schema = &schemas[name];
        let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let required: Vec<&str> =
            schema["required"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        for property in properties {
            assert!(required.contains(&property.as_str()), "{name}.{property} is not required");
        }
    }
}

/// Two Rust types under one component name would overwrite each other's schema, and one
/// schema cannot say a request may leave out what a response always holds.
#[test]
fn no_two_schemas_share_a_component_name() {
    assert_eq!(http_api::schema_name_clashes(), Vec::<String>::new());
}

/// Every `$ref` resolves, and every component is reached from some operation.
#[test]
fn every_component_is_used_and_every_reference_resolves() {
    let doc = document();
    let components = doc["components"]["schemas"].as_object().unwrap();
    let mut pending = refs_in(&doc["paths"]);
    let mut reached: Vec<String> = Vec::new();
    while let Some(name) = pending.pop() {
        if reached.contains(&name) {
            continue;
        }
        let schema =
            components.get(&name).unwrap_or_else(|| panic!("#/components/schemas/{name} does not exist"));
        pending.extend(refs_in(schema));
        reached.push(name);
    }
    let unused: Vec<&String> = components.keys().filter(|name| !reached.contains(name)).collect();
    assert!(unused.is_empty(), "components no operation uses: {unused:?}");
}

fn refs_in(value: &Value) -> Vec<String> {
    match value {
        Value::Object(object) => {
            let own = object
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
                .map(str::to_owned);
            own.into_iter().chain(object.values().flat_map(refs_in)).collect()
        }
        Value::Array(items) => items.iter().flat_map(refs_in).collect(),
        _ => Vec::new(),
    }
}

/// The words a request or response may carry are the domain's own lists, and the
/// bounds are the domain's.
#[test]
fn enums_and_bounds_come_from_the_domain() {
    use kernel::Words;
    fn words<W: Words>() -> Value {
        W::ALL.iter().map(|w| w.as_str()).collect()
    }
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    for (name, expected) in [
        ("InvoiceStatus", words::<billing::InvoiceStatus>()),
        ("ProjectStatus", words::<tracking::ProjectStatus>()),
        ("Frequency", words::<tracking::Frequency>()),
        ("RunStatus", words::<triggers::RunStatus>()),
        ("TriggerKind", words::<triggers::TriggerKind>()),
        ("Verdict", words::<triggers::Verdict>()),
    ] {
        assert_eq!(schemas[name]["enum"], expected, "{name}");
    }
    for schema in ["InvoiceInput", "InvoicePatch"] {
        let items = &schemas[schema]["properties"]["lineItems"];
        assert_eq!(items["minItems"], 1, "{schema}");
        assert_eq!(items["maxItems"], billing::money::MAX_LINE_ITEMS, "{schema}");
    }
    let invoice = &schemas["InvoiceInput"]["properties"];
    // `tax` has no constant default: left out, it follows `taxPercentage`.
    assert_eq!((&invoice["tax"].get("default"), &invoice["taxPercentage"]["default"]), (&None, &json!(0)));
    let entry = &schemas["TimeEntryInput"]["properties"];
    assert_eq!((&entry["tags"]["default"], &entry["aiGenerated"]["default"]), (&json!([]), &json!(false)));
    // A tag is its id, or `{id, title}` as entries show it.
    let forms = &entry["tags"]["items"]["oneOf"];
    assert_eq!((&forms[0]["type"], &forms[0]["format"]), (&json!("string"), &json!("uuid")));
    assert_eq!(forms[1]["$ref"], "#/components/schemas/EntryTagInput");
    assert_eq!(schemas["EntryTagInput"]["required"], json!(["id", "title"]));
}

/// A create links to every operation on what it made, so a client (or a stateful fuzzer)
/// can follow the new id.
#[test]
fn every_create_links_to_the_operations_on_what_it_made() {
    let doc = document();
    let operations = operations(&doc);
    let creates: Vec<&String> = operations
        .iter()
        .filter(|(_, method, op)| *method == Method::POST && op["responses"]["201"].is_object())
        .map(|(path, _, _)| path)
        .collect();
    assert!(creates.len() >= 6, "{creates:?}");
    for create in &creates {
        let links = &doc["paths"][create.as_str()]["post"]["responses"]["201"]["links"];
        assert!(links.as_object().is_some_and(|l| l.len() >= 2), "POST {create} links to {links}");
        for (path, _, operation) in &operations {
            if !path.starts_with(&format!("{create}/{{id}}")) {
                continue;
            }
            let id = operation["operationId"].as_str().unwrap();
            assert_eq!(links[id]["operationId"], id, "POST {create} does not link to {id}");
            assert_eq!(links[id]["parameters"]["id"], "$response.body#/id");
        }
    }
    let invoice_links = &doc["paths"]["/v1/invoices"]["post"]["responses"]["201"]["links"];
    assert_eq!(invoice_links["invoice_pdf"]["parameters"]["id"], "$response.body#/id");
    assert!(invoice_links.get("get_client").is_none(), "a client is not what an invoice create made");
}

/// Without a key, exactly the operations that declare the key requirement answer 401;
/// the public ones (PDF, health, metrics) declare none. `/mcp` takes the key as `/v1` does.
#[tokio::test]
async fn the_key_requirement_is_declared_exactly_where_it_is_enforced() {
    let app = spawn_app().await;
    let doc = document();
    for (template, method, operation) in operations(&doc) {
        let what = format!("{method} {template}");
        let path = template.replace("{id}", &uuid::Uuid::now_v7().to_string());
        let response =
            app.http.request(method.clone(), app.url(&path)).json(&json!({})).send().await.unwrap();
        let declared = operation["security"] == json!([{"api_key": []}]);
        assert_eq!(response.status() == 401, declared, "{what} answered {} without a key", response.status());
        // Stripe's deliveries carry its signature, not a key.
        let public = !(template.starts_with("/v1/") || template == "/mcp")
            || template.ends_with("/pdf")
            || template.starts_with("/v1/payment-providers/stripe/webhook/");
        assert_eq!(declared, !public, "{what}: key requirement");
        let documented = documented_response(&operation, response.status().as_u16(), &what);
        assert_promised_headers(&response, documented, &what);
    }
}

/// The document and the routes agree: every documented operation is routed (it answers
/// something other than "no such route" or 405) with a documented status and the headers
/// the document promises for it, and every route is documented (the app's routes are
/// registered through the same calls that build the document, and any other method on a
/// documented path is a 405).
#[tokio::test]
async fn documented_routes_and_served_routes_agree() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Probe").await;
    let id = client["id"].as_str().unwrap();
    let doc = document();
    let documented = operations(&doc);
    assert!(documented.len() >= 8, "{}", documented.len());
    for (template, method, operation) in &documented {
        let what = format!("{method} {template}");
        let path = template.replace("{id}", id);
        let mut request = app.request(method.clone(), &path, &app.key);
        if [Method::POST, Method::PATCH, Method::PUT].contains(method) {
            request = request.json(&json!({}));
        }
        let response = request.send().await.unwrap();
        assert_ne!(response.status(), 405, "{what} is documented but not routed");
        let documented_response = documented_response(operation, response.status().as_u16(), &what);
        assert_promised_headers(&response, documented_response, &what);
        if response.status() == 404 {
            let body: Value = response.json().await.unwrap();
            assert_ne!(body["error"], "no such route", "{what} is documented but not routed");
        }
        for other in [Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            if documented.iter().any(|(t, m, _)| t == template && *m == other) {
                continue;
            }
            let response = app.request(other.clone(), &path, &app.key).send().await.unwrap();
            assert_eq!(response.status(), 405, "{other} {template} is routed but not documented");
        }
    }
}

/// `HEAD` answers wherever `GET` does: the same status and headers, no body.
#[tokio::test]
async fn head_is_get_without_the_body() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Probe").await;
    let id = client["id"].as_str().unwrap();
    let doc = document();
    let gets: Vec<String> = operations(&doc)
        .into_iter()
        .filter(|(_, method, _)| *method == Method::GET)
        .map(|(template, _, _)| template.replace("{id}", id))
        .collect();
    assert!(gets.len() >= 10, "{gets:?}");
    for path in
        gets.iter().map(String::as_str).chain(["/openapi.json", "/reference/", "/v1/invoices/pdf?id=x"])
    {
        let get = send(&app, Method::GET, path).await;
        let head = send(&app, Method::HEAD, path).await;
        assert_eq!(head.status(), get.status(), "HEAD {path}");
        let length = |r: &reqwest::Response| r.headers().get("content-length").cloned();
        let content_type = |r: &reqwest::Response| r.headers().get("content-type").cloned();
        assert_eq!(content_type(&head), content_type(&get), "HEAD {path}");
        let get_body = get.bytes().await.unwrap();
        if !path.starts_with("/metrics") {
            // The metrics text changes between the two requests.
            assert_eq!(length(&head).unwrap(), get_body.len().to_string().as_str(), "HEAD {path}");
        }
        assert!(head.bytes().await.unwrap().is_empty(), "HEAD {path} sent a body");
    }
    let response = send(&app, Method::HEAD, "/v1/invoices/clients/x/y").await;
    assert_eq!(response.status(), 404, "HEAD where no GET is served");
}

async fn send(app: &TestApp, method: Method, path: &str) -> reqwest::Response {
    app.request(method, path, &app.key).send().await.unwrap()
}

/// The reference and generators show a one-line summary and a description per operation.
#[test]
fn every_operation_has_a_summary_line_and_a_description() {
    let doc = document();
    for (template, method, operation) in operations(&doc) {
        let summary = operation["summary"].as_str().unwrap_or_default();
        assert!(!summary.is_empty() && !summary.contains('\n'), "{method} {template}: summary {summary:?}");
        let description = operation["description"].as_str().unwrap_or_default();
        assert!(!description.is_empty(), "{method} {template} has no description");
    }
}

/// The reference groups operations under the described tags: an operation under a tag the
/// description does not declare would stand in a group with no heading text.
#[test]
fn every_operation_is_under_a_declared_tag() {
    let doc = document();
    let declared: Vec<&str> =
        doc["tags"].as_array().unwrap().iter().map(|tag| tag["name"].as_str().unwrap()).collect();
    for (template, method, operation) in operations(&doc) {
        let tags = operation["tags"].as_array().unwrap();
        assert!(!tags.is_empty(), "{method} {template} has no tag");
        for tag in tags {
            assert!(
                declared.contains(&tag.as_str().unwrap()),
                "{method} {template}: tag {tag} is not declared"
            );
        }
    }
}

/// "Try it out" works from the description alone: every request body and every parameter
/// has a realistic example (`Idempotency-Key`'s, optional, shown and never filled in), and
/// the reference sends the examples as the server takes them.
#[tokio::test]
async fn every_body_and_parameter_has_an_example() {
    let doc = document();
    for (template, method, operation) in operations(&doc) {
        let what = format!("{method} {template}");
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            let name = parameter["name"].as_str().unwrap();
            let example = parameter.get("example").or_else(|| parameter["schema"]["examples"].get(0));
            assert!(example.is_some(), "{what}: parameter {name} has no example");
            // A required one is filled in by the reference; an optional one only shown.
            assert_eq!(parameter.get("example").is_some(), parameter["required"] == true, "{what}: {name}");
        }
        let Some(body) = operation["requestBody"]["content"]["application/json"]["schema"].as_object() else {
            continue;
        };
        let schema = match body.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                &doc["components"]["schemas"][reference.trim_start_matches("#/components/schemas/")]
            }
            None => &operation["requestBody"]["content"]["application/json"]["schema"],
        };
        assert!(schema.get("example").is_some(), "{what}: its body has no example");
    }
}

/// The examples Try it out sends, sent by hand: each write answers its success, or a 404 or
/// 400 only for the example id, which is nobody's.
#[tokio::test]
async fn the_example_bodies_are_taken() {
    let app = spawn_app().await;
    let doc = document();
    let example_of = |name: &str| doc["components"]["schemas"][name]["example"].clone();
    let post = |path: &str, body: Value| {
        let request = app.request(Method::POST, path, &app.key).json(&body);
        async move { request.send().await.unwrap() }
    };
    for (path, schema) in [
        ("/v1/invoices/clients", "ClientInput"),
        ("/v1/invoices", "InvoiceInput"),
        ("/v1/track/time", "TimeEntryInput"),
        ("/v1/track/projects", "ProjectInput"),
        ("/v1/track/tags", "TagInput"),
        ("/v1/track/timer/start", "TimerInput"),
    ] {
        let response = post(path, example_of(schema)).await;
        assert_eq!(response.status(), 201, "{path}: {}", response.text().await.unwrap());
    }
    // The time the example logged, previewed as an invoice.
    let preview = post("/v1/invoices/from-time", example_of("TimeInvoiceInput")).await;
    assert_eq!(preview.status(), 200, "{}", preview.text().await.unwrap());
    let section = post("/v1/track/sections", example_of("SectionInput")).await;
    assert_eq!(section.status(), 400);
    assert_eq!(section.json::<Value>().await.unwrap()["error"], "projectId: no such project in the team");
    let mcp = app
        .request(Method::POST, "/mcp", &app.key)
        .json(
            &doc["paths"]["/mcp"]["post"]["requestBody"]["content"]["application/json"]["schema"]["example"],
        )
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 200);
}
