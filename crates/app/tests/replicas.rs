//! Several real `billable serve` processes on one database, as a deployment runs them:
//! replicas starting together on an empty PostgreSQL (over TLS) all come up, one of them
//! migrates and bootstraps, the key it prints works on every replica; SQLite refuses a
//! second server on its file.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use support::{Schema, Scratch, billable, psql};

/// A running `billable serve`: its REST port and everything it wrote on stderr so far.
struct Replica {
    child: Child,
    port: u16,
    stderr: mpsc::Receiver<String>,
    lines: Vec<String>,
}

impl Replica {
    /// Starts a replica; `Err` holds its stderr when it exits instead of serving.
    fn start(database_url: &str) -> Result<Self, String> {
        Self::start_with(billable(database_url))
    }

    /// Starts `command` (the binary, its environment set) as a replica.
    fn start_with(mut command: Command) -> Result<Self, String> {
        let mut child =
            command.args(["serve", "--listen", "127.0.0.1:0"]).stderr(Stdio::piped()).spawn().unwrap();
        let (send, stderr) = mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        let mut lines = Vec::new();
        // Until it says where it serves, or its stderr closes (it exited) or stays silent.
        while let Ok(line) = stderr.recv_timeout(Duration::from_mins(1)) {
            let port = line.contains("serving the REST API").then(|| port_in(&line)).flatten();
            lines.push(line);
            if let Some(port) = port {
                return Ok(Self { child, port, stderr, lines });
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(lines.join("\n"))
    }

    /// The key printed at first start, if this replica printed one.
    fn printed_key(&mut self) -> Option<String> {
        self.lines.extend(self.stderr.try_iter());
        self.lines.iter().find_map(|line| line.trim().strip_prefix("X-API-Key: ").map(str::to_owned))
    }

    /// The status of `GET path` with `key`.
    fn get(&self, path: &str, key: &str) -> u16 {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: {key}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0)
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn port_in(line: &str) -> Option<u16> {
    let digits: String = line.split("\"port\":").nth(1)?.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[test]
fn replicas_starting_together_on_an_empty_database_all_serve_as_one() {
    let schema = Schema::new("together");
    let url = schema.url("sslmode=require");
    let starting: Vec<_> = (0..3)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || Replica::start(&url))
        })
        .collect();
    let mut replicas: Vec<Replica> = starting
        .into_iter()
        .map(|s| s.join().unwrap().unwrap_or_else(|log| panic!("a replica failed:\n{log}")))
        .collect();
    let keys: Vec<String> = replicas.iter_mut().filter_map(Replica::printed_key).collect();
    assert_eq!(keys.len(), 1, "exactly one replica prints the first key: {keys:?}");
    assert_eq!(psql(&format!("SELECT count(*) FROM {}.teams", schema.0)), "1");
    assert_eq!(psql(&format!("SELECT count(*) FROM {}.api_keys", schema.0)), "1");
    for replica in &replicas {
        assert_eq!(replica.get("/v1/invoices/clients", &keys[0]), 200, "the key works on every replica");
    }
    // The replicas' sessions (their pools keep them open) are all encrypted.
    let sessions = psql(&format!(
        "SELECT count(*) FILTER (WHERE s.ssl) || ' of ' || count(*) FROM pg_stat_activity a \
         JOIN pg_stat_ssl s USING (pid) WHERE a.application_name = '{}'",
        schema.0
    ));
    let (encrypted, all) = sessions.split_once(" of ").unwrap();
    assert!(all != "0" && encrypted == all, "{sessions} sessions encrypted");
}

#[test]
fn replicas_on_an_older_database_wait_for_one_to_migrate() {
    let schema = Schema::new("older");
    let url = schema.url("sslmode=prefer");
    // The schema as an older release left it: every migration but the newest.
    let migrated = billable(&url).arg("migrate").output().unwrap();
    assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
    let newest = psql(&format!("SELECT max(version) FROM {}.__diesel_schema_migrations", schema.0));
    let migrations = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/postgres");
    let undo = std::fs::read_dir(&migrations)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|dir| dir.file_name().unwrap().to_string_lossy().replace('-', "").starts_with(&newest))
        .map_or_else(
            || panic!("no migration {newest} in {}", migrations.display()),
            |dir| std::fs::read_to_string(dir.join("down.sql")).unwrap(),
        );
    psql(&format!(
        "SET search_path = {0}; {undo}; DELETE FROM __diesel_schema_migrations WHERE version = '{newest}'",
        schema.0
    ));
    let starting: Vec<_> = (0..2)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || Replica::start(&url))
        })
        .collect();
    for replica in starting {
        replica.join().unwrap().unwrap_or_else(|log| panic!("a replica failed:\n{log}"));
    }
    assert_eq!(
        psql(&format!(
            "SELECT count(*) FROM {}.__diesel_schema_migrations WHERE version = '{newest}'",
            schema.0
        )),
        "1"
    );
}

#[test]
fn sqlite_refuses_a_second_server_on_its_file() {
    let scratch = Scratch::new("sqlite-second-server");
    let url = scratch.sqlite_url();
    let _first = Replica::start(&url).unwrap_or_else(|log| panic!("the first server failed:\n{log}"));
    let second = billable(&url).args(["serve", "--listen", "127.0.0.1:0"]).output().unwrap();
    assert!(!second.status.success());
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains("another `billable serve` is serving") && said.contains("PostgreSQL"), "{said}");
    // The administrative commands still work beside the server.
    let teams = billable(&url).args(["teams", "create", "--name", "Beside"]).output().unwrap();
    assert!(teams.status.success(), "{}", String::from_utf8_lossy(&teams.stderr));
}

/// `sslmode` and `sslrootcert` as libpq reads them, against the test server's own
/// certificate (Debian's cluster has a self-signed one for `localhost`).
#[test]
fn tls_modes_verify_as_libpq_does() {
    let schema = Schema::new("tls");
    let certificate = psql("SHOW ssl_cert_file");
    let on = |host: &str, tls: &str| {
        let url = schema.url(tls);
        assert!(url.contains("@127.0.0.1:"), "the test needs TEST_DATABASE_URL on 127.0.0.1: {url}");
        let output =
            billable(&url.replace("@127.0.0.1:", &format!("@{host}:"))).arg("migrate").output().unwrap();
        (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let root = format!("sslrootcert={certificate}");
    for (host, tls) in [
        ("127.0.0.1", "sslmode=disable".to_owned()),
        ("127.0.0.1", "sslmode=require".to_owned()),
        ("127.0.0.1", format!("sslmode=verify-ca&{root}")),
        ("localhost", format!("sslmode=verify-full&{root}")),
    ] {
        let (connected, said) = on(host, &tls);
        assert!(connected, "{host} {tls}: {said}");
    }
    let (connected, said) = on("127.0.0.1", &format!("sslmode=verify-full&{root}"));
    assert!(!connected && said.contains("not valid for name"), "verify-full checks the host name: {said}");
    let (connected, said) = on("localhost", "sslmode=verify-full&sslrootcert=system");
    assert!(!connected && said.contains("UnknownIssuer"), "verify-full checks the chain: {said}");
    let (connected, said) = on("localhost", "sslmode=verify-ca&sslrootcert=system");
    assert!(!connected && said.contains("needs sslmode=verify-full"), "{said}");
    let (connected, said) = on("localhost", "sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem");
    assert!(!connected && said.contains("/nonexistent/ca.pem"), "{said}");
}

/// A Redis of the test's own, on a free port, stopped on drop.
struct Redis {
    child: Child,
    url: String,
}

impl Redis {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is installed (.ci/run installs it)");
        // Dropped (and so stopped) if it never answers.
        let redis = Self { child, url: format!("redis://127.0.0.1:{port}") };
        let answers = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(answers, "redis-server did not start on port {port}");
        redis
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The statuses of `count` requests spread over `replicas` in turn.
fn spread(replicas: &[Replica], count: usize, path: &str, key: &str) -> Vec<u16> {
    (0..count).map(|n| replicas[n % replicas.len()].get(path, key)).collect()
}

#[test]
fn replicas_count_rate_limits_together_in_redis() {
    let schema = Schema::new("limits");
    let mut redis = Redis::start();
    let start = || {
        let mut command = billable(&schema.url("sslmode=prefer"));
        command
            .env("BILLABLE_RATE_LIMIT", "10/60s")
            .env("BILLABLE_IP_RATE_LIMIT", "6/60s")
            .env("BILLABLE_REDIS_URL", &redis.url);
        Replica::start_with(command).unwrap_or_else(|log| panic!("a replica failed:\n{log}"))
    };
    let mut first = start();
    let key = first.printed_key().unwrap();
    let replicas = [first, start()];
    let keyed = spread(&replicas, 20, "/v1/invoices/clients", &key);
    assert_eq!(keyed.iter().filter(|s| **s == 200).count(), 10, "the key's 10, not 20: {keyed:?}");
    assert!(keyed[10..].iter().all(|s| *s == 429), "{keyed:?}");
    let public = spread(&replicas, 12, "/v1/invoices/pdf?id=01a2aa6a-0000-7000-8000-000000000000", "");
    assert_eq!(public.iter().filter(|s| **s == 404).count(), 6, "the address's 6, not 12: {public:?}");
    // Without Redis each replica counts alone again, rather than refuse or fail.
    redis.child.kill().unwrap();
    redis.child.wait().unwrap();
    // A key that has not been counted yet: each replica grants it its own 10.
    let (team, user) = psql(&format!("SELECT team_id || ' ' || user_id FROM {}.api_keys", schema.0))
        .split_once(' ')
        .map(|(team, user)| (team.to_owned(), user.to_owned()))
        .unwrap();
    let created = billable(&schema.url("sslmode=prefer"))
        .args(["keys", "create", "--team", &team, "--user", &user, "--scope", "read-only"])
        .output()
        .unwrap();
    let fresh = String::from_utf8(created.stdout).unwrap().trim().to_owned();
    let alone = spread(&replicas, 24, "/v1/invoices/clients", &fresh);
    assert_eq!(alone.iter().filter(|s| **s == 200).count(), 20, "10 per replica: {alone:?}");
}

#[test]
fn a_redis_that_does_not_answer_stops_startup() {
    let scratch = Scratch::new("redis-unreachable");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let output = billable(&scratch.sqlite_url())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("BILLABLE_REDIS_URL", format!("redis://127.0.0.1:{port}"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("BILLABLE_REDIS_URL: Redis does not answer"), "{said}");
}

/// With a burst of 100 a replica takes 4 tokens at a time: across two replicas the key
/// gets its 100, never more and fewer by at most the two slices they may hold unspent.
#[test]
fn shared_limits_in_slices_stay_within_the_stated_tolerance() {
    let schema = Schema::new("slices");
    let redis = Redis::start();
    let start = || {
        let mut command = billable(&schema.url("sslmode=prefer"));
        command.env("BILLABLE_RATE_LIMIT", "100/1h").env("BILLABLE_REDIS_URL", &redis.url);
        Replica::start_with(command).unwrap_or_else(|log| panic!("a replica failed:\n{log}"))
    };
    let mut first = start();
    let key = first.printed_key().unwrap();
    let replicas = [first, start()];
    let granted = spread(&replicas, 130, "/v1/invoices/clients", &key).iter().filter(|s| **s == 200).count();
    let slice = 100_usize.div_ceil(32);
    assert!((100 - 2 * slice..=100).contains(&granted), "{granted} granted of a limit of 100");
}

/// Starts `count` replicas on `url` that cache key checks for a minute; returns them and
/// the key the first one printed.
fn caching_replicas(url: &str, count: usize) -> (Vec<Replica>, String) {
    let mut replicas: Vec<Replica> = (0..count)
        .map(|_| {
            let mut command = billable(url);
            command.env("BILLABLE_KEY_CACHE_TTL", "60s");
            Replica::start_with(command).unwrap_or_else(|log| panic!("a replica failed:\n{log}"))
        })
        .collect();
    let key = replicas[0].printed_key().expect("the first replica prints the first key");
    (replicas, key)
}

/// Revokes `key_id` with `billable keys revoke`, a process of its own, and asserts that
/// every replica refuses `key` within a second, though each had it cached.
fn revocation_reaches_every_replica(url: &str, replicas: &[Replica], key: &str, key_id: &str) {
    for replica in replicas {
        assert_eq!(replica.get("/v1/invoices/clients", key), 200, "the key is cached on every replica");
    }
    let revoked = billable(url).args(["keys", "revoke", key_id]).output().unwrap();
    assert!(revoked.status.success(), "{}", String::from_utf8_lossy(&revoked.stderr));
    let after = std::time::Instant::now();
    for replica in replicas {
        while replica.get("/v1/invoices/clients", key) != 401 {
            assert!(
                after.elapsed() < Duration::from_secs(1),
                "still accepted {:?} after the revocation",
                after.elapsed()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn a_revoked_key_stops_working_on_every_replica_within_a_second() {
    let schema = Schema::new("revoke");
    let url = schema.url("sslmode=disable");
    let (replicas, key) = caching_replicas(&url, 2);
    let id = psql(&format!("SELECT id FROM {}.api_keys", schema.0));
    revocation_reaches_every_replica(&url, &replicas, &key, &id);
}

#[test]
fn a_revoked_key_stops_working_on_a_sqlite_server_within_a_second() {
    let scratch = Scratch::new("sqlite-revoke");
    let url = scratch.sqlite_url();
    let (replicas, key) = caching_replicas(&url, 1);
    // The key's id as the file holds it (16 bytes, or the text of a UUID).
    let read_id = "import sqlite3, sys, uuid; v = sqlite3.connect(sys.argv[1]).execute('SELECT id FROM api_keys').fetchone()[0]; \
                   print(uuid.UUID(bytes=v) if isinstance(v, bytes) else v)";
    let output =
        Command::new("python3").args(["-c", read_id]).arg(scratch.0.join("billable.db")).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    revocation_reaches_every_replica(&url, &replicas, &key, &id);
}
