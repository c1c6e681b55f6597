"""The walk page's drawing of one state, as inline script (a str): the world, the moves, the lanes.

`render(view, tip)` fills the page's parts from the JSON view of a state (the contract of
/api/state): the header, the world with what the last step changed marked (`changed_paths`
are dotted paths into the world; a row of the world is marked when its path is one of them, or
lies above or below one), the moves as buttons, each invariant's status, the swim lanes, the
trace and the replay command. `tip` is the deepest state of the line being walked, for the
Forward button. Each part is built as one string and set with one innerHTML, so a 2,000-step
path costs one parse and one layout, not one per row; every text from the JSON (design, job
and call names come from users' files) goes through `esc` first.
"""

from __future__ import annotations

RENDER = """
var ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
function esc(value) {
  var text = String(value === null || value === undefined ? "" : value);
  return text.replace(/[&<>"']/g, function (c) { return ESCAPES[c]; });
}
function go(code, text, cls) {
  return '<a class="' + (cls || "go") + '" href="' + esc(hrefOf(code)) + '" data-code="' + esc(code) + '">' +
    text + "</a>";
}
function plural(n, word) { return n + " " + word + (n === 1 ? "" : (word.slice(-1) === "h" ? "es" : "s")); }
function render(view, tip) {
  el("main").hidden = false;
  el("codeline").hidden = false;
  document.title = "crashsweep walk: " + view.design + " at " + view.code;
  el("title").textContent = "crashsweep walk: " + view.design;
  el("meta").textContent = "job " + view.job + ", tracker " + view.tracker + ", depth " + view.depth;
  var status = view.finished ? "finished" : view.stuck ? "stuck" : "running";
  el("summary").innerHTML = "step <b>" + esc(view.step) + "</b> · " + esc(plural(view.crashes, "crash")) +
    " · <span class=\\"run-" + esc(status) + "\\">" + esc(status) + "</span>" +
    (view.point ? " · at <code>" + esc(view.point) + "</code>" : "");
  el("code").textContent = view.code;
  el("replay").textContent = view.replay;
  setNav(el("back"), view.parent);
  setNav(el("forward"), forwardCode());
  setNav(el("start"), view.step === 0 ? null : "0:");
  var nothing = view.step === 0 ? "the start: nothing yet" : "nothing in the world";
  el("changed").innerHTML = view.changed.length
    ? view.changed.map(function (w) { return "<li>" + esc(w) + "</li>"; }).join("")
    : '<li class="none">' + nothing + "</li>";
  el("world").innerHTML = worldRows(view.world, view.changed_paths || []);
  var end = status === "running" ? "is at its depth's end" : "is " + status;
  el("moves").innerHTML = view.moves.length ? view.moves.map(moveButton).join("")
    : '<p class="none">no moves: the run ' + esc(end) + "</p>";
  el("invariants").innerHTML = view.invariants.map(invariantItem).join("");
  var violated = view.invariants.filter(function (inv) { return inv.status === "violated"; });
  el("callout").hidden = !violated.length;
  el("callout").textContent = violated.map(function (inv) {
    return "VIOLATED " + inv.name + (inv.detail ? ": " + inv.detail : "");
  }).join("; ");
  el("lanes").innerHTML = lanesTable(view);
  el("trace").innerHTML = traceItems(view, tip);
  var box = el("lanes");
  box.scrollTop = box.scrollHeight;  // the current step is the last row: one layout read for the whole table
}
function setNav(button, code) {
  if (code) { button.dataset.code = code; } else { delete button.dataset.code; }
  button.disabled = !code;
}
function moveButton(move) {
  return '<button type="button" class="move kind-' + esc(move.kind) + '" data-code="' + esc(move.code) +
    '" data-kind="' + esc(move.kind) + '" data-choice="' + esc(move.choice) + '"><span class="kind">' + esc(move.kind) +
    '</span> <span class="label">' + esc(move.label) + '</span><span class="why">' + esc(move.why) + "</span></button>";
}
function invariantItem(inv) {
  var status = inv.status;
  return '<li data-name="' + esc(inv.name) + '" data-status="' + esc(status) + '" class="status-' +
    esc(status.replace(/ /g, "-")) + '"><code>' + esc(inv.name) + '</code> <span class="ikind">' + esc(inv.kind) +
    '</span> <span class="status">' + esc(status) + "</span>" +
    (inv.detail ? '<div class="detail">' + esc(inv.detail) + "</div>" : "") + "</li>";
}
function isChanged(path, changed) {
  for (var i = 0; i < changed.length; i++) {
    var c = changed[i];
    if (c === path || c.indexOf(path + ".") === 0 || path.indexOf(c + ".") === 0) { return true; }
  }
  return false;
}
function words(list) { return list && list.length ? list.map(esc).join(", ") : ""; }
function snapshot(s) {
  if (!s) { return '<span class="none">none</span>'; }
  var turns = (s.turns || []).map(function (t) {
    var bits = ["turn " + esc(t.index) + (t.complete ? "" : " (open)")];
    var results = (t.results || []).map(function (r) {
      return esc(r.call) + (r.answer === null || r.answer === undefined ? "" : " = " + esc(r.answer));
    });
    if (results.length) { bits.push("results " + results.join(", ")); }
    if (t.marked && t.marked.length) { bits.push("marked " + words(t.marked)); }
    if (t.approved && t.approved.length) {
      bits.push('<span class="approved">approved ' + words(t.approved) + "</span>");
    }
    if (t.failed && t.failed.length) { bits.push("failed " + words(t.failed)); }
    return "<li>" + bits.join("; ") + "</li>";
  });
  var list = turns.length ? '<ul class="turns">' + turns.join("") + "</ul>" : ", no turns";
  return esc(s.run) + (s.done ? ", done" : "") + list;
}
function records(tracker) {
  var list = tracker.records || [];
  if (!list.length) { return '<span class="none">no records</span>'; }
  return '<ol class="records">' + list.map(function (r) {
    return '<li data-number="' + esc(r.number) + '">#' + esc(r.number) + " " + esc(r.call) + " (" + esc(r.run) +
      ")</li>";
  }).join("") + "</ol>";
}
function keys(tracker) {
  var list = tracker.keys || [];
  if (!list.length) { return '<span class="none">none</span>'; }
  return list.map(function (k) { return "<code>" + esc(k.key) + "</code> → " + esc(k.answer); }).join(", ");
}
function processCell(p) {
  if (!p) { return '<span class="none">no process</span>'; }
  return "at <code>" + esc(p.point === null ? "nothing yet" : p.point) + "</code><br>memory: " + snapshot(p.memory);
}
function worldRows(world, changed) {
  var rows = [];
  function row(path, title, html) {
    var mark = isChanged(path, changed);
    rows.push('<tr data-path="' + esc(path) + '"' + (mark ? ' class="changed"' : "") + "><th>" + esc(title) +
      (mark ? ' <span class="tag">changed</span>' : "") + "</th><td>" + html + "</td></tr>");
  }
  var known = {checkpoint: 1, lock: 1, tracker: 1, process: 1, finished: 1, runs: 1, struck: 1, second: 1};
  row("checkpoint.file", "checkpoint file", snapshot(world.checkpoint && world.checkpoint.file));
  row("checkpoint.tmp", "temp file", snapshot(world.checkpoint && world.checkpoint.tmp));
  if (world.lock && (world.lock.holder || world.lock.tmp)) {
    var temp = world.lock.tmp ? "; temp " + esc(world.lock.tmp) : "";
    row("lock", "lock file", "held by " + esc(world.lock.holder || "nobody") + temp);
  }
  row("tracker.records", "tracker records", records(world.tracker || {}));
  row("tracker.keys", "tracker keys", keys(world.tracker || {}));
  row("process", "process", processCell(world.process));
  if (world.second) {
    var s = world.second;
    row("second", "second process", processCell(s.process) + "<br>" + esc(s.state) + ", token " + esc(s.token) +
      ", other's token " + esc(s.other_token) + ", fence " + esc(s.fence));
  }
  var struck = world.struck && world.struck.length ? words(world.struck) : '<span class="none">none</span>';
  row("struck", "approvals and struck entries", struck);
  row("runs", "runs", esc(world.runs) + (world.finished ? ", finished" : ""));
  Object.keys(world).forEach(function (key) {
    if (!known[key]) { row(key, key, "<pre>" + esc(JSON.stringify(world[key], null, 1)) + "</pre>"); }
  });
  return rows.join("");
}
function lanesTable(view) {
  var lanes = view.lanes.lanes, titles = view.lanes.titles || {}, index = {}, codes = {};
  lanes.forEach(function (name, i) { index[name] = i; });
  view.trace.forEach(function (t) { codes[t.index] = t.code; });
  var out = ['<table class="lanes"><thead><tr><th class="step">step</th>'];
  lanes.forEach(function (name) { out.push("<th>" + esc(titles[name] || name) + "</th>"); });
  out.push("</tr></thead><tbody>");
  var last = null;
  view.lanes.rows.forEach(function (r) {
    var source = index[r.source] === undefined ? 0 : index[r.source];
    var target = r.target === null || index[r.target] === undefined ? source : index[r.target];
    var lo = Math.min(source, target), hi = Math.max(source, target);
    var dir = target > source ? "right" : target < source ? "left" : "note";
    var here = r.step === view.step ? " here" : "";
    out.push('<tr data-step="' + esc(r.step) + '" class="' + esc(r.style) + here + '"><td class="step">');
    if (r.step !== last && codes[r.step]) { out.push(go(codes[r.step], esc(r.step))); }
    out.push("</td>");
    last = r.step;
    for (var i = 0; i < lo; i++) { out.push('<td class="lane"></td>'); }
    var span = hi - lo + 1;
    out.push('<td class="ev ' + dir + '" colspan="' + span + '" style="--k:' + span + '"><span>' + esc(r.text) +
      "</span></td>");
    for (var j = hi + 1; j < lanes.length; j++) { out.push('<td class="lane"></td>'); }
    out.push("</tr>");
  });
  if (!view.lanes.rows.length) {
    out.push('<tr><td colspan="' + (lanes.length + 1) + '" class="none">nothing yet</td></tr>');
  }
  out.push("</tbody></table>");
  return out.join("");
}
function traceItems(view, tip) {
  var out = ['<li data-index="0"' + (view.step === 0 ? ' class="here"' : "") + ">" + go("0:", "0 the start") + "</li>"];
  tip.trace.forEach(function (t) {
    var cls = t.index === view.step ? "here" : t.index > view.step ? "ahead" : "";
    out.push('<li data-index="' + esc(t.index) + '" class="' + cls + " kind-" + esc(t.kind) + '">' +
      go(t.code, esc(t.index) + " " + esc(t.kind === "step" ? t.action : t.kind.toUpperCase() + " " + t.action) +
        (t.point ? ' <span class="point">' + esc(t.point) + "</span>" : "")) + "</li>");
  });
  return out.join("");
}
function renderDiscoveries(found, view) {
  el("progress").textContent = found.line + (found.done ? "" : " …");
  el("discoveries").dataset.done = found.done ? "true" : "false";
  var list = found.discoveries.map(function (d) {
    var here = view && view.code === d.code ? " here" : "";
    var text = "<code>" + esc(d.invariant) + "</code> " + esc(d.kind) + ": " + esc(d.violation) +
      ' <span class="steps">' + esc(plural(d.steps, "step")) + "</span>";
    return '<li class="' + here + '">' + go(d.code, text) + "</li>";
  });
  var none = found.done ? "no violation found" : "none yet";
  el("found").innerHTML = list.length ? list.join("") : '<li class="none">' + none + "</li>";
}
"""
