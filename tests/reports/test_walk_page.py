"""Static checks of the walk page (crashsweep.reports.walk_page.PAGE): one self-contained document.

What a browser does with it is tested in tests/cli/test_serve_browser.py; here, without a
browser: it is one HTML document, it loads nothing from anywhere (no external scripts, styles,
fonts or images: the page must work offline and leak nothing), and it carries the ids and hooks
that the browser test and the benchmark rely on.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from crashsweep.reports.walk_page import PAGE
from crashsweep.reports.walk_render import RENDER
from crashsweep.reports.walk_script import NAVIGATE

IDS = {"title", "meta", "back", "forward", "start", "summary", "code", "replay", "copy", "callout", "error", "main"}
IDS |= {"state", "changed", "world", "lanes", "moves", "invariants", "discoveries", "progress", "found", "trace"}
"""The ids the browser test, the benchmark and the page's own script find elements by."""


class Parsed(HTMLParser):
    """Every start tag with its attributes, the text of each script and style, and the document's doctype."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.doctypes: list[str] = []
        self.inline: dict[str, list[str]] = {"script": [], "style": []}
        self._in: str | None = None

    def handle_decl(self, decl: str) -> None:
        self.doctypes.append(decl)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in self.inline else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self.inline[self._in].append(data)


def parsed() -> Parsed:
    """PAGE, parsed."""
    page = Parsed()
    page.feed(PAGE)
    page.close()
    return page


def test_the_page_is_one_html_document() -> None:
    """One doctype, one html, head and body element, in UTF-8, ending with the document."""
    page = parsed()
    assert page.doctypes == ["DOCTYPE html"]
    names = [tag for tag, _ in page.tags]
    assert [names.count(tag) for tag in ("html", "head", "body", "main")] == [1, 1, 1, 1]
    assert PAGE.startswith("<!DOCTYPE html>\n")
    assert PAGE.rstrip().endswith("</html>")
    assert ("meta", {"charset": "utf-8"}) in page.tags


def test_nothing_is_loaded_from_anywhere() -> None:
    """Scripts and styles inline; no src or href leaves the page (no scheme, no //); no CSS import or web font."""
    page = parsed()
    for tag, attrs in page.tags:
        assert not (tag == "script" and "src" in attrs), attrs
        assert not (tag == "link" and attrs.get("rel") == "stylesheet"), attrs
        for name in ("src", "href", "action", "srcset", "poster"):
            value = attrs.get(name)
            if value is not None:
                assert not value.startswith("//"), (tag, attrs)
                assert not re.match(r"[a-z][a-z0-9+.-]*:", value, re.I) or value.startswith("data:"), (tag, attrs)
    assert not re.search(r"https?://|@import|@font-face", PAGE, re.I)
    assert not re.search(r"\burl\(", PAGE)  # a CSS url(): a picture or font fetched
    assert not re.search(r"""(src|href)\s*=\s*["']?//""", PAGE)
    assert len(page.inline["script"]) == 1
    assert len(page.inline["style"]) == 1


def test_the_script_asks_only_its_own_server() -> None:
    """Every fetch goes to a path of the server that served the page (/api/...), nowhere else."""
    script = RENDER + NAVIGATE
    assert re.findall(r'fetch\("([^"?]+)', script) == ["/api/state", "/api/discoveries"]
    assert "XMLHttpRequest" not in script
    assert "</script" not in script.lower()
    assert "eval(" not in script


def test_the_hooks_the_tests_rely_on_are_there() -> None:
    """Each id once; the data attributes the browser test and the benchmark read are written by the script."""
    ids = [attrs["id"] for _, attrs in parsed().tags if attrs.get("id")]
    assert len(ids) == len(set(ids)), ids
    assert set(ids) >= IDS, IDS - set(ids)
    script = RENDER + NAVIGATE
    for hook in ("dataset.ready", "data-code", "data-status", "data-kind", "data-choice", "data-path", "walkTimes"):
        assert hook in script, hook
    assert "history.pushState" in script
    assert '"popstate"' in script
