"""The SVG charts written for asset metadata: marks where the data says, size bounded by the area."""

from __future__ import annotations

import re

import numpy as np
import pytest
from lxml import etree

from corpus.plots import hbar_panels_svg, loglog_svg

SVG = "{http://www.w3.org/2000/svg}"


def _marks(svg: bytes) -> list[list[tuple[int, int]]]:
    root = etree.fromstring(svg)
    series = [p.get("d") for p in root.iter(f"{SVG}path") if "stroke-opacity" in p.attrib]
    return [[(int(a), int(b)) for a, b in re.findall(r"M(-?\d+) (-?\d+)", d)] for d in series]


def test_marks_follow_the_data_on_log_axes():
    x = np.array([1, 10, 100])
    svg = loglog_svg([("a", x, 1.0 / x)], title="t", xlabel="k", ylabel="P(k)")
    (marks,) = _marks(svg)
    xs, ys = zip(*marks, strict=True)
    assert xs[1] - xs[0] == xs[2] - xs[1] > 0  # equal steps per decade, left to right
    assert ys[0] < ys[1] < ys[2] and ys[1] - ys[0] == ys[2] - ys[1]  # y falls a decade per step
    text = "".join(etree.fromstring(svg).itertext())
    assert "t" in text and "P(k)" in text and "10-2" in text  # the y axis reaches 10^-2


def test_points_that_log_axes_cannot_show_are_left_out():
    svg = loglog_svg([("a", np.array([0, 1, 2]), np.array([0.5, 0.0, 0.25]))], title="", xlabel="", ylabel="")
    assert [len(m) for m in _marks(svg)] == [1]
    empty = loglog_svg([("a", np.array([0]), np.array([0]))], title="no data", xlabel="", ylabel="")
    assert _marks(empty) == [] and b"no data" in empty and b">a<" not in empty  # no legend entry
    assert b"nothing to show" in empty
    odd = np.array([np.inf, np.nan, 5e-324, 1.0])
    svg = loglog_svg([("b", odd, odd), ("c", np.array([]), np.array([]))], title="", xlabel="", ylabel="")
    assert [len(m) for m in _marks(svg)] == [2] and b">c<" not in svg and b"-9223372036854775808" not in svg


def test_marks_are_deduplicated_pixels_so_size_is_bounded_by_the_area():
    values = np.arange(1, 50_001)  # a degree distribution's tail: many degrees, few counts each
    counts = np.maximum(1, 1e6 * values**-2.5).astype(np.int64)
    svg = loglog_svg([("in", values, counts / 1e6)], title="", xlabel="", ylabel="")
    (marks,) = _marks(svg)
    assert len(marks) == len(set(marks)) < 2_000
    assert len(svg) < 30_000


def test_text_is_escaped():
    svg = loglog_svg([("a<b & c", np.array([1, 2]), np.array([1, 2]))], title="<t>", xlabel="", ylabel="")
    assert "a<b & c" in "".join(etree.fromstring(svg).itertext())


def test_bars_scale_to_ticks_that_reach_the_largest_value():
    rows = [("input", 9_723, 0), ("no_full_text", 8_523, 1_200), ("empty", 0, 0)]
    root = etree.fromstring(hbar_panels_svg([("s2orc", rows), ("s2ag", [])], title="f", xlabel="docs"))
    bars = [float(r.get("width")) for r in root.iter(f"{SVG}rect") if r.get("fill") == "#1f77b4"]
    assert len(bars) == 2 and bars[0] / bars[1] == pytest.approx(9_723 / 8_523, rel=1e-3)
    text = list(root.itertext())
    assert "10,000" in text and "-1,200" in text and "s2ag" in text
    frame = next(r for r in root.iter(f"{SVG}rect") if r.get("fill") == "none")
    assert bars[0] <= float(frame.get("width"))  # the largest bar stays inside its panel


def test_ticks_are_round_and_cover_the_top():
    from corpus.plots import _nice_ticks

    assert _nice_ticks(0) == [0] and _nice_ticks(3) == [0, 1, 2, 3]
    assert _nice_ticks(9_723) == [0, 5_000, 10_000] and _nice_ticks(1_234) == [0, 500, 1_000, 1_500]


def test_svg_plot_metadata_embeds_the_chart_and_drops_the_old_png(tmp_path):
    import base64

    from corpus_assets.common import svg_plot

    path = tmp_path / "funnel.svg"
    path.write_bytes(hbar_panels_svg([("s2orc", [("input", 3, 0)])], title="t", xlabel="x"))
    for legacy in ("funnel.png", "funnel.png.key"):
        (tmp_path / legacy).write_bytes(b"old")
    meta = svg_plot("funnel_plot", "filter funnel", path)
    prefix = "![filter funnel](data:image/svg+xml;base64,"
    md = meta["funnel_plot"].value
    assert md.startswith(prefix) and base64.b64decode(md[len(prefix) : -1]) == path.read_bytes()
    assert meta["funnel_plot_path"].value == str(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["funnel.svg"]
