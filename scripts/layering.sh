#!/usr/bin/env bash
# The architecture's rules, checked by machine (`make layering`, part of `make lint`):
# - every dependency between our crates is one docs/ARCHITECTURE.md draws (below), so
#   dependencies point inward and no adapter depends on another;
# - domain crates reach no framework and no configuration format: no actix-web, diesel,
#   diesel-async or tokio, and no YAML crate, among their normal dependencies;
# - domain crates word no wire: a domain error is a typed value, and only an adapter names a
#   field (`FieldError`, `InvalidValue::at`) or a header, in its own spelling;
# - http-api's rooms import one way: `conventions` is the leaf, `rest` imports it,
#   `tools` imports both, `triggers` imports `conventions` only;
# - no crate's files import each other in a circle (scripts/module_cycles.py);
# - the job runner's wiring (crates/app/src/jobs.rs) reaches no HTTP crate;
# - closed sets of names are spelt once, in their `words!` (scripts/closed_words.py).
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
DOMAIN_CRATES=(kernel locale accounts billing tracking triggers notify recurring)
failed=0
fail() { echo "layering: $*"; failed=1; }

# Each crate's normal dependencies among ours, as docs/ARCHITECTURE.md draws them.
allowed_graph='
app: http-api store-sql store-memory renderer pages einvoice card-stripe agent outbound recurring notify tracking triggers billing accounts kernel
http-api: statements recurring notify billing tracking triggers accounts locale kernel
renderer: billing locale
pages: billing locale
einvoice: billing kernel
statements: billing accounts
card-stripe: billing kernel
agent: triggers accounts kernel
outbound: notify triggers kernel
store-sql: notify recurring billing tracking triggers accounts kernel
store-memory: notify recurring billing tracking triggers accounts kernel
store-contract: notify recurring billing tracking triggers accounts locale kernel
notify: billing tracking accounts locale kernel
recurring: notify billing tracking accounts kernel
tracking: billing accounts kernel
billing: accounts locale kernel
triggers: accounts kernel
accounts: kernel
kernel:
locale:
fuzzing: http-api store-memory renderer pages einvoice notify triggers billing accounts kernel
acceptance: app agent outbound http-api store-sql store-memory store-contract renderer einvoice notify recurring billing tracking triggers accounts locale kernel
'
graph_problems=$($CARGO metadata --locked --no-deps --format-version 1 | ALLOWED="$allowed_graph" python3 -c '
import json, os, sys
allowed = {}
for line in os.environ["ALLOWED"].strip().splitlines():
    name, _, deps = line.partition(":")
    allowed[name.strip()] = set(deps.split())
packages = json.load(sys.stdin)["packages"]
ours = {p["name"] for p in packages}
for package in packages:
    name = package["name"]
    deps = {d["name"] for d in package["dependencies"] if d["name"] in ours and d.get("kind") is None}
    if name not in allowed:
        print(name + " is not in the graph of docs/ARCHITECTURE.md")
        continue
    for dep in sorted(deps - allowed[name]):
        print(name + " depends on " + dep + ", which the graph does not draw")
')
if [ -n "$graph_problems" ]; then
  while IFS= read -r problem; do fail "$problem"; done <<<"$graph_problems"
else
  echo "layering: every dependency between our crates is one the architecture draws"
fi

for crate in "${DOMAIN_CRATES[@]}"; do
  tree=$($CARGO tree --locked -e normal -p "$crate" --prefix none --format '{p}' | awk '{print $1}' | sort -u)
  for framework in actix-web diesel diesel-async tokio; do
    if grep -qx "$framework" <<<"$tree"; then fail "$crate depends on $framework"; fi
  done
  if yaml=$(grep -i yaml <<<"$tree"); then
    fail "$crate depends on a YAML crate ($yaml); configuration is read in app"
  fi
done
[ $failed = 0 ] && echo "layering: domain crates are framework-free and read no configuration format"

wire_words='FieldError|\.at\(|"[Xx]-[A-Za-z-]+"|"(Authorization|Content-Type|Idempotency-Key)"'
domain_sources=()
for crate in "${DOMAIN_CRATES[@]}"; do
  [ "$crate" = kernel ] || domain_sources+=("crates/$crate/src")
done
if grep -rnE "$wire_words" "${domain_sources[@]}"; then
  fail "a domain crate names a wire field or header (above); return a typed error and word it in the adapter"
else
  echo "layering: domain errors are typed, worded by the adapters"
fi

# Each room of http-api, and the rooms it may import (besides itself).
declare -A may_import=(
  [conventions]=""
  [rest]="conventions"
  [tools]="conventions rest"
  [triggers]="conventions"
)
rooms_ok=1
for room in "${!may_import[@]}"; do
  allowed="$room ${may_import[$room]}"
  sources=(crates/http-api/src/$room crates/http-api/src/$room.rs)
  while IFS= read -r hit; do
    target=${hit##*crate::}
    if ! grep -qw "$target" <<<"$allowed"; then
      fail "http-api/$room imports crate::$target (${hit%%:*}); it may import only: $allowed"
      rooms_ok=0
    fi
  done < <(grep -rnoE 'crate::[A-Za-z_]+' "${sources[@]}" 2>/dev/null || true)
  # Grouped imports from the crate root, and `super::` out of a room, would slip past.
  if grep -rnE 'crate::\{|super::super' "${sources[@]}" 2>/dev/null; then
    fail "http-api/$room imports through crate::{…} or super::super (above); name each room"
    rooms_ok=0
  fi
  for top in crates/http-api/src/$room/mod.rs crates/http-api/src/$room.rs; do
    if [ -f "$top" ] && grep -nE '^[^ /].*\bsuper::' "$top"; then
      fail "$top reaches the crate root through super:: (above); name the room"
      rooms_ok=0
    fi
  done
done
[ $rooms_ok = 1 ] && echo "layering: http-api's rooms import one way"

# No circle of imports between a crate's files (billing's invoice and ledger excepted).
if python3 scripts/module_cycles.py crates/*/ tests/; then
  echo "layering: no crate's files import each other in a circle"
else
  fail "files import each other in a circle (above); move what both need into a module of its own"
fi

# The job runner reaches the books through the domain's use cases, never the HTTP adapter:
# not itself (the graph above), and not through the app's wiring of it.
if grep -nE 'http_api|actix' crates/app/src/jobs.rs; then
  fail "crates/app/src/jobs.rs names the HTTP adapter (above); the runner's work goes through the domain"
else
  echo "layering: the job runner reaches no HTTP crate"
fi

# Closed sets of names (e-invoice formats, event families, …) are spelt once.
python3 scripts/closed_words.py || fail "a closed set of names is spelt again (above)"
exit $failed
