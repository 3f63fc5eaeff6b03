#!/usr/bin/env bash
# Whether two builds answer alike: each serves a fresh database (mailing a local SMTP
# server), runs the examples of docs/api.md (tests/examples/answers.py), and the records,
# ids and instants stood in for, must be the same line for line. What a refactor promises
# ("answers, PDFs, mails and e-invoices unchanged") is checked by running it against the
# binary of the commit before.
#
#   scripts/compare-answers.sh BEFORE_BIN [AFTER_BIN]
#
# AFTER_BIN defaults to this tree's debug build. Needs pdftotext (poppler-utils) and the
# SMTP server's Python packages (tests/mail/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: scripts/compare-answers.sh BEFORE_BIN [AFTER_BIN]}
after=${2:-}
if [[ -z $after ]]; then
    cargo build --quiet --locked -p app --bin billable
    after="${CARGO_TARGET_DIR:-target}/debug/billable"
fi
records=$(mktemp -d "${TMPDIR:-/tmp}/billable-answers.XXXXXX")
trap 'rm -rf "$records"' EXIT

for side in before after; do
    BILLABLE_BIN=${!side} bash -c '
        set -euo pipefail
        source scripts/test-server.sh
        start_smtp_server
        start_test_server BILLABLE_SMTP_URL="smtp://127.0.0.1:$SMTP_PORT" \
            BILLABLE_MAIL_FROM=billing@billable.localhost BILLABLE_PUBLIC_URL=https://billing.example.com
        python3 tests/examples/answers.py
    ' >"$records/$side.jsonl"
done

if diff -u "$records/before.jsonl" "$records/after.jsonl"; then
    echo "compare-answers: $(wc -l <"$records/after.jsonl") records, the same from both builds"
else
    echo "compare-answers: the builds answer differently (above)" >&2
    exit 1
fi
