"""The walk page's navigation, as one inline script (a str): fetch a state, push it to the URL, render it.

The page (crashsweep.reports.walk_page) holds the state whose path code is in its own URL
(`?path=CODE`; none: the start, "0:"). A click on anything carrying `data-code` (a move, a step
of the trace, a row of the lanes, a discovery, Back, Forward) fetches /api/state for that code,
pushes `?path=CODE` to the history without reloading, and renders the state; the browser's back
and forward (popstate) render the state of the URL they land on. A server's 400 answer shows its
one line in the error box and leaves the state shown before it. Discoveries are polled from
/api/discoveries every 500 ms until the background search is done.

The drawing of a state is in crashsweep.reports.walk_render (the world, the lanes, the lists);
every text from the JSON goes through its `esc` before it joins HTML. For tests and the
benchmark, `document.body.dataset.ready` is set to the code of each state (or failed code) once
it is drawn, and `window.walkTimes` holds, for each state drawn, the milliseconds from its fetch
to the end of drawing (`ms`), of the fetch alone (`fetch`), and since the page's navigation (`at`).
"""

from __future__ import annotations

NAVIGATE = """
var walk = {view: null, tip: null, found: null, seq: 0};
window.walkTimes = [];
function el(id) { return document.getElementById(id); }
function codeOfUrl() { return new URLSearchParams(location.search).get("path") || "0:"; }
function hrefOf(code) {
  return "?path=" + encodeURIComponent(code).replace(/%3A/gi, ":").replace(/%3D/gi, "=").replace(/%2C/gi, ",");
}
function showError(message, code) {
  var box = el("error");
  box.textContent = "";
  var strong = document.createElement("strong");
  strong.textContent = (code ? "Cannot show path " + code : "The server refused the request") + " \u2014 ";
  box.appendChild(strong);
  box.appendChild(document.createTextNode(message));
  if (!walk.view) {
    var again = document.createElement("a");
    again.href = hrefOf("0:"); again.dataset.code = "0:"; again.textContent = " Go to the start.";
    box.appendChild(again);
  }
  box.hidden = false;
  document.body.dataset.error = message;
}
function readJson(response) {
  return response.text().then(function (text) {
    var data = null;
    try { data = JSON.parse(text); } catch (e) { data = null; }
    if (!response.ok) {
      var why = data && typeof data.error === "string" ? data.error
        : "HTTP " + response.status + " " + text.slice(0, 200);
      throw new Error(why);
    }
    if (data === null) { throw new Error("the server answered something that is not JSON"); }
    return data;
  });
}
function load(code, how) {
  var number = ++walk.seq, start = performance.now();
  document.body.dataset.loading = code;
  fetch("/api/state?path=" + encodeURIComponent(code), {cache: "no-store"}).then(readJson).then(function (view) {
    if (number !== walk.seq) { return; }
    var fetched = performance.now();
    if (how === "push" && codeOfUrl() !== view.code) { history.pushState({code: view.code}, "", hrefOf(view.code)); }
    if (how === "replace" && location.search !== hrefOf(view.code)) {
      history.replaceState({code: view.code}, "", hrefOf(view.code));
    }
    el("error").hidden = true;
    delete document.body.dataset.error;
    walk.view = view;
    walk.tip = onTip(walk.tip, view) ? walk.tip : view;
    render(view, walk.tip);
    if (walk.found) { renderDiscoveries(walk.found, view); }
    var end = performance.now();
    window.walkTimes.push({code: view.code, ms: end - start, fetch: fetched - start, at: end, steps: view.step});
    delete document.body.dataset.loading;
    document.body.dataset.ready = view.code;
  }).catch(function (error) {
    if (number !== walk.seq) { return; }
    if (!walk.view) { el("main").hidden = true; }
    showError(error && error.message ? error.message : String(error), code);
    delete document.body.dataset.loading;
    document.body.dataset.ready = code;
  });
}
function onTip(tip, view) {
  if (!tip || tip.step < view.step) { return false; }
  if (view.step === 0) { return true; }
  var same = tip.trace[view.step - 1];
  return !!same && same.code === view.code;
}
function forwardCode() {
  var view = walk.view, tip = walk.tip;
  if (!view || !tip || tip.step <= view.step) { return null; }
  return tip.trace[view.step].code;
}
document.addEventListener("click", function (event) {
  var target = event.target.closest ? event.target.closest("a[data-code], button[data-code]") : null;
  if (!target || target.disabled) { return; }
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) { return; }
  event.preventDefault();
  load(target.dataset.code, "push");
});
window.addEventListener("popstate", function () { load(codeOfUrl(), "none"); });
el("copy").addEventListener("click", function () {
  var text = el("replay").textContent;
  var done = function () {
    el("copy").textContent = "copied";
    setTimeout(function () { el("copy").textContent = "copy"; }, 1500);
  };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(text).then(done, function () { selectText(el("replay")); });
  } else { selectText(el("replay")); }
});
function selectText(node) {
  var range = document.createRange(); range.selectNodeContents(node);
  var selection = window.getSelection(); selection.removeAllRanges(); selection.addRange(range);
}
function poll() {
  fetch("/api/discoveries", {cache: "no-store"}).then(readJson).then(function (found) {
    walk.found = found;
    renderDiscoveries(found, walk.view);
    if (found.done) { document.body.dataset.discoveries = "done"; } else { setTimeout(poll, 500); }
  }).catch(function (error) {
    el("progress").textContent = "discoveries not available: " + (error && error.message ? error.message : error);
    setTimeout(poll, 2000);
  });
}
load(codeOfUrl(), "replace");
poll();
"""
