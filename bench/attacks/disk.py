"""Attacks through the disk and the process: a checkpoint that cannot be
written (issue 21 item 6) and a downloader killed over and over (item 7)."""
import os
import signal
import time

from . import procs
from .common import row, size_of

PAGE = 4096


def checkpoint_unwritable(ctx):
    """Item 6: a tmpfs (in a private mount namespace) that holds the content
    but not its final checkpoint. `get` must fail naming the checkpoint and
    leave no PATH.ppspp.tmp (see ppspp-store's file.rs for the names)."""
    node, name = ctx.node, "6 checkpoint unwritable"
    size = 2_500_000
    src = ctx.path("ckpt-src")
    procs.make_file(src, size, ctx.args.seed)
    seeder, url, _, _ = node.seed(src, "ckpt-seed")
    # The final checkpoint's size, from a download to a roomy disk.
    calib = ctx.path("ckpt-calib")
    rc, _ = node.timed_get(url, calib, ctx.args.get_timeout, "ckpt-calib",
                           ["--listen", "127.0.0.1:0"])
    ckpt = size_of(calib + ".ppspp")
    if rc != 0 or not ckpt:
        return [row(name, f"calibration download failed (exit {rc})", "-", False)]
    # Room for the data and for a checkpoint of up to 3/4 of the final one
    # (an early one may be on disk while the data is written), not the last.
    spare = max(PAGE, int(0.75 * ckpt) // PAGE * PAGE)
    room = -(-size // PAGE) * PAGE + spare
    mnt = ctx.path("ckpt-mnt")
    os.mkdir(mnt)
    listing = ctx.path("ckpt-listing")
    script = ('mount -t tmpfs -o size="$1" tmpfs "$2" || exit 99\n'
              '"$3" get "$4" -o "$2/out" --listen 127.0.0.1:0\n'
              'rc=$?\nls -A "$2" > "$5"\nexit $rc\n')
    p = procs.start(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                     str(room), mnt, node.ppspp, url, listing], ctx.path("ckpt-get.log"))
    rc = procs.wait(p, ctx.args.get_timeout)
    if rc is None:
        procs.stop(p)
    procs.stop(seeder, signal.SIGTERM)
    if rc == 99:
        return [row(name, "cannot mount a tmpfs (needs root)", "-", None)]
    left = open(listing).read().split() if os.path.exists(listing) else []
    message = procs.text(ctx.path("ckpt-get.log.err"), 160)
    tmp_left = [f for f in left if f.endswith(".ppspp.tmp")]
    names = "checkpoint" in message or ".ppspp" in message
    ok = rc not in (0, None) and names and not tmp_left
    return [row(name, f"tmpfs of {room} B ({size} B of content, final checkpoint {ckpt} B): "
                f"exit {rc}; said: {message or '(nothing)'}; left: {', '.join(left) or '-'}",
                "exit ≠ 0 naming the checkpoint, no *.ppspp.tmp left", ok)]


def kill_loop(ctx):
    """Item 7, run in its own network namespace so that the bytes on its
    loopback are exactly this download's: an upload-limited seeder, `get`
    SIGKILLed after a random 0.2–4 s, 30 times or until it completes, then
    one run to the end, each run the same command. Bytes moved / file size must stay below 2."""
    node, name = ctx.node, "7 kill loop"
    size = (20 if ctx.quick else 100) * 1_000_000
    limit = size // 4  # about four seconds per whole download
    src = ctx.path("kill-src")
    procs.make_file(src, size, ctx.args.seed)
    seeder, url, _, _ = node.seed(src, "kill-seed", ["--upload-limit", str(limit)])
    out = ctx.path("kill-out")
    # The same command every time, as a user would rerun it: a get killed
    # before its first progress checkpoint must not leave a file the rerun
    # refuses as someone else's (builds before the checkpoint at open did).
    flags = ["--listen", "127.0.0.1:0"]
    start = procs.lo_bytes()
    kills, complete = 0, False
    for i in range(30):
        get = node.get(url, out, f"kill-get{i}", flags)
        rc = procs.wait(get, ctx.rng.uniform(0.2, 4.0))
        if rc is not None:
            complete = rc == 0
            break
        procs.stop(get)
        kills += 1
    finished = complete
    if not complete:
        rc, _ = node.timed_get(url, out, ctx.args.get_timeout, "kill-final", flags)
        finished = rc == 0
    time.sleep(0.5)  # DATA still in flight to a killed get
    moved = procs.lo_bytes() - start
    procs.stop(seeder, signal.SIGTERM)
    same = procs.sha1_file(out) == procs.sha1_file(src)
    ratio = moved / size
    return [row(name, f"{size / 1e6:.0f} MB at {limit / 1e6:.0f} MB/s: {kills} kills, "
                f"{'completed within them' if complete else 'then one run to the end'}"
                f"{'' if finished and same else ' (FAILED to complete)'}; {moved / 1e6:.0f} MB "
                f"on lo (both ways, with headers) = {ratio:.2f}× the file",
                "< 2×", finished and same and ratio < 2)]
