//! Times reading a bank statement file alone, the anchor `scripts/bench-banking.sh` sets
//! an import beside:
//!
//! ```text
//! cargo run --release -p statements --example read_bench -- FORMAT FILE [RUNS]
//! ```
//!
//! prints `entries=N median_ms=M peak_rss_kb=K` (the median of RUNS reads, 5 by default,
//! and the process's peak resident memory, the file's bytes included).
#![expect(clippy::print_stdout, reason = "printing the figures is the point")]

use std::time::Instant;

use billing::banking::{StatementFormat, StatementReader};
use kernel::Words as _;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [format, file, rest @ ..] = args.as_slice() else {
        return Err("usage: read_bench FORMAT FILE [RUNS]".to_owned());
    };
    let format = StatementFormat::parse_word(format).map_err(|error| format!("FORMAT {error}"))?;
    let runs: usize = rest.first().map_or(Ok(5), |runs| runs.parse()).map_err(|_| "RUNS must be a number")?;
    let bytes = std::fs::read(file).map_err(|error| format!("{file}: {error}"))?;
    let currency = accounts::Currency::parse("EUR").map_err(|error| error.to_string())?;
    let mut times = Vec::with_capacity(runs);
    let mut entries = 0;
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let statements =
            statements::Reader.read(format, &bytes, None, currency).map_err(|error| error.to_string())?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        entries = statements.iter().map(|s| s.entries.len()).sum();
    }
    times.sort_by(f64::total_cmp);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status.lines().find_map(|line| line.strip_prefix("VmHWM:")).map_or("?", str::trim);
    let peak = peak.trim_end_matches(" kB");
    println!("entries={entries} median_ms={:.1} peak_rss_kb={peak}", times[times.len() / 2]);
    Ok(())
}
