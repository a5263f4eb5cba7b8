#!/usr/bin/env bash
# The trace hashes issue 22 pins, in a release build: the three of
# crates/ppspp-lab/tests/trace_pins.rs plus the 1,000-peer scale run's first
# 60 virtual seconds (about a minute), each printed beside the hash recorded
# before the protocol core was reshaped. Exit 1 if any differs.
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
check flash-crowd e84c8c9a364e73b5594f3ede04d12237f54ceb91c5f719a2a31b50dc95ec4449 flash-crowd.toml
for a in linear:322610670606137f0887c1f81616063dd5f29e526f7515ae8b9718c424155f46 \
         std-vod:660414dc778c9b35ed8a93e61c6680c6a82bb1fb0ac6f001f8b80f62576c91be \
         swift-vod:da497b971129295ecbab329e15b6858ba3ee8ffbc42f66b96fc73222a1517735; do
  check "e1-32-${a%%:*}" "${a#*:}" e1-vod.toml --set peers.leechers.count=32 --set "peers.leechers.algorithm=${a%%:*}"
done
check scale-1000-60s b6aca01822251e9242540eeacdfb0221935aafb418abc0376e44a5d42d300473 scale-1000.toml --set duration=60s
exit $fail
