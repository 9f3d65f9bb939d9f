import math

import numpy as np
import pytest

from netmodels import AlphaBeta
from netmodels.models import machines


def test_time_is_affine_in_size():
    m = AlphaBeta(2e-6, 1e-9)
    assert m.time(0) == pytest.approx(2e-6)
    assert m.time(1000) == pytest.approx(3e-6)
    np.testing.assert_allclose(m.time([0, 1000, 2000]), [2e-6, 3e-6, 4e-6])


def test_bandwidth_and_half_performance_length():
    m = AlphaBeta.from_latency_bandwidth(100e-6, 1.75e6)
    assert m.bandwidth == pytest.approx(1.75e6)
    # n1/2 is where the achieved bandwidth is half the asymptotic one
    assert m.effective_bandwidth(m.half_performance_length) == pytest.approx(m.bandwidth / 2)
    # ... and where the transfer term equals the latency
    assert m.beta * m.half_performance_length == pytest.approx(m.alpha)


def test_lsdyna_worked_example_matches_the_paper():
    # The paper prints 100 + 1266/1.75 = 823 µs and 250 + 1266/0.21 = 6280 µs.
    assert machines.LSDYNA_100MBIT.time(1266) * 1e6 == pytest.approx(823, abs=0.5)
    assert machines.LSDYNA_10MBIT.time(1266) * 1e6 == pytest.approx(6280, abs=2)
    # "latency roughly equivalent to 175 bytes" and "only 50 bytes"
    assert machines.LSDYNA_100MBIT.half_performance_length == pytest.approx(175)
    assert machines.LSDYNA_10MBIT.half_performance_length == pytest.approx(52.5)


def test_reference_sets_cite_their_source():
    for name in ("LSDYNA_100MBIT", "LSDYNA_10MBIT", "ORIGIN2000_INTRA", "ORIGIN2000_INTER"):
        m = getattr(machines, name)
        assert "LS-DYNA" in m.source and m.name


@pytest.mark.parametrize("kwargs, word", [
    (dict(alpha=-1, beta=1e-9), "alpha"),
    (dict(alpha=0, beta=1e-9), "alpha"),
    (dict(alpha=1e-6, beta=0), "beta"),
    (dict(alpha=math.nan, beta=1e-9), "alpha"),
    (dict(alpha=1e-6, beta=math.inf), "beta"),
    (dict(alpha="1", beta=1e-9), "alpha"),
    (dict(alpha=True, beta=1e-9), "alpha"),
])
def test_bad_parameters_name_the_parameter_and_range(kwargs, word):
    with pytest.raises(ValueError, match=rf"{word} must be .*> 0"):
        AlphaBeta(**kwargs)


@pytest.mark.parametrize("size", [-1, math.nan, math.inf, [1, -5], "10", [1, "2"], True, None])
def test_bad_sizes(size):
    with pytest.raises(ValueError, match="nbytes"):
        AlphaBeta(1e-6, 1e-9).time(size)


def test_bad_latency_bandwidth_constructor():
    with pytest.raises(ValueError, match="bandwidth"):
        AlphaBeta.from_latency_bandwidth(1e-6, -3)
    with pytest.raises(ValueError, match="latency"):
        AlphaBeta.from_latency_bandwidth(math.nan, 1e9)


def test_effective_bandwidth_rejects_zero_size():
    with pytest.raises(ValueError, match="nbytes"):
        AlphaBeta(1e-6, 1e-9).effective_bandwidth(0)
