"""SIN as Java's Math.sin (fdlibm) computes it, which is not always the correctly rounded
value numpy gives."""

from __future__ import annotations

import numpy as np

from runtime.functions.java_math import java_sin


def test_fdlibm_last_digit() -> None:
    # Flink 2.3: SIN(2.5) = 0.5984721441039564 (correctly rounded: ...565)
    out = java_sin(np.array([2.5, -2.5]))
    assert out.tolist() == [0.5984721441039564, -0.5984721441039564]


def test_all_ranges_and_specials() -> None:
    x = np.array([0.0, -0.0, 1e-10, 0.5, 1.5707963267948966, 2.0, 123456.789, 1e6, 1e308, np.inf, np.nan])
    out = java_sin(x)
    assert out[0] == 0.0 and np.signbit(out[1])
    assert out[2] == 1e-10
    assert out[4] == 1.0
    assert out[8] == 0.4533964905016491  # huge argument: exact reduction
    assert np.isnan(out[9]) and np.isnan(out[10])
    # within one ulp of the correctly rounded value everywhere
    r = np.random.default_rng(7).uniform(-1e7, 1e7, 100_000)
    assert np.max(np.abs(java_sin(r) - np.sin(r)) / np.spacing(np.abs(np.sin(r)))) <= 1.0


def test_vectorized_huge_argument_reduction_equals_the_exact_one() -> None:
    """|x| >= 2^19 * pi/2: the limb-wise reduction gives the exact reduction's quadrant and
    correctly rounded remainder, so SIN gives the same doubles."""
    from runtime.functions.java_math import _reduce_large, _reduce_large_vec

    rng = np.random.default_rng(11)
    x = np.concatenate(
        [
            rng.uniform(823_550.0, 1e9, 1000),
            10 ** rng.uniform(6, 308, 1000),
            np.array([823_550.2, 2.0**52, 2.0**1023, 1.7976931348623157e308, 6381956970095103.0 * 2.0**797]),
        ]
    )
    x = x * np.where(rng.random(len(x)) < 0.5, -1.0, 1.0)
    n, y0, y1 = _reduce_large_vec(x)
    exact = [_reduce_large(float(v)) for v in x]
    assert n.tolist() == [e[0] for e in exact]
    assert y0.tolist() == [e[1] for e in exact]
    assert np.allclose(y1, [e[2] for e in exact], rtol=1e-9, atol=0)
