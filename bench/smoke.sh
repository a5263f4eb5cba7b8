#!/usr/bin/env bash
# Runs every figure command of the experiment scripts (bench/e2.py, e3.py,
# e4.py) once, on 1/100 or less of the content and the smallest swarm each
# takes, and checks that each wrote its table, plots and HTML page. It
# checks the commands, not the findings: CI runs it with the debug binary.
#
# Usage: bench/smoke.sh [BINARY] [OUT]   (default target/debug/ppspp, a temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-target/debug/ppspp}"
OUT="${2:-$(mktemp -d)}"
[ -x "$BIN" ] || { echo "no ppspp binary at $BIN (cargo build -p ppspp)"; exit 1; }

expect() {  # expect DIR FILE...: each file exists and is not empty
  local dir=$1; shift
  for f in "$@"; do
    [ -s "$dir/$f" ] || { echo "smoke: $dir/$f is missing or empty"; exit 1; }
  done
}

# E4: 1 MB instead of 100 MB; one point of each figure.
E4=(--seeds 1 --jobs 2 --binary "$BIN" --out "$OUT/e4" --set content.size=1MB)
python3 bench/e4.py fig2 --x 1 "${E4[@]}"
python3 bench/e4.py fig3 --x 4 "${E4[@]}"
python3 bench/e4.py fig4 --x 100 "${E4[@]}"
python3 bench/e4.py p2p --x 1 "${E4[@]}"
expect "$OUT/e4" fig2.csv fig2.html fig2-d-download.svg fig3.html fig3-a-upload.svg fig4.html fig4-b-drops.svg \
  p2p.csv p2p.html p2p-video-wait.svg

# E2: 4 leechers (fig11's CDF too) on 200 KB instead of 15.6 MB.
python3 bench/e2.py all --sizes 4 --cdf-leechers 4 --seeds 1 --jobs 2 --binary "$BIN" --out "$OUT/e2" \
  --set content.size=200KB
expect "$OUT/e2" fig7.csv fig7.html fig7.svg fig8.html fig9.html fig10.html fig11.csv fig11.html fig11.svg

# E3: every scenario on 1 MB instead of 32 MB.
python3 bench/e3.py all --seeds 1 --jobs 2 --binary "$BIN" --out "$OUT/e3" --set content.size=1MB
expect "$OUT/e3" fig2.csv fig3.csv fig4.csv

echo "smoke: every figure command wrote its files under $OUT"
