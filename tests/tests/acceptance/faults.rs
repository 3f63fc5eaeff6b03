//! Clients that are slow or too many, and storage that fails, through the real server.

use std::time::{Duration, Instant};

use acceptance::{TestApp, TestDb, serve_config, spawn_app_with};
use reqwest::Method;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Opens a connection to `app` and sends `request` as is.
async fn send_raw(app: &TestApp, request: &str) -> TcpStream {
    let address = app.address.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

/// Everything the server sends until it closes the connection (or `limit` passes).
async fn read_to_close(stream: &mut TcpStream, limit: Duration) -> String {
    let mut answer = Vec::new();
    tokio::time::timeout(limit, stream.read_to_end(&mut answer)).await.expect("the server closes").unwrap();
    String::from_utf8(answer).unwrap()
}

/// A request head for `POST path` promising `length` bytes of JSON.
fn head(app: &TestApp, path: &str, length: usize, extra: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: {}\r\nContent-Type: application/json\r\n\
         Content-Length: {length}\r\n{extra}\r\n",
        app.key
    )
}

#[tokio::test]
async fn a_body_that_never_arrives_is_a_408_and_the_connection_closes() {
    let app =
        spawn_app_with(app::config::ServeConfig { body_timeout: Duration::from_secs(1), ..serve_config() })
            .await;
    let body =
        r#"{"name": "Slow", "email": "slow@example.com", "line1": "1 Main Street", "postalCode": "1000"}"#;
    let started = Instant::now();
    // Eight bytes of the promised body, then silence; the retry key must not be spent.
    let request = head(&app, "/v1/invoices/clients", body.len(), "Idempotency-Key: slow-1\r\n") + &body[..8];
    let mut stream = send_raw(&app, &request).await;
    let answer = read_to_close(&mut stream, Duration::from_secs(10)).await;
    let waited = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
    assert!(answer.ends_with(r#"{"error":"body: did not arrive within 1 s"}"#), "{answer}");
    assert!(waited >= Duration::from_secs(1) && waited < Duration::from_secs(5), "{waited:?}");

    // Nothing was written, and the same key with the whole body goes through.
    assert_eq!(app.get_json("/v1/invoices/clients").await, serde_json::json!([]));
    let retried = app
        .request(Method::POST, "/v1/invoices/clients", &app.key)
        .header("Idempotency-Key", "slow-1")
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(retried.status(), 201);

    // A body sent whole, slowly but within the deadline, is served.
    let mut stream =
        send_raw(&app, &head(&app, "/v1/invoices/clients", body.len(), "Connection: close\r\n")).await;
    for chunk in body.as_bytes().chunks(16) {
        tokio::time::sleep(Duration::from_millis(150)).await;
        stream.write_all(chunk).await.unwrap();
    }
    let answer = read_to_close(&mut stream, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
}

#[tokio::test]
async fn connections_past_the_bound_wait_until_one_closes() {
    let config = app::config::ServeConfig { max_connections: 2, workers: Some(1), ..serve_config() };
    let app = spawn_app_with(config).await;
    let address = app.address.trim_start_matches("http://").to_owned();
    // Two idle connections fill the bound (the server closes idle ones after 5 s).
    let first = TcpStream::connect(&address).await.unwrap();
    let _second = TcpStream::connect(&address).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let mut third = TcpStream::connect(&address).await.unwrap();
    third.write_all(request.as_bytes()).await.unwrap();
    let mut buffer = [0_u8; 64];
    let early = tokio::time::timeout(Duration::from_secs(1), third.read(&mut buffer)).await;
    assert!(early.is_err(), "a third connection is not served while two are open");
    drop(first);
    let answer = read_to_close(&mut third, Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// A tmpfs of `size` mounted for one test, unmounted when dropped: a filesystem small
/// enough to fill.
struct SmallDisk {
    path: std::path::PathBuf,
}

impl SmallDisk {
    fn mount(size: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("billable_small_disk_{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&path).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .status()
            .expect("mount runs");
        assert!(mounted.success(), "mounting a tmpfs needs root (CI runs as root)");
        Self { path }
    }

    /// Writes a file until the filesystem has no room left; returns its path.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let filler = self.path.join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        let chunk = vec![0_u8; 4096];
        while file.write_all(&chunk).and_then(|()| file.sync_all()).is_ok() {}
        // Whatever room is left is smaller than a page.
        let _ = file.write_all(&[0_u8; 512]);
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.path).status();
        let _ = std::fs::remove_dir(&self.path);
    }
}

fn client_body(name: &str) -> Value {
    serde_json::json!({"name": name, "email": format!("{name}@example.com"), "line1": "1 Main Street", "postalCode": "1000"})
}

async fn create_client(app: &TestApp, name: &str) -> reqwest::StatusCode {
    let body = client_body(name);
    app.request(Method::POST, "/v1/invoices/clients", &app.key).json(&body).send().await.unwrap().status()
}

/// The names of every client, page after page.
async fn client_names(app: &TestApp) -> Vec<String> {
    let mut names = Vec::new();
    let mut next = Some("/v1/invoices/clients?limit=1000".to_owned());
    while let Some(path) = next.take() {
        let response = app.request(Method::GET, &path, &app.key).send().await.unwrap();
        assert_eq!(response.status(), 200);
        next = response.headers().get("link").map(|link| {
            let link = link.to_str().unwrap();
            link.trim_start_matches('<').split_once('>').unwrap().0.to_owned()
        });
        let page: Value = response.json().await.unwrap();
        names.extend(page.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()));
    }
    names
}

#[tokio::test]
async fn sqlite_on_a_full_disk_refuses_writes_with_507_and_resumes_when_there_is_room() {
    let disk = SmallDisk::mount("3m");
    let db = TestDb::sqlite_at(disk.path.join("billable.db"));
    let store = db.open().await;
    let app = acceptance::start(serve_config(), db, store).await;
    assert_eq!(create_client(&app, "before").await, 201);

    let filler = disk.fill();
    // SQLite may still fit a few writes into room its files already hold.
    let (mut acknowledged, mut refused) = (vec!["before".to_owned()], Vec::new());
    for n in 0..5000 {
        let name = format!("full-{n}");
        match create_client(&app, &name).await.as_u16() {
            201 => acknowledged.push(name),
            507 => refused.push(name),
            other => panic!("a write on a full disk answered {other}"),
        }
        if refused.len() == 3 {
            break;
        }
    }
    assert_eq!(refused.len(), 3, "the disk filled up");
    let response = app
        .request(Method::POST, "/v1/invoices/clients", &app.key)
        .json(&client_body("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 507);
    assert_eq!(
        response.json::<Value>().await.unwrap()["error"],
        "the database's disk is full: writes are refused until there is room again"
    );
    refused.push("x".to_owned());
    let ready = app.http.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    let reason = ready.json::<Value>().await.unwrap()["error"].as_str().unwrap().to_owned();
    assert!(reason.starts_with("the database's disk is full"), "{reason}");
    // Reads go on.
    assert_eq!(client_names(&app).await.len(), acknowledged.len());

    std::fs::remove_file(filler).unwrap();
    assert_eq!(create_client(&app, "after").await, 201);
    acknowledged.push("after".to_owned());
    assert_eq!(app.http.get(app.url("/readyz")).send().await.unwrap().status(), 200);
    let mut names = client_names(&app).await;
    names.sort();
    acknowledged.sort();
    assert_eq!(names, acknowledged, "every acknowledged write is kept and no refused one");
}

/// A TCP proxy in front of PostgreSQL that the test can cut: every open connection is
/// dropped and new ones are closed at once, until it is restored.
struct CuttableProxy {
    address: std::net::SocketAddr,
    cut: tokio::sync::watch::Sender<bool>,
}

impl CuttableProxy {
    async fn start(upstream: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (cut, watch) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if *watch.borrow() {
                    continue;
                }
                let (upstream, mut watch) = (upstream.clone(), watch.clone());
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(&upstream).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = watch.wait_for(|cut| *cut) => {}
                    }
                });
            }
        });
        Self { address, cut }
    }

    fn cut(&self) {
        self.cut.send_replace(true);
    }

    fn restore(&self) {
        self.cut.send_replace(false);
    }
}

/// One write of the load: when it was sent and answered, relative to the test's start.
#[derive(Debug)]
struct Write {
    name: String,
    sent: Duration,
    answered: Duration,
    status: u16,
}

#[tokio::test]
async fn postgres_cut_away_is_503_with_retry_after_and_serving_resumes_on_its_return() {
    let db = TestDb::new(acceptance::Backend::Postgres).await;
    drop(db.open().await); // migrated directly, before the proxy is in the way
    let (authority_start, rest) = db.url.split_once('@').unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let proxy = CuttableProxy::start(authority.to_owned()).await;
    let mut config = db.config_with_pool(4, Duration::from_secs(1));
    config.database_url = format!("{authority_start}@{}/{path}", proxy.address);
    let store = app::Store::open(&config, serve_config().runtimes()).await.unwrap();
    let app = std::sync::Arc::new(acceptance::start(serve_config(), db, store).await);

    let started = Instant::now();
    // The writers stop once the test has watched serving resume for a while.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut load = tokio::task::JoinSet::new();
    for writer in 0..6 {
        let (app, stopped) = (app.clone(), stopped.clone());
        load.spawn(async move {
            let mut done = Vec::new();
            for n in 0.. {
                let sent = started.elapsed();
                if *stopped.borrow() {
                    break;
                }
                let name = format!("w{writer}-{n}");
                let body = client_body(&name);
                let response = app
                    .request(Method::POST, "/v1/invoices/clients", &app.key)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                if status == 503 {
                    assert_eq!(response.headers().get("retry-after").unwrap(), "1");
                }
                done.push(Write { name, sent, answered: started.elapsed(), status });
                if status != 201 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            done
        });
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    proxy.cut();
    let cut_at = started.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Reads and the readiness check are refused the same way while the database is gone.
    let readyz = app.http.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(readyz.status(), 503);
    assert_eq!(readyz.headers().get("retry-after").unwrap(), "1");
    proxy.restore();
    let back_at = started.elapsed();
    tokio::time::sleep(Duration::from_secs(4)).await;
    stop.send_replace(true);
    let writes: Vec<Write> = load.join_all().await.into_iter().flatten().collect();

    for write in &writes {
        assert!([201, 503].contains(&write.status), "{write:?}");
    }
    let cut_off = |w: &&Write| w.status == 503;
    assert!(writes.iter().filter(cut_off).count() >= 6, "the cut refused writes");
    let resumed = back_at + Duration::from_secs(2);
    let late: Vec<&Write> = writes.iter().filter(|w| w.sent >= resumed).collect();
    assert!(late.len() >= 6 && late.iter().all(|w| w.status == 201), "serving resumed within 2 s: {late:?}");

    let names = client_names(&app).await;
    for write in &writes {
        let stored = names.iter().filter(|n| **n == write.name).count();
        match write.status {
            201 => assert_eq!(stored, 1, "an acknowledged write is kept: {write:?}"),
            // Only a write whose commit was on the wire when the cut came may have
            // happened although refused: it was sent before the cut and answered after.
            _ if write.sent < cut_at && write.answered >= cut_at => assert!(stored <= 1),
            _ => assert_eq!(stored, 0, "a refused write is absent: {write:?}"),
        }
    }
}
