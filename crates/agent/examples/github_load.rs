//! Load generator for the GitHub (repository) trigger: signed `pull_request` deliveries at a
//! fixed number of connections, each request with a delivery id and a body of its own.
//!
//! ```text
//! github_load URL SECRET BODY_FILE [CONNECTIONS=64] [SECONDS=10] [WARMUP_SECONDS=2] [PRS=500]
//! ```
//!
//! The body file is a delivery's JSON (pretty-printed or not). It is minified once; every
//! request then gets `"bench_seq": N` (and the run's nonce) as its first fields and a
//! pull-request number cycling through `1..=PRS`, so no two bodies and no two delivery ids
//! repeat, even across runs against the same database. Each body is signed
//! (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256>`) as it is sent.
//!
//! Each of CONNECTIONS tasks sends one request at a time on its own keep-alive connection.
//! Requests started during the warm-up, or not answered by the end, are not counted. Prints
//! the figures as text and as one `key=value` line starting with `github_load `.
//! Used by `scripts/bench-github.sh`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use tokio::time::Instant;

/// A number no real payload holds, put in place of the pull-request number to split the
/// minified body around it.
const SENTINEL: u64 = 918_273_645_546_372_819;

struct Args {
    url: String,
    secret: String,
    body_file: String,
    connections: usize,
    seconds: u64,
    warmup_seconds: u64,
    prs: u64,
}

fn parse_args() -> Result<Args> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 || args.len() > 7 || args.iter().any(|a| a == "-h" || a == "--help") {
        bail!(
            "usage: github_load URL SECRET BODY_FILE [CONNECTIONS=64] [SECONDS=10] \
             [WARMUP_SECONDS=2] [PRS=500]"
        );
    }
    let number = |index: usize, default: u64, name: &str| -> Result<u64> {
        args.get(index).map_or(Ok(default), |text| text.parse().with_context(|| format!("{name}: {text:?}")))
    };
    let parsed = Args {
        url: args[0].clone(),
        secret: args[1].clone(),
        body_file: args[2].clone(),
        connections: usize::try_from(number(3, 64, "CONNECTIONS")?)?,
        seconds: number(4, 10, "SECONDS")?,
        warmup_seconds: number(5, 2, "WARMUP_SECONDS")?,
        prs: number(6, 500, "PRS")?,
    };
    if parsed.connections == 0 || parsed.seconds == 0 || parsed.prs == 0 {
        bail!("CONNECTIONS, SECONDS and PRS must be positive");
    }
    Ok(parsed)
}

/// The minified delivery cut around its pull-request numbers (the top-level `number` and
/// `pull_request.number`), without its opening brace.
struct Template {
    parts: Vec<String>,
    nonce: u64,
}

impl Template {
    fn load(path: &str, nonce: u64) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
        let mut payload: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;
        let object = payload.as_object_mut().context("the body must be a JSON object")?;
        object.insert("number".into(), SENTINEL.into());
        if let Some(pr) = object.get_mut("pull_request").and_then(|v| v.as_object_mut()) {
            pr.insert("number".into(), SENTINEL.into());
        }
        let minified = serde_json::to_string(&payload)?;
        let rest = minified.strip_prefix('{').context("the body must be a JSON object")?;
        let parts: Vec<String> = rest.split(&SENTINEL.to_string()).map(str::to_owned).collect();
        Ok(Self { parts, nonce })
    }

    /// The body of request `seq`, about the size of the minified file.
    fn body(&self, seq: u64, pr: u64) -> String {
        let mut body = String::with_capacity(self.len() + 64);
        let _ = write!(body, "{{\"bench_seq\":{seq},\"bench_run\":{},", self.nonce);
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                let _ = write!(body, "{pr}");
            }
            body.push_str(part);
        }
        body
    }

    fn len(&self) -> usize {
        self.parts.iter().map(String::len).sum::<usize>() + 1
    }
}

/// `sha256=` and the lowercase hex HMAC-SHA256 of `body`.
fn sign(secret: &[u8], body: &[u8]) -> Result<String> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).context("HMAC key")?;
    mac.update(body);
    let mut header = String::with_capacity(7 + 64);
    header.push_str("sha256=");
    for byte in mac.finalize().into_bytes() {
        let _ = write!(header, "{byte:02x}");
    }
    Ok(header)
}

/// A delivery id shaped like GitHub's GUIDs, unique per run (nonce) and request (seq).
fn delivery_id(nonce: u64, seq: u64) -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        nonce >> 32,
        (nonce >> 16) & 0xffff,
        nonce & 0xfff,
        (seq >> 48) & 0xfff,
        seq & 0xffff_ffff_ffff
    )
}

/// What one connection's task saw during the measured window.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u64>,
    statuses: BTreeMap<u16, u64>,
    duplicates: u64,
    errors: u64,
    first_error: Option<String>,
    first_unexpected: Option<String>,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        self.latencies_us.extend(other.latencies_us);
        for (status, count) in other.statuses {
            *self.statuses.entry(status).or_default() += count;
        }
        self.duplicates += other.duplicates;
        self.errors += other.errors;
        self.first_error = self.first_error.take().or(other.first_error);
        self.first_unexpected = self.first_unexpected.take().or(other.first_unexpected);
    }
}

struct Shared {
    client: reqwest::Client,
    url: String,
    secret: Vec<u8>,
    template: Template,
    prs: u64,
    next_seq: std::sync::atomic::AtomicU64,
    measure_from: Instant,
    end: Instant,
}

async fn connection(shared: std::sync::Arc<Shared>) -> Tally {
    let mut tally = Tally::default();
    loop {
        if Instant::now() >= shared.end {
            break;
        }
        let seq = shared.next_seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = shared.template.body(seq, seq % shared.prs + 1);
        let signature = match sign(&shared.secret, body.as_bytes()) {
            Ok(signature) => signature,
            Err(error) => {
                tally.errors += 1;
                tally.first_error.get_or_insert_with(|| error.to_string());
                break;
            }
        };
        // Latency counts from here: building and signing the body is the client's own work.
        let started = Instant::now();
        let request = shared
            .client
            .post(&shared.url)
            .header("Content-Type", "application/json")
            .header("User-Agent", "GitHub-Hookshot/github_load")
            .header("X-GitHub-Event", "pull_request")
            .header("X-GitHub-Delivery", delivery_id(shared.template.nonce, seq))
            .header("X-Hub-Signature-256", signature)
            .body(body)
            .send();
        // The answer with its body read, so the connection goes back to the pool.
        let answer = async {
            let response = request.await?;
            let status = response.status();
            let text = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, text))
        };
        let Ok(outcome) = tokio::time::timeout_at(shared.end, answer).await else {
            break; // Cut off at the end: not counted.
        };
        let finished = Instant::now();
        if started < shared.measure_from {
            continue;
        }
        match outcome {
            Ok((status, text)) => {
                let micros = u64::try_from((finished - started).as_micros()).unwrap_or(u64::MAX);
                tally.latencies_us.push(micros);
                *tally.statuses.entry(status.as_u16()).or_default() += 1;
                let text = String::from_utf8_lossy(&text);
                if text.contains("\"status\":\"duplicate\"") {
                    tally.duplicates += 1;
                }
                if !status.is_success() {
                    tally.first_unexpected.get_or_insert_with(|| format!("{status}: {text:.200}"));
                }
            }
            Err(error) => {
                tally.errors += 1;
                tally.first_error.get_or_insert_with(|| error.to_string());
            }
        }
    }
    tally
}

/// Milliseconds at quantile `q` of sorted microseconds (nearest rank).
fn percentile_ms(sorted_us: &[u64], q: f64) -> f64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a rank between 0 and the count, far below 2^52"
    )]
    let rank = (q * sorted_us.len() as f64).ceil() as usize;
    sorted_us.get(rank.saturating_sub(1)).copied().map_or(0.0, micros_to_ms)
}

#[expect(clippy::cast_precision_loss, reason = "latencies far below 2^52 µs")]
fn micros_to_ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = parse_args()?;
    let nonce =
        u64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos() & u128::from(u64::MAX))?;
    let template = Template::load(&args.body_file, nonce)?;
    let body_bytes = template.body(0, args.prs).len();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(args.connections)
        .timeout(Duration::from_secs(30))
        .tcp_nodelay(true)
        .build()?;

    let start = Instant::now();
    let measure_from = start + Duration::from_secs(args.warmup_seconds);
    let shared = std::sync::Arc::new(Shared {
        client,
        url: args.url.clone(),
        secret: args.secret.into_bytes(),
        template,
        prs: args.prs,
        next_seq: std::sync::atomic::AtomicU64::new(0),
        measure_from,
        end: measure_from + Duration::from_secs(args.seconds),
    });
    let tasks: Vec<_> = (0..args.connections).map(|_| tokio::spawn(connection(shared.clone()))).collect();
    let mut tally = Tally::default();
    for task in tasks {
        tally.merge(task.await?);
    }
    let sent = shared.next_seq.load(std::sync::atomic::Ordering::Relaxed);

    tally.latencies_us.sort_unstable();
    let answered = tally.latencies_us.len();
    let acks: u64 = tally.statuses.iter().filter(|(s, _)| (200..300).contains(*s)).map(|(_, n)| n).sum();
    let acks = acks - tally.duplicates;
    #[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
    let per_second = |n: u64| n as f64 / args.seconds as f64;
    let (p50, p90, p99) = (
        percentile_ms(&tally.latencies_us, 0.50),
        percentile_ms(&tally.latencies_us, 0.90),
        percentile_ms(&tally.latencies_us, 0.99),
    );
    let max = tally.latencies_us.last().copied().map_or(0.0, micros_to_ms);
    let statuses: Vec<String> =
        tally.statuses.iter().map(|(status, n)| format!("status_{status}={n}")).collect();

    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} connections, {} s after {} s warm-up, bodies of about {} bytes, {} requests sent \
         in all",
        args.connections, args.seconds, args.warmup_seconds, body_bytes, sent
    )?;
    writeln!(
        out,
        "  answered {answered} ({:.0}/s), acknowledged {acks} ({:.0}/s), duplicates {}, \
         errors {}",
        per_second(answered as u64),
        per_second(acks),
        tally.duplicates,
        tally.errors
    )?;
    writeln!(out, "  latency ms: p50 {p50:.2}  p90 {p90:.2}  p99 {p99:.2}  max {max:.2}")?;
    writeln!(out, "  statuses: {}", if statuses.is_empty() { "none".into() } else { statuses.join(" ") })?;
    if let Some(error) = &tally.first_error {
        writeln!(out, "  first error: {error}")?;
    }
    if let Some(answer) = &tally.first_unexpected {
        writeln!(out, "  first non-2xx answer: {answer}")?;
    }
    writeln!(
        out,
        "github_load connections={} seconds={} body_bytes={body_bytes} requests={answered} \
         acks={acks} acks_per_sec={:.1} p50_ms={p50:.2} p90_ms={p90:.2} p99_ms={p99:.2} \
         max_ms={max:.2} duplicates={} errors={} {}",
        args.connections,
        args.seconds,
        per_second(acks),
        tally.duplicates,
        tally.errors,
        statuses.join(" ")
    )?;
    Ok(())
}
