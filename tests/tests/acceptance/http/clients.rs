use acceptance::spawn_app;
use reqwest::Method;
use serde_json::{Value, json};

use super::{error_of, pages};

const CLIENTS: &str = "/v1/invoices/clients";

fn full_client() -> Value {
    json!({
        "name": "Zoë Łukasiewicz — Ёлка ΑΒΓ", "email": "zoe@example.com", "phone": "+30 210 000 0000",
        "vatNumber": "EL123456789", "line1": "Οδός Ερμού 1", "line2": "3rd floor", "line3": "Athens",
        "postalCode": "105 63"
    })
}

#[tokio::test]
async fn create_read_list_replace_delete() {
    let app = spawn_app().await;
    let response = app.request(Method::POST, CLIENTS, &app.key).json(&full_client()).send().await.unwrap();
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let created: Value = response.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(location, format!("{CLIENTS}/{id}"));
    assert_eq!(id.len(), 36);
    assert_eq!(created["teamId"], app.team.to_string());
    for (field, value) in full_client().as_object().unwrap() {
        assert_eq!(&created[field], value, "{field}");
    }
    let created_at = created["createdAt"].as_str().unwrap();
    assert!(chrono::DateTime::parse_from_rfc3339(created_at).is_ok());
    assert!(created_at.ends_with('Z') && created_at.len() == 24, "millisecond UTC: {created_at}");
    assert_eq!(created["updatedAt"], created["createdAt"]);

    let fetched: Value =
        app.request(Method::GET, &location, &app.key).send().await.unwrap().json().await.unwrap();
    assert_eq!(fetched, created);
    let listed: Value =
        app.request(Method::GET, CLIENTS, &app.key).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed, json!([created]));

    // PATCH replaces everything: the optional fields left out become empty.
    let replacement =
        json!({"name": "Zoë L.", "email": "z@example.org", "line1": "Main St 2", "postalCode": "1000"});
    let response = app.request(Method::PATCH, &location, &app.key).json(&replacement).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let replaced: Value = response.json().await.unwrap();
    for (field, value) in replacement.as_object().unwrap() {
        assert_eq!(&replaced[field], value, "{field}");
    }
    for field in ["phone", "vatNumber", "line2", "line3"] {
        assert_eq!(replaced[field], "", "{field}");
    }
    assert_eq!((&replaced["id"], &replaced["createdAt"]), (&created["id"], &created["createdAt"]));

    let response = app.request(Method::DELETE, &location, &app.key).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.json::<Value>().await.unwrap(), json!({"message": "client deleted"}));
    let response = app.request(Method::GET, &location, &app.key).send().await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(error_of(response).await, "client not found");
    let response = app.request(Method::DELETE, &location, &app.key).send().await.unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn list_is_ordered_by_name_case_insensitively() {
    let app = spawn_app().await;
    for name in ["beta", "Alpha", "gamma"] {
        app.create_client(&app.key, name).await;
    }
    let listed: Vec<Value> =
        app.request(Method::GET, CLIENTS, &app.key).send().await.unwrap().json().await.unwrap();
    let names: Vec<_> = listed.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Alpha", "beta", "gamma"]);
}

#[tokio::test]
async fn invalid_bodies_name_the_field_and_store_nothing() {
    let app = spawn_app().await;
    let valid = json!({"name": "A", "email": "a@example.com", "line1": "1", "postalCode": "1"});
    let with = |field: &str, value: Value| {
        let mut body = valid.clone();
        body[field] = value;
        body
    };
    let without = |field: &str| {
        let mut body = valid.clone();
        body.as_object_mut().unwrap().remove(field);
        body
    };
    let cases = [
        (without("name"), "name: is required"),
        (without("email"), "email: is required"),
        (without("line1"), "line1: is required"),
        (without("postalCode"), "postalCode: is required"),
        (with("name", json!("")), "name: must not be empty"),
        (with("name", json!("x".repeat(256))), "name: must be at most 255 characters"),
        (with("line1", json!("")), "line1: must not be empty"),
        (with("postalCode", json!("")), "postalCode: must not be empty"),
        (with("email", json!("not-an-address")), "email: must be a valid email address"),
        (with("phone", json!("x".repeat(256))), "phone: must be at most 255 characters"),
        (
            with("vatNumber", json!("a\u{0}b")),
            "vatNumber: must not contain the control character U+0000; only tab and line breaks may be used",
        ),
        (with("name", json!(5)), "name: invalid type: integer `5`, expected a string"),
        (with("phone", Value::Null), "phone: invalid type: null, expected a string"),
        (
            with("subtotal", json!(1)),
            "subtotal: not accepted; it is computed from the line items and the tax",
        ),
        (with("teamId", json!("x")), "teamId: not accepted; the server sets it"),
        (with("postcode", json!("1")), "postcode: not accepted; did you mean postalCode?"),
        (with("postal_code", json!("1")), "postal_code: not accepted; did you mean postalCode?"),
    ];
    for (body, expected) in cases {
        for (method, path) in [(Method::POST, CLIENTS.to_owned())] {
            let response = app.request(method, &path, &app.key).json(&body).send().await.unwrap();
            assert_eq!(response.status(), 400, "{body}");
            assert_eq!(error_of(response).await, expected, "{body}");
        }
    }
    let created = app.create_client(&app.key, "Existing").await;
    let path = format!("{CLIENTS}/{}", created["id"].as_str().unwrap());
    let response = app.request(Method::PATCH, &path, &app.key).json(&without("email")).send().await.unwrap();
    assert_eq!((response.status().as_u16(), error_of(response).await.as_str()), (400, "email: is required"));
    let listed: Vec<Value> =
        app.request(Method::GET, CLIENTS, &app.key).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed, [created], "nothing but the valid client was stored or changed");
}

#[tokio::test]
async fn malformed_json_wrong_content_type_and_oversized_bodies() {
    let app = spawn_app().await;
    let send = |body: Vec<u8>, content_type: &str| {
        app.request(Method::POST, CLIENTS, &app.key).header("content-type", content_type).body(body).send()
    };
    let response = send(b"{\"name\": ".to_vec(), "application/json").await.unwrap();
    assert_eq!(response.status(), 400);
    assert!(error_of(response).await.starts_with("body: malformed JSON"));
    let response = send(Vec::new(), "application/json").await.unwrap();
    assert_eq!(response.status(), 400);
    let response = send(b"name=a".to_vec(), "application/x-www-form-urlencoded").await.unwrap();
    assert_eq!(response.status(), 415);
    assert_eq!(error_of(response).await, "content-type: must be application/json");
    let huge = format!("{{\"name\": \"{}\"}}", "a".repeat(1024 * 1024 + 1));
    let response = send(huge.into_bytes(), "application/json").await.unwrap();
    assert_eq!(response.status(), 413);
    assert!(error_of(response).await.starts_with("body: must be at most"));
}

#[tokio::test]
async fn unknown_and_malformed_ids_are_not_found() {
    let app = spawn_app().await;
    let body = json!({"name": "A", "email": "a@example.com", "line1": "1", "postalCode": "1"});
    for id in ["0190f0c2-a0f2-7c3d-8e5a-6b7c8d9e0f1a", "not-an-id", "1"] {
        let path = format!("{CLIENTS}/{id}");
        for method in [Method::GET, Method::DELETE] {
            let response = app.request(method.clone(), &path, &app.key).send().await.unwrap();
            assert_eq!(response.status(), 404, "{method} {id}");
            assert_eq!(error_of(response).await, "client not found");
        }
        let response = app.request(Method::PATCH, &path, &app.key).json(&body).send().await.unwrap();
        assert_eq!(response.status(), 404, "PATCH {id}");
    }
}

#[tokio::test]
async fn another_teams_clients_are_invisible_and_untouched() {
    let app = spawn_app().await;
    let theirs = app.create_client(&app.key, "Theirs").await;
    let path = format!("{CLIENTS}/{}", theirs["id"].as_str().unwrap());
    let other_team = acceptance::create_team(&app.store, "Other").await;
    let other_owner = acceptance::create_user(&app.store, other_team, accounts::Role::Owner).await;
    let (_, other_key) =
        acceptance::create_key(&app.store, other_team, other_owner, accounts::Scope::Write, None).await;

    let body = json!({"name": "Hijacked", "email": "a@example.com", "line1": "1", "postalCode": "1"});
    for request in [
        app.request(Method::GET, &path, &other_key),
        app.request(Method::PATCH, &path, &other_key).json(&body),
        app.request(Method::DELETE, &path, &other_key),
    ] {
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 404);
        assert_eq!(error_of(response).await, "client not found", "same body as a missing client");
    }
    let listed: Value =
        app.request(Method::GET, CLIENTS, &other_key).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed, json!([]));
    let still: Value = app.request(Method::GET, &path, &app.key).send().await.unwrap().json().await.unwrap();
    assert_eq!(still, theirs);
}

#[tokio::test]
async fn clients_are_found_by_name_or_email_and_paged_by_name() {
    let app = spawn_app().await;
    for name in ["delta Co", "Alpha", "Charlie", "bravo"] {
        app.create_client(&app.key, name).await;
    }
    let names = |pages: &[Value]| -> Vec<Vec<String>> {
        pages
            .iter()
            .map(|p| p.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect())
            .collect()
    };
    let paged = pages(&app, "/v1/invoices/clients?limit=3").await;
    assert_eq!(names(&paged), [vec!["Alpha", "bravo", "Charlie"], vec!["delta Co"]]);
    assert_eq!(names(&pages(&app, "/v1/invoices/clients?q=DELTA").await), [vec!["delta Co"]]);
    // Every client of the fixture has the same email.
    assert_eq!(names(&pages(&app, "/v1/invoices/clients?q=billing%40").await)[0].len(), 4);
    let response = app.request(Method::GET, "/v1/invoices/clients?q=", &app.key).send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(error_of(response).await, "q: must not be empty");
}

#[tokio::test]
async fn a_page_continues_after_a_name_of_several_lines() {
    let app = spawn_app().await;
    for name in ["Acme\nEast", "Acme\nWest", "Acme"] {
        app.create_client(&app.key, name).await;
    }
    let paged = pages(&app, "/v1/invoices/clients?limit=1").await;
    let names: Vec<&str> = paged.iter().map(|page| page[0]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Acme", "Acme\nEast", "Acme\nWest"]);
}

#[tokio::test]
async fn what_e_invoices_need_of_a_client_is_kept_checked_and_left_alone_when_left_out() {
    let app = spawn_app().await;
    let mut body = full_client();
    body["city"] = json!("Αθήνα");
    body["countryCode"] = json!("GR");
    body["buyerReference"] = json!("04011000-1234512345-06");
    let created: Value =
        app.request(Method::POST, CLIENTS, &app.key).json(&body).send().await.unwrap().json().await.unwrap();
    assert_eq!(
        (&created["city"], &created["countryCode"], &created["buyerReference"]),
        (&json!("Αθήνα"), &json!("GR"), &json!("04011000-1234512345-06"))
    );
    let location = format!("{CLIENTS}/{}", created["id"].as_str().unwrap());
    for (code, error) in [
        ("XX", "countryCode: must be an ISO 3166-1 alpha-2 country code in capitals, such as DE or CH"),
        ("gr", "countryCode: must be an ISO 3166-1 alpha-2 country code in capitals, such as DE or CH"),
    ] {
        let mut refused = full_client();
        refused["countryCode"] = json!(code);
        let response = app.request(Method::PATCH, &location, &app.key).json(&refused).send().await.unwrap();
        assert_eq!(response.status(), 400);
        assert_eq!(error_of(response).await, error);
    }
    // A replacement that leaves them out keeps them; empty strings remove them.
    let kept: Value = app
        .request(Method::PATCH, &location, &app.key)
        .json(&full_client())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (&kept["countryCode"], &kept["buyerReference"]),
        (&json!("GR"), &json!("04011000-1234512345-06"))
    );
    let mut cleared = full_client();
    for field in ["city", "countryCode", "buyerReference"] {
        cleared[field] = json!("");
    }
    let cleared: Value = app
        .request(Method::PATCH, &location, &app.key)
        .json(&cleared)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (&cleared["city"], &cleared["countryCode"], &cleared["buyerReference"]),
        (&json!(""), &json!(""), &json!(""))
    );
}

#[tokio::test]
async fn a_client_s_payment_terms_set_the_due_date_of_invoices_that_give_none() {
    let app = spawn_app().await;
    let body = json!({"name": "Acme", "email": "ap@acme.example", "line1": "1 Main Street", "postalCode": "1000",
                      "paymentTermsDays": 14});
    let made = app.request(Method::POST, CLIENTS, &app.key).json(&body).send().await.unwrap();
    assert_eq!(made.status(), 201);
    let client: Value = made.json().await.unwrap();
    assert_eq!(client["paymentTermsDays"], 14);
    let invoice = |due: Option<&str>| {
        let mut body = json!({"clientId": client["id"], "issueDate": "2026-11-20T10:00:00Z",
                              "lineItems": [{"description": "Work", "unitPrice": 100, "quantity": 1}]});
        if let Some(due) = due {
            body["dueDate"] = json!(due);
        }
        body
    };
    let post = async |body: Value| -> Value {
        let answer = app.request(Method::POST, "/v1/invoices", &app.key).json(&body).send().await.unwrap();
        assert_eq!(answer.status(), 201);
        answer.json().await.unwrap()
    };
    assert_eq!(post(invoice(None)).await["dueDate"], "2026-12-04T10:00:00.000Z");
    assert_eq!(post(invoice(Some("2026-11-25"))).await["dueDate"], "2026-11-25T00:00:00.000Z");
    let pdf =
        app.http.get(app.url(post(invoice(None)).await["pdfUrl"].as_str().unwrap())).send().await.unwrap();
    let text = super::payments::pdf_text(&pdf.bytes().await.unwrap());
    assert!(text.contains("Payment terms") && text.contains("14 days net"), "{text}");

    // A replacement that leaves them out keeps them; null takes them off; 366 is refused.
    let path = format!("{CLIENTS}/{}", client["id"].as_str().unwrap());
    let mut replacement = body.clone();
    replacement.as_object_mut().unwrap().remove("paymentTermsDays");
    let replace = async |body: &Value| -> Value {
        let answer = app.request(Method::PATCH, &path, &app.key).json(body).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{body}");
        answer.json().await.unwrap()
    };
    let kept = replace(&replacement).await;
    assert_eq!(kept["paymentTermsDays"], 14);
    replacement["paymentTermsDays"] = json!(366);
    let refused = app.request(Method::PATCH, &path, &app.key).json(&replacement).send().await.unwrap();
    assert_eq!(refused.status(), 400);
    assert_eq!(error_of(refused).await, "paymentTermsDays: must be a whole number of days from 0 to 365");
    replacement["paymentTermsDays"] = Value::Null;
    let none = replace(&replacement).await;
    assert_eq!(none["paymentTermsDays"], Value::Null);
    assert_eq!(post(invoice(None)).await["dueDate"], Value::Null);
}
