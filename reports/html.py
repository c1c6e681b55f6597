"""One self-contained HTML page: a design's row, its verdicts, and each violation explained.

For every violated invariant the page shows the violation in words, the replay command, the
text trace, the state graph and the sequence diagram (inline SVG, or the DOT source when no
SVG could be made), and the pytest snippet. Nothing is loaded from the network: styles are
inline and so are the pictures, so the file works offline and can be mailed around. Every
piece of text is HTML-escaped; SVG comes from graphviz, which escapes its own labels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from crashsweep.reports.describe import plural
from crashsweep.reports.summary import Summary
from crashsweep.reports.table import FIGURES, crash_header

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 2em; }
h3 { font-size: 1.05em; margin-top: 1.5em; }
.meta { color: #666; margin-top: 0; }
table.row { border-collapse: collapse; margin: 1em 0; }
table.row th, table.row td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
table.row th:first-child, table.row td:first-child { text-align: left; }
table.row th { background: #f3f3f3; }
ul.verdicts { list-style: none; padding-left: 0; }
ul.verdicts li { margin: 0.3em 0; }
.holds { color: #1a7f37; font-weight: 600; } .violated, .unexercised { color: #c62828; font-weight: 600; }
.violation { border-left: 4px solid #c62828; background: #fff5f5; padding: 0.5em 1em; }
pre { background: #f7f7f7; border: 1px solid #e0e0e0; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
pre.command { background: #1e1e1e; color: #f0f0f0; white-space: pre-wrap; overflow-wrap: anywhere; }
.diagram { overflow: auto; border: 1px solid #e0e0e0; padding: 0.5em; background: #fff; }
.diagram svg { max-width: 100%; height: auto; }
.diagram.sequence svg { max-width: none; }
.note { background: #fff8e1; border: 1px solid #ffe082; padding: 0.5em 1em; }
footer { margin-top: 3em; color: #888; font-size: 0.85em; }
"""


@dataclass(frozen=True)
class Section:
    """What the page shows of one violated invariant; an SVG is None when none could be made."""

    invariant: str
    violation: str
    title: str
    trace: str
    replay: str
    pytest_command: str
    pytest: str
    graph_dot: str
    sequence_dot: str
    graph_svg: str | None = None
    sequence_svg: str | None = None


def inline_svg(svg: str) -> str:
    """An SVG document made fit to sit inside HTML: no XML prolog, doctype or comments."""
    start = svg.find("<svg")
    if start < 0:
        raise ValueError("not an SVG document: no <svg element")
    return re.sub(r"<!--.*?-->", "", svg[start:], flags=re.DOTALL).strip()


def _row(summary: Summary) -> str:
    deepest = max(summary.scenarios, default=summary.depth)
    crash_heads = [crash_header(k, bool(summary.faults), deepest) for k in summary.scenarios]
    merged = " (merged by state key)" if summary.projection else ""  # spec/SEMANTICS.md section 11
    heads = ["variant", *crash_heads, *FIGURES, f"states{merged}", "edges"]
    figures = [summary.with_dups, summary.dups, summary.missing, summary.asks, summary.calls_plus]
    cells = [summary.variant, *summary.scenarios.values(), *figures, summary.states, summary.edges]
    head = "".join(f"<th>{escape(str(h))}</th>" for h in heads)
    body = "".join(f"<td>{escape(str(c))}</td>" for c in cells)
    return f'<table class="row"><tr>{head}</tr><tr>{body}</tr></table>'


def _verdicts(summary: Summary) -> str:
    items = []
    unit = "move" if summary.faults else "crash"
    for v in summary.invariants:
        name = f"<code>{escape(v.name)}</code>"
        if not v.decided:
            words = f"not decided: {escape(v.why)}"
        elif not v.witnessed:
            words = f'<span class="unexercised">never exercised</span>: witness {escape(repr(v.witness))} never seen'
        elif v.holds:
            words = '<span class="holds">holds</span>'
        else:
            words = (
                f'<span class="violated">violated</span>: shortest counterexample {plural(v.crashes or 0, unit)}, '
                f"{v.steps} steps, path <code>{escape(str(v.counterexample))}</code> "
                f'(<a href="#{_anchor(v.name)}">details</a>)'
            )
        items.append(f"<li>{name} {words}</li>")
    return f'<ul class="verdicts">{"".join(items)}</ul>'


def _anchor(name: str) -> str:
    return "violation-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name)


def _diagram(caption: str, svg: str | None, dot: str, kind: str = "") -> str:
    """A picture under `caption`; a `kind` "sequence" keeps its size and scrolls, since its labels are small."""
    if svg is not None:
        picture = f'<div class="{" ".join(filter(None, ("diagram", kind)))}">{inline_svg(svg)}</div>'
    else:
        picture = (
            '<p class="note">No SVG: graphviz\'s <code>dot</code> was not found. The DOT source is below '
            "(paste it into any graphviz viewer, or install graphviz and run again).</p>"
        )
    source = f"<details><summary>DOT source</summary><pre>{escape(dot)}</pre></details>"
    return f"<h3>{escape(caption)}</h3>{picture}{source}"


def _section(section: Section) -> str:
    return "".join(
        [
            f'<section id="{_anchor(section.invariant)}">',
            f"<h2>{escape(section.invariant)} violated</h2>",
            f'<p class="violation">{escape(section.violation)}</p>',
            f"<p>{escape(section.title)}</p>",
            "<h3>Replay</h3>",
            f'<pre class="command">{escape(section.replay)}</pre>',
            "<h3>Trace</h3>",
            f'<pre class="trace">{escape(section.trace)}</pre>',
            _diagram("State graph around the counterexample", section.graph_svg, section.graph_dot),
            _diagram("Sequence diagram", section.sequence_svg, section.sequence_dot, "sequence"),
            "<h3>As a pytest test</h3>",
            f"<p>Print it with <code>{escape(section.pytest_command)}</code>:</p>",
            f'<pre class="pytest">{escape(section.pytest)}</pre>',
            "</section>",
        ]
    )


def page(summary: Summary, sections: Sequence[Section], *, note: str | None = None) -> str:
    """The whole page as one HTML document."""
    title = f"crashsweep: {summary.variant}"
    verdict = "every invariant holds" if summary.holds else "an invariant is violated or never exercised"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">job {escape(summary.job)}, tracker {escape(summary.tracker)}, depth {summary.depth}: '
        f"{escape(verdict)}</p>",
    ]
    if note:
        parts.append(f'<p class="note">{escape(note)}</p>')
    parts += ["<h2>The design's row</h2>", _row(summary), "<h2>Invariants</h2>", _verdicts(summary)]
    parts += [_section(section) for section in sections]
    parts += ["<footer>Made by crashsweep. Re-run any counterexample with the replay command above it.</footer>"]
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"
