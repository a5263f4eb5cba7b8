"""What every attack shares: its context and the rows it reports."""
import json
import os


class Ctx:
    """An attack's run: the node binary, a temp dir, options, a seeded RNG."""

    def __init__(self, node, args, rng):
        self.node = node
        self.args = args
        self.quick = args.quick
        self.rng = rng

    def path(self, name):
        return self.node.path(name)


def row(attack, measured, threshold, ok):
    """One line of the table. `ok` None: not applicable (no verdict)."""
    return {"attack": attack, "measured": measured, "threshold": threshold, "ok": ok}


def mb(kib):
    return f"{kib / 1024:.1f} MB" if kib is not None else "?"


def stats(path):
    """The `--stats-json` a get wrote at exit, or {}."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def size_of(path):
    return os.path.getsize(path) if os.path.exists(path) else None
