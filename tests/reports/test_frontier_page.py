"""Tests of crashsweep.reports.frontier_page: the chart is SVG, the same bytes every time, and the page is self-contained."""  # noqa: E501

from __future__ import annotations

import re

from crashsweep.reports.frontier import frontier
from crashsweep.reports.frontier_page import chart_svg, page, varying
from tests.reports.test_frontier import ENTRIES


def test_chart_is_deterministic_svg_with_a_panel_per_varying_figure() -> None:
    """Two renderings are byte-identical; one panel (x label) per cost figure that varies."""
    result = frontier(ENTRIES, job="j", tracker="keyed", depth=1)
    first, second = chart_svg(result), chart_svg(result)
    assert first == second
    assert "<svg" in first
    # saves, questions (run) and calls+ differ between the six designs; nothing else does.
    assert varying(result) == [0, 3, 7]
    for label in ("saves (uninterrupted run)", "questions (uninterrupted run)", "calls+ (over all scenarios)"):
        assert label in first


def test_page_is_self_contained_and_escaped() -> None:
    """No external resource; the chart inline; every design in the full table; labels escaped."""
    entries = list(ENTRIES)
    entries[0] = type(entries[0])(1, "<b>design 1</b>", {}, entries[0].row)
    result = frontier(entries, job="j", tracker="keyed", depth=1)
    html = page(result, chart_svg(result))
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<?xml" not in html
    assert html.count("<svg") == 1
    assert "&lt;b&gt;design 1&lt;/b&gt;" in html
    assert "<b>design 1</b>" not in html
    assert html.count('<tr class="safe cheapest">') == 2  # in the frontier table and in the full one
