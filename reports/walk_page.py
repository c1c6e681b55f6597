"""The page `crashsweep view --serve` serves: one self-contained HTML document that walks the state graph.

It holds no state of its own: its script reads the path code in its URL (`?path=CODE`), asks the
server for that state (/api/state, the contract in crashsweep.reports.walk) and draws it; a move
clicked fetches the next state and pushes its code to the URL without reloading, so a link to the
page is a replayable counterexample. Styles and scripts are inline (walk_render.py draws,
walk_script.py navigates) and nothing is fetched from anywhere but the server that served it: no
CDN, no web font, so it works offline.

Stable hooks for tests: #moves button[data-code], #invariants li[data-status], #world
tr[data-path] (class "changed"), #lanes, #trace a[data-code], #discoveries a[data-code], #code,
#replay, #error, #back, #forward; `document.body.dataset.ready` is the code of the state drawn.
"""

from __future__ import annotations

from crashsweep.reports.walk_render import RENDER
from crashsweep.reports.walk_script import NAVIGATE

STYLE = """
* { box-sizing: border-box; } [hidden] { display: none !important; }
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0; color: #222;
       line-height: 1.35; font-size: 14px; background: #fafafa; }
header { background: #fff; border-bottom: 1px solid #ddd; padding: 0.6em 1.2em; }
h1 { font-size: 1.3em; margin: 0; display: inline-block; } #meta { color: #666; margin-left: 0.8em; }
h2 { font-size: 1.02em; margin: 0 0 0.4em; }
nav { margin-top: 0.4em; display: flex; flex-wrap: wrap; gap: 0.5em; align-items: center; }
nav button { font: inherit; padding: 0.2em 0.8em; cursor: pointer; }
#summary { margin-left: 0.6em; }
.run-finished { color: #1a7f37; font-weight: 600; }
.run-stuck { color: #c62828; font-weight: 600; }
.codeline { display: flex; flex-wrap: wrap; gap: 0.5em; align-items: baseline; margin-top: 0.4em; }
#code { font-weight: 600; }
#replay { background: #1e1e1e; color: #f0f0f0; padding: 0.2em 0.6em; border-radius: 3px;
       user-select: all; white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-size: 0.9em; flex: 1; }
#callout { margin: 0.5em 0 0; border-left: 4px solid #c62828; background: #fff0f0; padding: 0.3em 0.8em;
           color: #a00; font-weight: 600; }
#error { margin: 0.8em 1.2em; border-left: 4px solid #c62828; background: #fff0f0; padding: 0.6em 1em;
         color: #8b0000; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 380px; gap: 1em; padding: 1em 1.2em; }
section { background: #fff; border: 1px solid #e0e0e0; border-radius: 4px; padding: 0.6em 0.8em;
          margin-bottom: 1em; }
.none { color: #888; font-style: italic; }
#changed { margin: 0 0 0.5em; padding-left: 1.2em; } #changed li { background: #fff3b0; margin: 0.1em 0; }
table.world { border-collapse: collapse; width: 100%; }
table.world th, table.world td { border-top: 1px solid #eee; padding: 0.25em 0.5em; text-align: left;
                                 vertical-align: top; }
table.world th { width: 11em; font-weight: 600; color: #444; }
tr.changed th, tr.changed td { background: #fff3b0; }
.tag { font-size: 0.75em; color: #8a6d00; font-weight: 400; }
ul.turns { margin: 0.1em 0 0; padding-left: 1.2em; } ol.records { margin: 0; padding-left: 1.6em; }
.approved { color: #1a5fb4; }
#moves { display: flex; flex-direction: column; gap: 0.35em; }
button.move { font: inherit; text-align: left; padding: 0.35em 0.6em; border: 1px solid #bbb; border-radius: 4px;
              background: #f4f4f4; cursor: pointer; }
button.move:hover { background: #e8f0fe; }
button.move .kind { font-weight: 700; text-transform: uppercase; font-size: 0.8em; }
button.move .why { display: block; color: #666; font-size: 0.85em; }
button.kind-crash { border-color: #d62728; background: #fff0f0; }
button.kind-restart { border-color: #1f77b4; background: #f0f6ff; }
button.kind-fault, button.kind-retry { border-color: #b8860b; background: #fffaf0; }
#invariants { list-style: none; padding: 0; margin: 0; } #invariants li { margin: 0.25em 0; }
#invariants .status { font-weight: 700; } .ikind { color: #777; font-size: 0.85em; }
li.status-holds .status { color: #1a7f37; } li.status-violated .status { color: #c62828; }
li.status-violated { background: #fff0f0; } li.status-not-yet-exercised .status { color: #8a6d00; }
.detail { color: #555; font-size: 0.9em; margin-left: 1em; }
#lanes { max-height: 70vh; overflow: auto; padding-bottom: 0.7em; }
table.lanes { border-collapse: collapse; width: 100%; table-layout: fixed; font-size: 0.85em; }
table.lanes th { position: sticky; top: 0; background: #eee; padding: 0.3em; border-bottom: 1px solid #ccc; }
table.lanes th.step, table.lanes td.step { width: 3.5em; text-align: right; padding-right: 0.5em; }
table.lanes td { padding: 0.15em 0.3em; }
td.lane { background: linear-gradient(#ccc, #ccc) no-repeat center / 1px 100%; }
td.ev { text-align: center; overflow-wrap: anywhere; }
td.ev.right span, td.ev.left span { display: block; margin: 0 calc(50% / var(--k, 1));
                                    border-bottom: 2px solid #555; position: relative; padding: 0 0.6em; }
td.ev.right span::after { content: "\\25B6"; position: absolute; right: -0.3em; bottom: -0.62em;
                          font-size: 0.8em; color: #555; }
td.ev.left span::before { content: "\\25C0"; position: absolute; left: -0.3em; bottom: -0.62em;
                          font-size: 0.8em; color: #555; }
td.ev.note span { background: #f2f2f2; border: 1px solid #ccc; border-radius: 3px; padding: 0 0.4em; }
tr.crash td.ev span { background: #fde2e2; border-color: #d62728; color: #a00; font-weight: 700; }
tr.restart td.ev span { background: #e3efff; border-color: #1f77b4; color: #124f7a; font-weight: 700; }
tr.exit td.ev span { background: #e6f4ea; border-color: #2ca02c; color: #1a7f37; }
tr.violation td.ev span { background: #c62828; border-color: #c62828; color: #fff; font-weight: 700; }
tr.here td { background-color: #fffbe0; }
#trace { max-height: 45vh; overflow: auto; margin: 0; padding-left: 0; list-style: none; font-size: 0.9em; }
#trace li { padding: 0.05em 0.3em; } #trace li.here { background: #fff3b0; font-weight: 600; }
#trace li.ahead a { color: #999; }
#trace li.kind-crash a { color: #c62828; }
#trace li.kind-restart a { color: #1f77b4; }
.point { color: #666; } #trace li.ahead .point { color: #aaa; }
#found { padding-left: 1.2em; margin: 0.3em 0 0; } #found li.here { background: #fff3b0; }
#progress { color: #555; margin: 0; } .steps { color: #777; }
a.go { color: #0b57d0; text-decoration: none; } a.go:hover { text-decoration: underline; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; } }
"""

BODY = """
<header>
  <h1 id="title">crashsweep walk</h1><span id="meta"></span>
  <nav>
    <button type="button" id="back" disabled title="one step back: the parent state">&larr; Back</button>
    <button type="button" id="forward" disabled title="one step forward along the line walked">Forward &rarr;</button>
    <button type="button" id="start" disabled title="the initial state">Start</button>
    <span id="summary"></span>
  </nav>
  <div class="codeline" id="codeline" hidden>path <code id="code"></code> replay: <pre id="replay"></pre>
    <button type="button" id="copy" title="copy the replay command">copy</button></div>
  <p id="callout" hidden></p>
</header>
<div id="error" role="alert" hidden></div>
<main id="main">
  <div>
    <section id="state"><h2>The state, and what the last step changed</h2>
      <ul id="changed"></ul><table class="world"><tbody id="world"></tbody></table></section>
    <section><h2>The path so far, as swim lanes</h2><div id="lanes"></div></section>
  </div>
  <div>
    <section><h2>Moves</h2><div id="moves"></div></section>
    <section><h2>Invariants here</h2><ul id="invariants"></ul></section>
    <section id="discoveries"><h2>Discoveries</h2><p id="progress">asking the server…</p>
      <ol id="found"></ol></section>
    <section><h2>Trace</h2><ol id="trace"></ol></section>
  </div>
</main>
"""

PAGE = "\n".join(
    [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',  # no favicon request: the page asks the server for nothing else
        "<title>crashsweep walk</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        BODY,
        f'<script>\n"use strict";\n{RENDER}\n{NAVIGATE}\n</script>',
        "</body>",
        "</html>",
        "",
    ]
)
"""The whole page: served as is for `/` and `/?path=CODE`."""
