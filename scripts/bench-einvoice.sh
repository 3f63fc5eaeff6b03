#!/usr/bin/env bash
# Times the e-invoice exports of a one-page invoice (XRechnung UBL and CII XML, the
# Factur-X PDF) beside the plain PDF of the same invoice, measured in the same run, and
# prints the Factur-X PDF's median as a multiple of the plain one's (target: under 2x).
# Tunable: BENCH_EINVOICE_RUNS (500 PDFs of each kind; ten times as many XML documents).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

RUNS=${BENCH_EINVOICE_RUNS:-500}
echo "== e-invoices of a one-page invoice, release build"
cargo run --release --quiet -p einvoice --example einvoice_bench -- --runs "$RUNS"
