#!/usr/bin/env bash
# The trace hashes issue 22 pins, in a release build: the three of
# crates/ppspp-lab/tests/trace_pins.rs plus the 1,000-peer scale run's first
# 60 virtual seconds (about a minute), each printed beside the hash recorded
# (last when DATA in flight began to count as held in choosing hashes,
# issue 24). Exit 1 if any differs.
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
check flash-crowd 9f354f05b34f1f1b50e8809c556c2186ab5a617c52763a7a3c481c785da3e17f flash-crowd.toml
for a in linear:5c6d6724f4d8af8cf396b0368fd805c809047361f94cdc654757a53c3d346439 \
         std-vod:c25c8e2ebfe171f0f59c2971ba1eadd04aa7ccd45b4be72390846e4b8f178690 \
         swift-vod:cd8b56aa873030e8f6b396f7afdb896d8be0c9858ba787179fb4ba6bc448dfc4; do
  check "e1-32-${a%%:*}" "${a#*:}" e1-vod.toml --set peers.leechers.count=32 --set "peers.leechers.algorithm=${a%%:*}"
done
check scale-1000-60s 39ac87ddc4e0e1ac398f34d0169ba574ff96f85c966a4ae3d79e4c1d343b5762 scale-1000.toml --set duration=60s
exit $fail
