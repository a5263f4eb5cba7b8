"""What the lab benchmark scripts share: one `ppspp lab run` that is not
repeated once its folder holds a result, and reading a CSV it wrote."""
import csv
import os
import subprocess
import sys


def lab_run(binary, scenario_path, seed, out, sets=(), verb="run"):
    """Runs `scenario_path` with `seed` into `out` on one thread (so that
    runs side by side do not share cores), unless `out` already holds a
    finished run; exits with the run's output when it fails. With
    `verb="emulate"`, in real time (`ppspp lab emulate`, on every core)."""
    if os.path.exists(os.path.join(out, "summary.json")):
        return
    cmd = [binary, "lab", verb, scenario_path, "--seed", str(seed), "--out", out, "--force"]
    if verb == "run":
        cmd += ["--threads", "1"]
    for s in sets:
        cmd += ["--set", s]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        sys.exit(f"{scenario_path} seed {seed}: lab {verb} failed ({done.returncode})")


def rows(path):
    """A CSV file's rows as dictionaries."""
    with open(path) as f:
        return list(csv.DictReader(f))
