"""Small SVG charts for asset metadata, written directly: no plotting library in a run.

Importing matplotlib and drawing one figure cost ~0.6 CPU s and ~60 MB in every cross-day
run that redrew the degree plot, more than the new day's own graph work. An SVG of a few
hundred marks is text a browser draws; the Dagster UI shows it from a ``data:image/svg+xml``
URI in markdown metadata. Marks are whole pixels and de-duplicated, so a chart's size is
bounded by its area, not by how many points the data has.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from xml.sax.saxutils import escape

import numpy as np

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")  # matplotlib's first four
# A mark is a short stroke: a zero-length one with a round cap is a dot; a 6 px one with butt
# caps, as wide as the stroke, is a square (renderers differ on square caps of zero length).
MARKS = (("round", 0), ("butt", 6))
_FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'


def _decades(values: np.ndarray) -> tuple[int, int]:
    """Exponents of the powers of ten that enclose ``values`` (at least one decade apart)."""
    lo = max(math.floor(math.log10(float(values.min()))), -307)  # 10.0**-324 is 0
    hi = math.ceil(math.log10(float(values.max())))
    return lo, max(hi, lo + 1)


def _log_ticks(lo: int, hi: int, place: Callable[[np.ndarray], np.ndarray]) -> list[tuple[int, int | None]]:
    """(pixel, exponent) of each decade's tick and (pixel, None) of the minor ticks 2-9 × 10^e
    between them, for the decades ``10^lo .. 10^hi``."""
    values = [(m * 10.0**e, e if m == 1 else None) for e in range(lo, hi) for m in range(1, 10)]
    values.append((10.0**hi, hi))
    at = place(np.array([v for v, _ in values]))
    return [(int(a), e) for a, (_, e) in zip(at, values, strict=True)]


def _power(exponent: int) -> str:
    return f'10<tspan dy="-6" font-size="9">{exponent}</tspan>'


def loglog_svg(
    series: Sequence[tuple[str, np.ndarray, np.ndarray]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    width: int = 600,
    height: int = 450,
) -> bytes:
    """Scatter of ``(label, x, y)`` series on log-log axes with decade ticks and a legend.

    Points with x <= 0 or y <= 0 cannot be placed on log axes and are left out, as are infinite
    and NaN ones; a series with no point left has no legend entry. Series are
    drawn in order as dots, squares, then dots again, in matplotlib's default colours.
    """
    left, right, top, bottom = 70, 20, 36, 50
    kept = []
    for label, x, y in series:
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
        kept.append((label, x[ok], y[ok]))
    xs = [x for _, x, _ in kept if len(x)]
    ys = [y for _, _, y in kept if len(y)]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" {_FONT} font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.0f}" y="22" text-anchor="middle" font-size="14">{escape(title)}</text>',
    ]
    x0, x1, y0, y1 = left, width - right, height - bottom, top  # pixel box (y grows downwards)
    out.append(f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" fill="none" stroke="black"/>')
    out.append(
        f'<text x="{(x0 + x1) / 2:.0f}" y="{height - 12}" text-anchor="middle">{escape(xlabel)}</text>'
    )
    out.append(
        f'<text x="16" y="{(y0 + y1) / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {(y0 + y1) / 2:.0f})">{escape(ylabel)}</text>'
    )
    if not xs:
        out.append(
            f'<text x="{(x0 + x1) / 2:.0f}" y="{(y0 + y1) / 2:.0f}" text-anchor="middle" fill="#666">'
            "nothing to show on log axes (no positive values)</text>"
        )
    else:
        xlo, xhi = _decades(np.concatenate(xs))
        ylo, yhi = _decades(np.concatenate(ys))

        def px(v: np.ndarray) -> np.ndarray:
            return np.rint(x0 + (np.log10(v) - xlo) / (xhi - xlo) * (x1 - x0)).astype(np.int64)

        def py(v: np.ndarray) -> np.ndarray:
            return np.rint(y0 - (np.log10(v) - ylo) / (yhi - ylo) * (y0 - y1)).astype(np.int64)

        ticks = []
        for at, e in _log_ticks(xlo, xhi, px):
            ticks.append(f"M{at} {y0}v{-3 if e is None else -6}")
            if e is not None:
                out.append(f'<text x="{at}" y="{y0 + 18}" text-anchor="middle">{_power(e)}</text>')
        for at, e in _log_ticks(ylo, yhi, py):
            ticks.append(f"M{x0} {at}h{3 if e is None else 6}")
            if e is not None:
                out.append(f'<text x="{x0 - 6}" y="{at + 4}" text-anchor="end">{_power(e)}</text>')
        out.append(f'<path d="{"".join(ticks)}" stroke="black" fill="none"/>')
    legend = 0
    for i, (label, x, y) in enumerate(kept):
        if not len(x):  # nothing to mark: no legend entry either
            continue
        colour, (cap, length) = COLOURS[i % len(COLOURS)], MARKS[i % len(MARKS)]
        style = f'stroke="{colour}" stroke-width="6" stroke-linecap="{cap}"'
        marks = np.unique(np.stack([px(x) - length // 2, py(y)], axis=1), axis=0)
        d = "".join(f"M{a} {b}h{length}" for a, b in marks.tolist())
        out.append(f'<path d="{d}" {style} stroke-opacity="0.7"/>')
        ly = y1 + 16 + 18 * legend
        legend += 1
        out.append(
            f'<path d="M{x1 - 120 - length // 2} {ly}h{length}" {style}/>'
            f'<text x="{x1 - 110}" y="{ly + 4}">{escape(label)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out).encode()


def _nice_ticks(top: float, most: int = 4) -> list[int]:
    """0 and multiples of a step of 1, 2 or 5 × 10^k, the last at or above ``top``: at most
    ``most`` + 1 ticks."""
    if top <= 0:
        return [0]
    power = 10 ** max(0, math.floor(math.log10(top / most)))
    step = next(m * power for m in (1, 2, 5, 10) if math.ceil(top / (m * power)) <= most)
    return list(range(0, math.ceil(top / step) * step + 1, step))


def hbar_panels_svg(
    panels: Sequence[tuple[str, Sequence[tuple[str, int, int]]]], *, title: str, xlabel: str
) -> bytes:
    """Side-by-side panels of horizontal bars, top to bottom: ``(panel title, [(label, value,
    dropped)])``; a bar whose ``dropped`` is non-zero is annotated ``-dropped`` in red."""
    row, label_w, pad, top, bottom = 20, 150, 70, 56, 44
    n_rows = max((len(rows) for _, rows in panels), default=0)
    panel_w = 420
    width, height = panel_w * max(len(panels), 1), top + row * n_rows + bottom
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" {_FONT} font-size="10">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.0f}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
    ]
    for i, (name, rows) in enumerate(panels):
        x0 = i * panel_w + label_w
        x1 = (i + 1) * panel_w - pad
        y0 = top + row * n_rows
        ticks = _nice_ticks(max((value for _, value, _ in rows), default=0))
        scale = (x1 - x0) / max(ticks[-1], 1)
        out.append(
            f'<text x="{(x0 + x1) / 2:.0f}" y="{top - 10}" text-anchor="middle" font-size="12">{escape(name)}</text>'
        )
        out.append(
            f'<rect x="{x0}" y="{top}" width="{x1 - x0}" height="{y0 - top}" fill="none" stroke="black"/>'
        )
        for tick in ticks:
            at = x0 + tick * scale
            out.append(
                f'<path d="M{at:.1f} {y0}v4" stroke="black"/>'
                f'<text x="{at:.1f}" y="{y0 + 15}" text-anchor="middle">{tick:,}</text>'
            )
        out.append(
            f'<text x="{(x0 + x1) / 2:.0f}" y="{height - 8}" text-anchor="middle" font-size="11">{escape(xlabel)}</text>'
        )
        for j, (label, value, dropped) in enumerate(rows):
            y = top + row * j
            out.append(f'<text x="{x0 - 6}" y="{y + 14}" text-anchor="end">{escape(label)}</text>')
            if value > 0:
                out.append(
                    f'<rect x="{x0}" y="{y + 3}" width="{value * scale:.1f}" height="{row - 6}" fill="{COLOURS[0]}"/>'
                )
            if dropped:
                out.append(
                    f'<text x="{x0 + value * scale + 3:.1f}" y="{y + 14}" fill="{COLOURS[3]}">-{dropped:,}</text>'
                )
    out.append("</svg>")
    return "\n".join(out).encode()
