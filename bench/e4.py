#!/usr/bin/env python3
"""E4 (seed paper 003): BitTorrent clients and a real-time video call behind
one access router, one command per figure of the paper, and our addition.

Usage: bench/e4.py FIGURE [--seeds 1,...,10] [--jobs 2] [--x LIST]
                   [--tcp-window 20000B|none] [--path-delay 25ms]
                   [--remote-rate RATE] [--set KEY=VALUE ...]
                   [--binary target/release/ppspp] [--out lab-results/e4]

FIGURE is one of
  fig2   0-5 local BitTorrent clients (4 unchoke slots, 300-packet router
         queue), with and without the video: (a) aggregate upload, (b)
         queueing delay of BitTorrent's and the video's packets at the
         router, (c) their drops, (d) aggregate download, (e) the video's
         inter-arrival time at the receiver
  fig3   1 client with 4-20 unchoke slots (the remote peers keep 4;
         with --slots-everywhere they get the same): (a)-(d) as fig2
  fig4   1 client, router queue 25-200 packets: (a) upload, (b) drops
  p2p    our addition (issue 26): the video next to 1, 3 and 5 local P2P
         clients of four kinds, BitTorrent over TCP (the paper's), over
         uTP (BEP 29, 100 ms target), ppspp over LEDBAT with the core's
         defaults (every requester unchoked), and ppspp with delay-steered
         slots (as many as BitTorrent's 4): the video's queueing delay,
         jitter, drops and inter-arrival time, and what the P2P clients
         moved, side by side
  all    the four

`--x` replaces the figure's swept values (clients, slots or packets);
`--remote-rate` puts the remote leechers (not the seeds) on slower links;
`--set KEY=VALUE` goes to every run (bench/smoke.sh runs each figure on
1 MB of content this way).
Every case is a scenario written to OUT/scenarios/ and run once per seed
into OUT/<case>-s<seed> with the release binary (`cargo build --release -p
ppspp` first), `--jobs` at a time; a run already there is not run again.
Each figure writes OUT/<figure>.csv (mean and standard deviation over the
seeds of every metric, per case), OUT/<figure>-<panel>.svg and
OUT/<figure>.html (the table and plots on one page), and prints the table;
a figure run with other options than the defaults (--slots-everywhere,
--tcp-window, --path-delay) says so in its stem, e.g. p2p-window-none.

The model (the paper's Table 1 and Fig. 1b):
- the ISP: local hosts on 100 Mbit/s links behind an access router
  (`[sites.isp]`) whose uplink is 1.5 Mbit/s and downlink 100 Mbit/s, its
  queue in packets (300; fig4 sweeps it); every other link 100 Mbit/s
  with a 300-packet queue; drop-tail everywhere; every host's access
  delay drawn once in 1-50 ms (`delay_max`); the router's uplink and the
  core beyond it at `--path-delay`;
- each local client in a swarm of its own (`swarm = "sN"`) with 30
  remote peers, one of them the initial seed; 100 MB, 256 KB pieces,
  16 KB blocks, 4 unchoke slots (fig3 sweeps the local client's), TCP NewReno with
  delayed ACKs and a `--tcp-window` receive window; everyone stays until
  all have finished (the run ends then);
- the video: one more local host sends CBR UDP to a remote host, 750 kb/s
  in 500-byte packets (one every 5.33 ms), from the start to the end.
With 0 clients there is only the video, run for 300 s.

Metrics, per run: the local clients' aggregate upload rate (bytes over the
run), their aggregate download rate (the sum of each client's bytes over
its own download time), the mean queueing delay at the router's uplink of
the clients' packets (data and ACKs) and of the video's, the share of
each dropped there (`traced_flows.csv`), and the video's inter-arrival
time (mean and p95) and RFC 3550 jitter at the receiver (`flows.csv`; the
mean of the running estimate over the flow, since its last value tells
only how the run ended).

The two defaults that bring the paper's regime, scanned (seed 1, 4 slots,
300 packets; 1/3/5 clients without video, local upload and download in
kb/s; the paper: ~900 up and ~2000 down for 1 client, a 1200 up plateau):
- unbounded window, no path delay: 840/22153, 583/44551, 400/60127 (the
  remote peers finish in about a minute);
- unbounded window, 25 ms path: 776/16720, 561/40396, 451/51245;
- 29200 B (20 segments of 1460 B), 25 ms: 864/3634, 1185/9474, 1104/15228;
- 20000 B (ns-2's 20 packets of 1000 B), 25 ms: 867/2557, 1164/6603,
  1122/10330. Chosen: ns-2's TCP keeps at most 20 packets in flight, and
  the paper's path from a local host to a remote one crosses four links
  of 1-50 ms (two drawn per host, two at the mean).
"""
import argparse
import csv
import json
import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figreport  # noqa: E402
from labrun import lab_run, rows  # noqa: E402
from svgplot import Plot  # noqa: E402

# The P2P applications of the `p2p` figure, by their labels.
APPS = {
    "bt-tcp": "BitTorrent/TCP",
    "bt-utp": "BitTorrent/uTP",
    "ppspp": "ppspp/LEDBAT",
    "ppspp-slots": "ppspp/LEDBAT, delay-slots",
}


# The remote peers' unchoke slots (the paper's default, Table 1).
REMOTE_SLOTS = 4
# The remote peers' links: the paper's "other links" of 100 Mbit/s.
REMOTE_RATE = "100Mbit/s"


def group_keys(app, slots, tcp_window):
    """The TOML keys of one P2P group of `app`."""
    if app in ("bt-tcp", "bt-utp"):
        window = f', tcp_window = "{tcp_window}"' if tcp_window else ""
        # BEP 29 dispositions as e3 uses them: 5 speaks only TCP, 10 only uTP.
        disposition = 5 if app == "bt-tcp" else 10
        return f'bittorrent = {{ disposition = {disposition}, tcp_cc = "newreno", slots = {slots}{window} }}'
    if app == "ppspp":
        return "# ppspp with the core's defaults: every requester unchoked"
    return f'choking = "delay-slots"\nupload_slots = {slots}'


def scenario(c):
    """The scenario text of case `c` (a dict: app, clients, video, slots,
    queue, window, delay, name)."""
    n, video = c["clients"], c["video"]
    # The local client has `slots` upload slots (fig3 sweeps its "upload
    # connections"); the remote peers keep the paper's default of 4.
    local_keys = group_keys(c["app"], c["slots"], c["window"])
    remote_keys = group_keys(c["app"], c["remote_slots"], c["window"])
    # With no client the run is the video alone, for a fixed time.
    stop = "true" if n else "false"
    duration = "4000s" if n else "300s"
    out = [f'''# Generated by bench/e4.py: seed paper 003's ISP with {n} local
# {APPS[c["app"]]} client(s){" and a video call" if video else ""}.
name = "{c["name"]}"
seed = 1
duration = "{duration}"
stop_when_done = {stop}

[content]
size = "100MB"

# The paper's path from a local host to a remote one crosses four links
# of 1-50 ms each: the two access links are drawn per host (delay_max),
# the access router's uplink and the link beyond it are at the mean.
[network]
groups = ["all"]
delay = [["{c["delay"]}"]]

[sites.isp]
up = "1.5Mbit/s"
down = "100Mbit/s"
queue = "{c["queue"]} packets"
delay = "{c["delay"]}"

[classes.local]
up = "100Mbit/s"
down = "100Mbit/s"
queue = "300 packets"
delay = "1ms"
delay_max = "50ms"
site = "isp"

[classes.remote]
up = "100Mbit/s"
down = "100Mbit/s"
queue = "300 packets"
delay = "1ms"
delay_max = "50ms"
''']
    leecher_class = "remote"
    if c["remote_rate"] != REMOTE_RATE:
        # --remote-rate: the remote leechers on slower links (the seed
        # keeps the paper's), so that they need the local client more.
        leecher_class = "remote_leecher"
        out.append(f'''
[classes.remote_leecher]
up = "{c["remote_rate"]}"
down = "{c["remote_rate"]}"
queue = "300 packets"
delay = "1ms"
delay_max = "50ms"
''')
    for i in range(n):
        for name, count, cls, role, keys in [(f"seed{i}", 1, "remote", "seeder", remote_keys),
                                             (f"remote{i}", 29, leecher_class, "leecher", remote_keys),
                                             (f"local{i}", 1, "local", "leecher", local_keys)]:
            out.append(f'''
[[peers]]
name = "{name}"
{"count = " + str(count) + chr(10) if count > 1 else ""}class = "{cls}"
role = "{role}"
swarm = "s{i}"
{keys}
''')
    if video:
        out.append('''
[[peers]]
name = "video"
class = "local"
role = "host"

[[peers]]
name = "receiver"
class = "remote"
role = "host"

[[flows]]
kind = "cbr"
from = "video"
to = "receiver"
rate = "750kbit/s"
packet_size = "500B"
''')
    out.append('\n[record]\nqueues = ["site:isp.up"]\n')
    if video:
        out.append('\n[[record.waits]]\nlink = "site:isp.up"\nflow = "flow0"\n')
    for i in range(n):
        out.append(f'\n[[record.waits]]\nlink = "site:isp.up"\nflow = "peer:local{i}"\n')
    return "".join(out)


def load(folder):
    """One run's metrics (None where the run has no such traffic)."""
    local = [p for p in rows(os.path.join(folder, "peers.csv")) if p["group"].startswith("local")]
    traced = rows(os.path.join(folder, "traced_flows.csv"))
    p2p = [t for t in traced if t["flow"].startswith("peer:")]
    video = [t for t in traced if t["flow"] == "flow0"]
    flows = rows(os.path.join(folder, "flows.csv"))
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    virtual = summary["virtual_s"]

    def forwarded(t):
        return int(t["packets_in"]) - int(t["drops_queue"]) - int(t["drops_loss"])

    def wait(ts):
        """The mean wait over the flows' forwarded packets."""
        fwd = sum(forwarded(t) for t in ts)
        return sum(float(t["mean_wait_ms"]) * forwarded(t) for t in ts) / fwd if fwd else None

    def drops(ts):
        n = sum(int(t["packets_in"]) for t in ts)
        return 100 * sum(int(t["drops_queue"]) + int(t["drops_loss"]) for t in ts) / n if n else None

    done = [p for p in local if p["download_s"]]
    v = flows[0] if flows else None
    return {
        "up_kbps": sum(int(p["bytes_up"]) for p in local) * 8 / virtual / 1000 if local else None,
        "down_kbps": sum(int(p["bytes_down"]) / float(p["download_s"]) for p in done) * 8 / 1000 if done else None,
        "p2p_wait_ms": wait(p2p),
        "video_wait_ms": wait(video),
        "p2p_drops_pct": drops(p2p),
        "video_drops_pct": drops(video),
        "gap_mean_ms": float(v["inter_arrival_mean_ms"]) if v else None,
        "gap_p95_ms": float(v["inter_arrival_p95_ms"]) if v else None,
        "jitter_ms": float(v["jitter_mean_ms"]) if v and v["jitter_mean_ms"] else None,
        "virtual_s": virtual,
        "wall_s": summary["wall_s"],
    }


METRICS = [
    ("up_kbps", "P2P up kb/s", ".0f"),
    ("down_kbps", "P2P down kb/s", ".0f"),
    ("p2p_wait_ms", "P2P wait ms", ".0f"),
    ("video_wait_ms", "video wait ms", ".0f"),
    ("p2p_drops_pct", "P2P drops %", ".2f"),
    ("video_drops_pct", "video drops %", ".2f"),
    ("gap_mean_ms", "video gap mean ms", ".2f"),
    ("gap_p95_ms", "video gap p95 ms", ".2f"),
    ("jitter_ms", "jitter ms", ".2f"),
    ("virtual_s", "virtual s", ".0f"),
    ("wall_s", "wall s", ".0f"),
]


def stats(runs, key):
    xs = [r[key] for r in runs if r[key] is not None]
    if not xs:
        return None, None
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def cases_of(figure, args):
    """The cases (dicts) a figure runs, in table order."""
    base = {"app": "bt-tcp", "clients": 1, "slots": 4, "remote_slots": REMOTE_SLOTS, "queue": 300,
            "window": args.tcp_window, "delay": args.path_delay, "remote_rate": args.remote_rate}
    out = []
    if figure == "fig2":
        for n in args.x or [0, 1, 2, 3, 4, 5]:
            for video in (True, False):
                if n or video:
                    out.append(dict(base, clients=n, video=video, x=n))
    elif figure == "fig3":
        for s in args.x or [4, 8, 12, 16, 20]:
            for video in (True, False):
                remote = s if args.slots_everywhere else REMOTE_SLOTS
                out.append(dict(base, slots=s, remote_slots=remote, video=video, x=s))
    elif figure == "fig4":
        for q in args.x or [25, 50, 75, 100, 125, 150, 175, 200]:
            for video in (True, False):
                out.append(dict(base, queue=q, video=video, x=q))
    elif figure == "p2p":
        for app in APPS:
            for n in args.x or [1, 3, 5]:
                out.append(dict(base, app=app, clients=n, video=True, x=n))
    for c in out:
        window = f"-w{c['window']}" if c["window"] and c["app"].startswith("bt") else ""
        remote = f"-rs{c['remote_slots']}" if c["remote_slots"] != REMOTE_SLOTS else ""
        if c["remote_rate"] != REMOTE_RATE:
            remote += f"-rr{c['remote_rate'].replace('/', '')}"
        c["name"] = (f"e4-{c['app']}-c{c['clients']}-video-{'on' if c['video'] else 'off'}-slots{c['slots']}"
                     f"{remote}-q{c['queue']}{window}-d{c['delay']}")
    return out


PANELS = {
    "fig2": ("local BitTorrent clients", [
        ("a-upload", "aggregate upload (kb/s)", ["up_kbps"]),
        ("b-queue-delay", "queueing delay at the router (ms)", ["p2p_wait_ms", "video_wait_ms"]),
        ("c-drops", "packets dropped at the router (%)", ["p2p_drops_pct", "video_drops_pct"]),
        ("d-download", "aggregate download (kb/s)", ["down_kbps"]),
        ("e-inter-arrival", "video inter-arrival at the receiver (ms)", ["gap_mean_ms", "gap_p95_ms"]),
    ]),
    "fig3": ("unchoke slots (1 client)", [
        ("a-upload", "upload (kb/s)", ["up_kbps"]),
        ("b-queue-delay", "queueing delay at the router (ms)", ["p2p_wait_ms", "video_wait_ms"]),
        ("c-drops", "packets dropped at the router (%)", ["p2p_drops_pct", "video_drops_pct"]),
        ("d-download", "download (kb/s)", ["down_kbps"]),
    ]),
    "fig4": ("router queue (packets, 1 client)", [
        ("a-upload", "upload (kb/s)", ["up_kbps"]),
        ("b-drops", "packets dropped at the router (%)", ["p2p_drops_pct", "video_drops_pct"]),
    ]),
    "p2p": ("local P2P clients (with the video)", [
        ("video-wait", "video queueing delay at the router (ms)", ["video_wait_ms"]),
        ("jitter", "video jitter, RFC 3550 (ms)", ["jitter_ms"]),
        ("video-gap-p95", "video inter-arrival p95 (ms)", ["gap_p95_ms"]),
        ("video-drops", "video packets dropped (%)", ["video_drops_pct"]),
        ("upload", "P2P aggregate upload (kb/s)", ["up_kbps"]),
        ("download", "P2P aggregate download (kb/s)", ["down_kbps"]),
    ]),
}

TITLES = {
    "fig2": "E4 Fig. 2: local BitTorrent clients behind the access router",
    "fig3": "E4 Fig. 3: unchoke slots of one local BitTorrent client",
    "fig4": "E4 Fig. 4: the access router's queue",
    "p2p": "E4, our addition: the video call next to BitTorrent (TCP, uTP) and ppspp (LEDBAT)",
}


def stem(fig, args):
    """The file name stem of a figure's outputs: the figure, and what was
    changed from its defaults (so that variants do not overwrite it)."""
    out = fig
    if fig == "fig3" and args.slots_everywhere:
        out += "-slots-everywhere"
    if args.tcp_window != "20000B":
        out += f"-window-{args.tcp_window or 'none'}"
    if args.path_delay != "25ms":
        out += f"-delay-{args.path_delay}"
    if args.remote_rate != REMOTE_RATE:
        out += f"-remote-{args.remote_rate.replace('/', '')}"
    return out


def figure(fig, args, results):
    """Table, CSV, plots and HTML page of one figure."""
    xlabel, panels = PANELS[fig]
    out_stem = stem(fig, args)
    head = ["case", "x"] + [label for _, label, _ in METRICS]
    table, csv_rows = [], []
    for c in results:
        label = APPS[c["app"]] + (", video" if c["video"] else ", no video")
        cells = [label, c["x"]]
        line = {"scenario": c["name"], "app": c["app"], "x": c["x"], "video": int(c["video"]), "seeds": len(c["runs"])}
        for key, _, spec in METRICS:
            m, sd = stats(c["runs"], key)
            cells.append("—" if m is None else f"{format(m, spec)} ± {format(sd, spec)}")
            line[key] = "" if m is None else f"{m:.4f}"
            line[key + "_sd"] = "" if sd is None else f"{sd:.4f}"
        table.append(cells)
        csv_rows.append(line)
    print(f"### {out_stem}: {TITLES[fig]} (mean ± sd over {len(args.seeds)} seed(s))")
    print("\n".join(figreport.markdown_rows(head, table)))
    with open(os.path.join(args.out, f"{out_stem}.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(csv_rows[0]))
        w.writeheader()
        w.writerows(csv_rows)
    plots = []
    names = dict((k, label) for k, label, _ in METRICS)
    for panel, ylabel, keys in panels:
        p = Plot(xlabel, ylabel, f"{out_stem} ({panel[0]}): {ylabel}")
        series = {}
        for c in results:
            for key in keys:
                m, _ = stats(c["runs"], key)
                if m is None:
                    continue
                who = APPS[c["app"]] if fig == "p2p" else names[key]
                series.setdefault((who, c["video"]), []).append((c["x"], m))
        for (who, video), pts in series.items():
            name = who if fig == "p2p" else f"{who}, {'video' if video else 'no video'}"
            p.line(sorted(pts), name, group=who, dash=not video, marks=True)
        path = os.path.join(args.out, f"{out_stem}-{panel}.svg")
        p.save(path)
        plots.append(path)
    command = "bench/e4.py " + " ".join(sys.argv[1:])
    figreport.write(os.path.join(args.out, f"{out_stem}.html"), TITLES[fig], command,
                    [f"Mean ± standard deviation over seeds {','.join(map(str, args.seeds))}; "
                     "dashed lines are the runs without the video. "
                     "See bench/e4.py's docstring for the model and the metrics."],
                    head, table, plots)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("figure", choices=["fig2", "fig3", "fig4", "p2p", "all"])
    ap.add_argument("--seeds", default="1,2,3,4,5,6,7,8,9,10")
    ap.add_argument("--x", help="the figure's swept values (clients, slots or queue packets), e.g. 1,3,5")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tcp-window", default="20000B",
                    help="TCP receive window of every BitTorrent peer (default 20000B: ns-2's 20 packets of 1000 B; "
                         "'none' for unbounded)")
    ap.add_argument("--path-delay", default="25ms",
                    help="delay of the router's uplink and of the core beyond it (default 25ms, the mean of 1-50 ms)")
    ap.add_argument("--slots-everywhere", action="store_true",
                    help="fig3: every peer of the swarm gets the swept unchoke slots, not only the local "
                         "client (the paper's text allows both readings)")
    ap.add_argument("--remote-rate", default=REMOTE_RATE,
                    help="up and down rate of the remote leechers' links (default 100Mbit/s, the paper's; the "
                         "seeds keep it): slower remote peers need the local client's pieces more")
    ap.add_argument("--set", action="append", default=[], dest="sets", metavar="KEY=VALUE",
                    help="passed to every run's `lab run --set` (e.g. content.size=1MB for a quick look); the "
                         "run folders do not carry it, so use a fresh --out")
    ap.add_argument("--binary", default="target/release/ppspp")
    ap.add_argument("--out", default="lab-results/e4")
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.x = [int(v) for v in args.x.split(",")] if args.x else None
    if args.tcp_window == "none":
        args.tcp_window = None
    figures = ["fig2", "fig3", "fig4", "p2p"] if args.figure == "all" else [args.figure]
    os.makedirs(os.path.join(args.out, "scenarios"), exist_ok=True)
    todo, seen = [], set()
    per_figure = {}
    for fig in figures:
        per_figure[fig] = cases_of(fig, args)
        for c in per_figure[fig]:
            path = os.path.join(args.out, "scenarios", c["name"] + ".toml")
            c["path"] = path
            if c["name"] not in seen:
                seen.add(c["name"])
                with open(path, "w") as f:
                    f.write(scenario(c))
                todo += [(c, s) for s in args.seeds]
    # The longest runs first, so that two jobs end together.
    todo.sort(key=lambda j: -(j[0]["clients"] * (4 if j[0]["app"].startswith("ppspp") else 1)))
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda j: lab_run(args.binary, j[0]["path"], j[1],
                                        os.path.join(args.out, f"{j[0]['name']}-s{j[1]}"), args.sets), todo))
    for fig in figures:
        for c in per_figure[fig]:
            c["runs"] = [load(os.path.join(args.out, f"{c['name']}-s{s}")) for s in args.seeds]
        figure(fig, args, per_figure[fig])


if __name__ == "__main__":
    main()
