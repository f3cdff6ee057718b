"""Our power-law fit (corpus.graph.network.powerlaw_fit) against the ``powerlaw`` package (Alstott et al.).

arxiv-as-a-dataset fitted Table 2's exponents with ``powerlaw``; ours must give the same
exponent (1e-3 relative) and the same x_min on degree sequences shaped like citation
graphs: a Poisson or lognormal body below a discrete power-law tail.

The package is asked for what our fit computes, the exact discrete maximum likelihood
with α searched in (1, 10): ``estimate_discrete=False`` and ``parameter_ranges``. Its
bare defaults differ on purpose: powerlaw 2.0 searches α only in (0, 3), so a tail
steeper than 3 is reported as some flatter part of the body, and for x_min >= 10 it
uses Clauset et al.'s closed-form approximation (eq. 3.7, about 1 % off at x_min = 10).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from corpus.graph.network import powerlaw_fit

powerlaw = pytest.importorskip("powerlaw")


def degree_sequence(seed: int, n: int, alpha: float, xmin: int, body: str) -> np.ndarray:
    """``n`` degrees: 70 % a body below ``xmin``, 30 % a discrete power law from ``xmin`` on
    (Clauset et al. eq. D.6), plus zeros (isolated or never-cited papers), shuffled."""
    rng = np.random.default_rng(seed)
    n_tail = int(0.3 * n)
    tail = np.floor((xmin - 0.5) * (1 - rng.random(n_tail)) ** (-1 / (alpha - 1)) + 0.5)
    if body == "poisson":
        low = rng.poisson(xmin / 2, n - n_tail)
    else:
        low = np.floor(rng.lognormal(math.log(1 + xmin / 3), 0.6, n - n_tail))
    low = low[low < xmin]
    out = np.concatenate([np.zeros(n // 10), low, tail]).astype(np.int64)
    return rng.permutation(out)


CASES = [
    # (seed, n, alpha, xmin of the generator, body)
    (1, 1_000, 2.0, 3, "poisson"),
    (2, 1_000, 3.5, 4, "lognormal"),
    (3, 10_000, 2.5, 6, "lognormal"),
    (4, 10_000, 3.0, 12, "poisson"),
    (5, 10_000, 2.2, 20, "lognormal"),
    (6, 100_000, 2.0, 8, "poisson"),
    (7, 100_000, 2.8, 14, "lognormal"),
    (8, 100_000, 3.5, 5, "poisson"),
]


@pytest.mark.parametrize(("seed", "n", "alpha", "xmin", "body"), CASES)
def test_alpha_and_xmin_agree_with_powerlaw_package(seed, n, alpha, xmin, body):
    degrees = degree_sequence(seed, n, alpha, xmin, body)
    ours = powerlaw_fit(degrees)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zeros dropped, optimiser notes
        ref = powerlaw.Fit(
            degrees,
            discrete=True,
            estimate_discrete=False,
            parameter_ranges={"alpha": [1, 10]},
            verbose=0,
        )
        ref_alpha = ref.power_law.alpha
    assert ours.xmin == int(ref.xmin)
    assert ours.alpha == pytest.approx(ref_alpha, rel=1e-3)
    assert ours.n_tail == int(ref.n_tail)
    # and both recover the generator's exponent (a fit that agreed on nonsense would not do)
    assert ours.alpha == pytest.approx(alpha, rel=0.1)


def test_fixed_xmin_agrees_with_powerlaw_package():
    degrees = degree_sequence(9, 20_000, 2.4, 7, "poisson")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = powerlaw.Fit(degrees, discrete=True, xmin=7, estimate_discrete=False, verbose=0)
        ref_alpha = ref.power_law.alpha
    assert powerlaw_fit(degrees, xmin=7).alpha == pytest.approx(ref_alpha, rel=1e-3)
