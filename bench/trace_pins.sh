#!/usr/bin/env bash
# The trace hashes issue 22 pins, in a release build: the three of
# crates/ppspp-lab/tests/trace_pins.rs plus the 1,000-peer scale run's first
# 60 virtual seconds (about a minute), each printed beside the hash recorded
# (last when PEX answers began to name a random sample of the peers, not
# the first 32 in address order, issue 26). Exit 1 if any differs.
# Usage: bench/trace_pins.sh [PPSPP_BIN]   (build first: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-target/release/ppspp}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
fail=0
check() { # name expected scenario [--set ...]
  local name="$1" want="$2" scen="$3"; shift 3
  # A cut-short run (the scale run's 60 s) ends with "none completed" and
  # a non-zero exit after writing its results: the hash is still there.
  "$BIN" lab run "scenarios/$scen" --seed 1 --out "$OUT/$name" --force "$@" >/dev/null 2>&1 || true
  local got
  got="$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['trace_hash'])" "$OUT/$name/summary.json")"
  if [ "$got" = "$want" ]; then r=same; else r=DIFFERENT; fail=1; fi
  printf '%-22s %s %s\n' "$name" "$got" "$r"
}
check flash-crowd 176fcb6d776d4b49343b5c4e13866a5cb7115b30bd4f0e620c7c1ff29c123633 flash-crowd.toml
for a in linear:69c198762d01a2eb882447b45b1835f5f319fbf527b87433e063d7aa55465c56 \
         std-vod:44beb64ceac6afd05a31056449828e1f426f426dc0c0556d3a63caf60f12335f \
         swift-vod:02b2e762250e30d3263626946a30ca9b8cc07752ff41ddc98205d71aeba84883; do
  check "e1-32-${a%%:*}" "${a#*:}" e1-vod.toml --set peers.leechers.count=32 --set "peers.leechers.algorithm=${a%%:*}"
done
check scale-1000-60s 74e7a0eb5b0f97513b32bc8523349e8afb8fd9e6763d2a762fdf355cdc021245 scale-1000.toml --set duration=60s
exit $fail
