"""A small SVG line and scatter plot for the bench scripts, with no
dependency beyond Python (the machines that run them have no plotting
library): axes with ticks, lines coloured by group, labelled points, a
legend, an optional log y axis."""
import math

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]
W, H = 720, 440
L, R, T, B = 70, 190, 40, 55


def ticks(lo, hi, n=6):
    """About n round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), default=10 * mag)
    start = math.floor(lo / step) * step
    out = []
    x = start
    while x <= hi + step * 1e-9:
        out.append(round(x, 10))
        x += step
    return out


class Plot:
    def __init__(self, xlabel, ylabel, title, logy=False):
        self.xlabel, self.ylabel, self.title, self.logy = xlabel, ylabel, title, logy
        self.lines = []
        self.points = []
        self.groups = []

    def _colour(self, group):
        if group not in self.groups:
            self.groups.append(group)
        return COLOURS[self.groups.index(group) % len(COLOURS)]

    def line(self, pts, name, group=None, dash=False, marks=False):
        """A polyline; lines of one group share a colour, the one with a
        name is in the legend. `dash` draws it dashed, `marks` puts a dot
        on every point (a curve over a few swept values)."""
        group = group if group is not None else name
        self.lines.append((pts, name, self._colour(group), dash, marks))

    def point(self, x, y, name):
        self.points.append((x, y, name, self._colour(name)))

    def save(self, path):
        xs = [p[0] for pts, *_ in self.lines for p in pts] + [p[0] for p in self.points]
        ys = [p[1] for pts, *_ in self.lines for p in pts] + [p[1] for p in self.points]
        if self.logy:
            ys = [y for y in ys if y > 0]
        if not xs or not ys:
            xs, ys = [0, 1], [0, 1]
        x0, x1 = min(xs), max(xs)
        if self.logy:
            y0, y1 = math.floor(math.log10(min(ys))), 0.0
        else:
            # The data's own range: a completion time of 1500-1600 s would
            # be a flat line on an axis from 0.
            y0, y1 = min(ys), max(ys)
        xt = ticks(x0, x1)
        x0, x1 = min(x0, xt[0]), max(x1, xt[-1])
        yt = list(range(int(y0), 1)) if self.logy else ticks(y0, y1)
        if not self.logy:
            y0, y1 = min(y0, yt[0]), max(y1, yt[-1])
        pw, ph = W - L - R, H - T - B

        def sx(x):
            return L + (x - x0) / ((x1 - x0) or 1) * pw

        def sy(y):
            v = math.log10(y) if self.logy else y
            return T + ph - (v - y0) / ((y1 - y0) or 1) * ph

        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
               f'<rect width="{W}" height="{H}" fill="white"/>',
               f'<text x="{L}" y="22" font-size="14">{esc(self.title)}</text>',
               f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="black"/>']
        for t in xt:
            out.append(f'<line x1="{sx(t):.1f}" y1="{T + ph}" x2="{sx(t):.1f}" y2="{T + ph + 5}" stroke="black"/>')
            out.append(f'<text x="{sx(t):.1f}" y="{T + ph + 18}" text-anchor="middle">{fmt(t)}</text>')
        for t in yt:
            y = sy(10 ** t) if self.logy else sy(t)
            label = f"1e{t}" if self.logy else fmt(t)
            out.append(f'<line x1="{L - 5}" y1="{y:.1f}" x2="{L}" y2="{y:.1f}" stroke="black"/>')
            out.append(f'<text x="{L - 8}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
        out.append(f'<text x="{L + pw / 2}" y="{H - 12}" text-anchor="middle">{esc(self.xlabel)}</text>')
        out.append(f'<text x="16" y="{T + ph / 2}" text-anchor="middle" transform="rotate(-90 16 {T + ph / 2})">{esc(self.ylabel)}</text>')
        legend = []
        for pts, name, colour, dash, marks in self.lines:
            pts = [(x, y) for x, y in pts if not self.logy or y > 0]
            style = ' stroke-dasharray="6 4"' if dash else ""
            if pts:
                coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
                out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="1.5"{style}/>')
            if marks:
                out.extend(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>' for x, y in pts)
            if name:
                legend.append((name, colour, style))
        for x, y, name, colour in self.points:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{colour}"/>')
            legend.append((name, colour, None))
        for k, (name, colour, style) in enumerate(legend):
            y = T + 10 + 18 * k
            if style is None:
                out.append(f'<rect x="{W - R + 12}" y="{y - 8}" width="12" height="8" fill="{colour}"/>')
            else:
                out.append(f'<line x1="{W - R + 8}" y1="{y - 4}" x2="{W - R + 26}" y2="{y - 4}" stroke="{colour}" '
                           f'stroke-width="2"{style}/>')
            out.append(f'<text x="{W - R + 30}" y="{y}">{esc(name)}</text>')
        out.append("</svg>")
        with open(path, "w") as f:
            f.write("\n".join(out) + "\n")


def fmt(v):
    return f"{v:g}"


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
