#!/usr/bin/env bash
# Accumulates fuzzing hours across sessions.
#
# Usage: bench/fuzz_hours.sh [SECONDS_PER_TARGET]   (default 600)
#
# Runs every fuzz target (`cargo +nightly fuzz list` in fuzz/) for that many
# seconds each, under nice, from the corpus folders CI uses (fuzz/corpus/T,
# then fuzz/seeds/T; new inputs go to the first) with CI's -max_len. Appends
# one line per target to fuzz/hours.log (tab-separated: date, commit, target,
# seconds, executions, corpus size after, inputs added, findings) and prints
# the running totals per target from the whole log. Commit the log lines: they
# are the record of how long each target has been fuzzed.
#
# Findings are the crash/timeout/leak/oom artifacts libFuzzer wrote under
# fuzz/artifacts/T during this run; they are listed, and the script exits 1
# once every target has had its turn. Needs the nightly toolchain and
# cargo-fuzz (CI installs it with `cargo install cargo-fuzz --locked`).
set -euo pipefail

SECONDS_PER_TARGET="${1:-600}"
case "$SECONDS_PER_TARGET" in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS_PER_TARGET]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/../fuzz"
LOG=hours.log
commit="$(git rev-parse --short=12 HEAD)"
git diff --quiet HEAD -- .. 2>/dev/null || commit="$commit-dirty"

nice cargo +nightly fuzz build -O
if [ ! -s "$LOG" ]; then
  printf '# date\tcommit\ttarget\tseconds\texecutions\tcorpus\tadded\tfindings\n' >"$LOG"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
count() { find "$1" -maxdepth 1 -type f 2>/dev/null | wc -l; }

failed=()
for target in $(cargo +nightly fuzz list); do
  mkdir -p "corpus/$target" "seeds/$target" "artifacts/$target"
  ls "artifacts/$target" | sort >"$work/before"
  corpus_before="$(count "corpus/$target")"
  echo "== $target: ${SECONDS_PER_TARGET}s"
  start="$(date +%s)"
  # libFuzzer exits non-zero on a finding; the artifacts tell, below.
  nice cargo +nightly fuzz run -O "$target" "corpus/$target" "seeds/$target" -- \
    -max_total_time="$SECONDS_PER_TARGET" -max_len=4096 -print_final_stats=1 \
    >"$work/out" 2>&1 || true
  took=$(($(date +%s) - start))
  grep -E '^(Done|==[0-9]+==|SUMMARY)|panicked' "$work/out" | head -20 || true
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/out" | tail -1)"
  corpus_after="$(count "corpus/$target")"
  ls "artifacts/$target" | sort >"$work/after"
  found="$(comm -13 "$work/before" "$work/after" | paste -sd, -)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$commit" \
    "$target" "$took" "${execs:-?}" "$corpus_after" "$((corpus_after - corpus_before))" \
    "${found:--}" >>"$LOG"
  if [ -n "$found" ]; then
    echo "fuzz target $target found: $found (in fuzz/artifacts/$target)"
    failed+=("$target")
  fi
done

echo
echo "fuzzing recorded in fuzz/$LOG (all sessions):"
printf '%-20s %8s %6s %16s %9s\n' target hours runs executions findings
awk -F'\t' '!/^#/ {
    s[$3] += $4; e[$3] += ($5 == "?" ? 0 : $5); n[$3]++
    if ($8 != "-") f[$3] += split($8, _, ",")
  }
  END {
    for (t in s) printf "%-20s %8.2f %6d %16.0f %9d\n", t, s[t] / 3600, n[t], e[t], f[t]
  }' "$LOG" | sort

if [ ${#failed[@]} -gt 0 ]; then
  echo "findings in: ${failed[*]}" >&2
  exit 1
fi
