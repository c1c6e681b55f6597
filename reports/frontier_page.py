"""The design frontier as one self-contained HTML page, with a chart of cost against safety.

The chart is a grid of small scatter plots drawn by matplotlib as SVG, one per cost figure
that differs between designs. Every design is a point: across, that figure; up, the harm it
does over all scenarios (duplicate records plus missing writes; 0 is safe). Unsafe designs are
grey crosses, safe ones blue dots, the frontier orange stars, the cheapest safe design a red
star. The SVG is inline and the styles are too, so the page works offline. The SVG is the
same bytes on every run (fixed hash salt, no date, text kept as text).
"""

from __future__ import annotations

import io
from html import escape

from matplotlib import rc_context
from matplotlib.figure import Figure

from crashsweep.reports.frontier import HEADER, Frontier, headline, row_cells, verdict_lines
from crashsweep.reports.table import COST_EXTRA, COST_RUN

NAMES = (
    *(f"{name} (uninterrupted run)" for name in COST_RUN),
    *(f"{name} (over all scenarios)" for name in COST_EXTRA),
)
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1400px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
td.design, td.verdict, td.mark { text-align: left; } td.design { font-family: monospace; }
tr.safe td.verdict { color: #1a7f37; } tr.unsafe td.verdict { color: #c62828; }
tr.cheapest { background: #ffebee; font-weight: 600; } tr.frontier { background: #fff3e0; }
.chart svg { max-width: 100%; height: auto; }
pre { background: #f7f7f7; border: 1px solid #e0e0e0; padding: 0.8em; overflow-x: auto; }
"""


def harm(result: Frontier, number: int) -> int:
    """Duplicate records plus missing writes of a design, summed over all scenarios."""
    row = result.entry(number).row
    return row.dups + row.missing


def varying(result: Frontier) -> list[int]:
    """The indices (into the cost vector) of the figures that differ between designs."""
    vectors = [item.costs for item in result.entries]
    return [i for i in range(len(NAMES)) if len({v[i] for v in vectors}) > 1]


def chart_svg(result: Frontier) -> str:
    """The chart of cost against safety as an SVG document."""
    figures = varying(result) or [0]
    columns = min(3, len(figures))
    lines = -(-len(figures) // columns)
    with rc_context({"svg.hashsalt": "crashsweep", "svg.fonttype": "none", "font.size": 9}):
        figure = Figure(figsize=(4.2 * columns, 3.4 * lines), layout="constrained")
        groups = {
            "unsafe": [i.number for i in result.entries if i.number not in result.safe],
            "safe": [n for n in result.safe if n not in result.pareto],
            "frontier": [n for n in result.pareto if n != result.cheapest],
            "cheapest": [result.cheapest] if result.cheapest is not None else [],
        }
        looks = {
            "unsafe": {"marker": "x", "color": "#9e9e9e", "s": 18},
            "safe": {"marker": "o", "color": "#1e88e5", "s": 18},
            "frontier": {"marker": "*", "color": "#fb8c00", "s": 90},
            "cheapest": {"marker": "*", "color": "#d32f2f", "s": 160},
        }
        for place, figure_index in enumerate(figures, start=1):
            axes = figure.add_subplot(lines, columns, place)
            for group, numbers in groups.items():
                xs = [result.entry(n).costs[figure_index] for n in numbers]
                ys = [harm(result, n) for n in numbers]
                axes.scatter(xs, ys, label=group, alpha=0.8, **looks[group])  # type: ignore[arg-type]
            axes.set_yscale("symlog")
            axes.set_xlabel(NAMES[figure_index])
            axes.set_ylabel("duplicates + missing (0 = safe)")
            axes.grid(True, alpha=0.3)
            if place == 1:
                axes.legend(loc="upper right", fontsize=7)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _svg_body(svg: str) -> str:
    """The <svg> element without the XML prolog and DOCTYPE, for inlining."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def _table(result: Frontier, numbers: list[int]) -> str:
    rows = []
    for number in numbers:
        item = result.entry(number)
        cells = row_cells(result, item)
        kind = "cheapest" if number == result.cheapest else "frontier" if number in result.pareto else ""
        safety = "safe" if item.row.holds else "unsafe"
        classes = ("", "design", "verdict", *([""] * (len(cells) - 4)), "mark")
        tds = "".join(
            f'<td class="{c}">{escape(v)}</td>' if c else f"<td>{escape(v)}</td>"
            for c, v in zip(classes, cells, strict=True)
        )
        rows.append(f'<tr class="{f"{safety} {kind}".strip()}">{tds}</tr>')
    head = "".join(f"<th>{escape(name)}</th>" for name in HEADER)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def page(result: Frontier, chart: str) -> str:
    """The whole page: headline, chart, the cheapest safe design, the frontier, every design."""
    title = f"crashsweep frontier: job {result.job}, tracker {result.tracker}, depth {result.depth}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>{escape(headline(result))}.</p>",
        "<h2>Cost against safety</h2>",
        f'<div class="chart">{_svg_body(chart)}</div>',
        "<h2>The cheapest safe design</h2>",
        f"<pre>{escape(chr(10).join(verdict_lines(result)))}</pre>",
        "<h2>The frontier, cheapest first</h2>",
        _table(result, list(result.pareto)),
        "<h2>Every design</h2>",
        _table(result, [item.number for item in result.entries]),
        "<footer>Made by crashsweep. Explore the cheapest safe design with cheapest.toml (--design).</footer>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
