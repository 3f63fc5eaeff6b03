#!/usr/bin/env bash
# Runs each cargo-fuzz target for FUZZ_SECONDS (default 60) on the nightly toolchain, from
# a corpus seeded by fuzz/seeds and the tests' fixtures (the GitHub examples). A crash
# stops the run and leaves its input in fuzz/artifacts/<target>/: copy it into
# fuzz/regressions/<target>/, where `make test` replays it, and fix the cause.
# Usage: scripts/fuzz.sh [target...]   (default: every target)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(github rest money pdf)

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz
fi

# The corpus: the committed seeds, and every GitHub example payload as each typed event.
for target in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$target"
  cp -n fuzz/seeds/"$target"/* "fuzz/corpus/$target/" 2>/dev/null || true
done
if [[ " ${targets[*]} " == *" github "* ]]; then
  for example in tests/fixtures/github/octokit/*/*.json; do
    name="$(basename "$(dirname "$example")")-$(basename "$example" .json)"
    for event in 0 3 5 7; do
      { printf "\\x0$event"; cat "$example"; } > "fuzz/corpus/github/$name-$event"
    done
  done
fi

for target in "${targets[@]}"; do
  echo "fuzzing $target for ${seconds}s"
  # -rss_limit_mb and -malloc_limit_mb: an input that makes billable allocate past 2 GiB,
  # or 512 MiB at once, is a finding too. Leaks are not: actix-router leaks the names of
  # its path segments on purpose, and the rest target keeps its app for the whole run.
  ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" cargo +nightly fuzz run --fuzz-dir fuzz "$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -detect_leaks=0 -max_len=65536 -print_final_stats=1
done
