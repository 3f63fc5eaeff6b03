use acceptance::spawn_app;
use reqwest::Method;
use serde_json::Value;

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
    assert_eq!(doc, serde_json::to_value(http_api::openapi()).unwrap(), "served as generated");
}

/// Every property of every response schema is required: clients may rely on all of them.
#[tokio::test]
async fn every_response_field_is_required() {
    let doc = serde_json::to_value(http_api::openapi()).unwrap();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for name in ["ClientBody", "ErrorBody", "Deleted", "Health"] {
        let schema = &schemas[name];
        let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let required: Vec<&str> =
            schema["required"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        for property in properties {
            assert!(required.contains(&property.as_str()), "{name}.{property} is not required");
        }
    }
}

/// The document and the routes agree: every documented operation is routed (it answers
/// something other than "no such route" or 405), and every route is documented (the app's
/// routes are registered through the same calls that build the document, and any other
/// method on a documented path is a 405).
#[tokio::test]
async fn documented_routes_and_served_routes_agree() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Probe").await;
    let id = client["id"].as_str().unwrap();
    let doc = http_api::openapi();
    // actix and reqwest use different releases of the `http` crate: go through text.
    let documented: Vec<(String, Method)> = http_api::documented_routes(&doc)
        .into_iter()
        .map(|(path, method)| (path, Method::from_bytes(method.as_str().as_bytes()).unwrap()))
        .collect();
    assert!(documented.len() >= 8, "{documented:?}");
    for (template, method) in &documented {
        let path = template.replace("{id}", id);
        let mut request = app.request(method.clone(), &path, &app.key);
        if [Method::POST, Method::PATCH, Method::PUT].contains(method) {
            request = request.json(&serde_json::json!({}));
        }
        let response = request.send().await.unwrap();
        assert_ne!(response.status(), 405, "{method} {template} is documented but not routed");
        if response.status() == 404 {
            let body: Value = response.json().await.unwrap();
            assert_ne!(body["error"], "no such route", "{method} {template} is documented but not routed");
        }
        for other in [Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            if documented.iter().any(|(t, m)| t == template && *m == other) {
                continue;
            }
            let response = app.request(other.clone(), &path, &app.key).send().await.unwrap();
            assert_eq!(response.status(), 405, "{other} {template} is routed but not documented");
        }
    }
}
