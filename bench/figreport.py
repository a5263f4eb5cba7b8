"""One HTML page per figure for the bench scripts: what was run, the
table, and the figure's plots inline, so a figure is one file to open or
send. Plain HTML, no script and no dependency."""
import html
import os


def markdown_rows(head, rows):
    """The table as Markdown lines (what the scripts print)."""
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def write(path, title, command, paragraphs, head, rows, plots):
    """Writes `path`: `title`, the `command` that made it, `paragraphs`
    of text, the table (`head`, `rows`) and each SVG in `plots` (paths)
    embedded as an image beside the page."""
    base = os.path.dirname(os.path.abspath(path))
    parts = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1500px;margin:1em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}"
        "img{margin:4px;border:1px solid #ddd}code{background:#f4f4f4}</style>",
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Made by <code>{html.escape(command)}</code></p>",
    ]
    parts += [f"<p>{html.escape(p)}</p>" for p in paragraphs]
    parts.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>")
    for r in rows:
        parts.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
    parts.append("</table><div>")
    for p in plots:
        rel = os.path.relpath(os.path.abspath(p), base)
        parts.append(f'<img src="{html.escape(rel)}" alt="{html.escape(os.path.basename(p))}">')
    parts.append("</div></body></html>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")
