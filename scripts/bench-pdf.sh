#!/usr/bin/env bash
# Times the built-in invoice renderer and compares it with headless Chromium printing the
# same invoice from HTML, the way HTML-to-PDF invoicing products do it.
#
#   1. builds and runs `render_bench` in release: median and p99 per document for a 1-page
#      and a 10-page invoice, and writes the same invoices as HTML;
#   2. times the client's page (HTML, `pages`) beside the PDF of the same invoice with its
#      payment QR code, EPC and Swiss, in one process (`page_bench`): target under 1/5;
#   3. if Chromium is installed (or can be installed with apt-get), times
#      `chromium --headless --print-to-pdf` on the 1-page HTML: wall clock including
#      start-up, median of BENCH_PDF_CHROMIUM_RUNS (5) runs; prints the ratio.
#
# Without Chromium only the comparison is skipped. Tunables (environment):
# BENCH_PDF_RUNS (500 renders of the 1-page invoice; a fifth of that of the 10-page one),
# BENCH_PDF_CHROMIUM_RUNS (5).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

RUNS=${BENCH_PDF_RUNS:-500}
CHROMIUM_RUNS=${BENCH_PDF_CHROMIUM_RUNS:-5}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "== built-in renderer (krilla), release build"
cargo run --release --quiet -p renderer --example render_bench -- --runs "$RUNS" --html "$WORK" | tee "$WORK/builtin.txt"
builtin_ms=$(sed -n 's/^render 1-page: median \([0-9.]*\) ms.*/\1/p' "$WORK/builtin.txt")
if [[ -z "$builtin_ms" ]]; then
    echo "could not read the 1-page median from render_bench's output" >&2
    exit 1
fi

echo
echo "== the client's page beside the PDF of the same invoice (target: under a fifth)"
cargo run --release --quiet -p app --example page_bench -- --runs "$RUNS"

find_chromium() {
    local name
    for name in chromium chromium-browser google-chrome; do
        if command -v "$name" >/dev/null 2>&1; then
            command -v "$name"
            return 0
        fi
    done
    return 1
}

echo
echo "== headless Chromium, HTML to PDF"
if ! CHROMIUM=$(find_chromium); then
    if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) -eq 0 ]]; then
        echo "chromium is not installed: installing it with apt-get"
        if ! { apt-get update -qq && apt-get install -y -qq chromium; } >"$WORK/apt.log" 2>&1; then
            tail -n 5 "$WORK/apt.log" >&2
        fi
    fi
    if ! CHROMIUM=$(find_chromium); then
        echo "chromium is not installed and could not be installed: skipping the comparison"
        exit 0
    fi
fi
"$CHROMIUM" --version 2>/dev/null || true

times=()
for ((run = 1; run <= CHROMIUM_RUNS; run++)); do
    rm -f "$WORK/chromium.pdf"
    start=$(date +%s%N)
    "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-pdf-header-footer \
        --print-to-pdf="$WORK/chromium.pdf" "file://$WORK/invoice-1-page.html" >"$WORK/chromium.log" 2>&1
    end=$(date +%s%N)
    if [[ ! -s "$WORK/chromium.pdf" ]]; then
        echo "chromium wrote no PDF:" >&2
        tail -n 20 "$WORK/chromium.log" >&2
        exit 1
    fi
    times+=("$(( (end - start) / 1000000 ))")
done
chromium_ms=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "chromium 1-page: median ${chromium_ms} ms wall clock, start-up included (runs: ${times[*]} ms)"
awk -v c="$chromium_ms" -v b="$builtin_ms" 'BEGIN { printf "ratio chromium/builtin (1-page median): %.0fx\n", c / b }'
