"""The LogP family fitted to measurements: LogGP from Netgauge's parametrised round trips
(:func:`fit_prtt`, :func:`fit_results` for the benchmark's JSON), LogGOPS's copy overhead
(:func:`fit_copy_overhead`), and L and o from barrier times (:func:`fit_barrier_times`).
:func:`prtt_model` is the forward model the PRTT fit inverts.  Sizes in bytes, times in s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._check import positive, positive_int
from .logp import LogGP, LogP, wire_bytes
from .logp_barriers import barrier_time

#: a size's gap within this fraction above o_s(s) is taken as overhead-bound (see :func:`fit_prtt`)
GAP_MARGIN = 0.05
#: LogP's small-message parameters (o_s, o_r, L) come from the sizes up to this many bytes
SMALL_BYTES = 64


@dataclass(frozen=True)
class PRTTFit:
    """LogGP parameters from Netgauge's PRTT(n, d, s) measurements (seconds, s/B).

    ``g`` and ``G`` are NaN when no two sizes have a gap above their send overhead
    (``g_identified`` False): then ``g <= g_upper``, and nothing more can be said.
    ``L`` is constrained to ``L >= 0``: when what the round trip leaves after the
    overheads (``L_unconstrained``) is negative, ``L_identified`` is False and ``L = 0``.
    """

    L: float
    o_s: float
    o_r: float
    g: float
    G: float
    n: int
    sizes: tuple
    o_s_by_size: tuple      #: o_s(s) at each size: PLogP's send overhead
    gap_by_size: tuple      #: (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1) at each size
    g_identified: bool = True
    g_upper: float = math.inf   #: upper bound on g: the smallest gap measured (s)
    gap_sizes: tuple = ()       #: the sizes whose gap exceeds o_s(s): those g and G are fitted to
    L_by_size: tuple = ()       #: PRTT(1,0,s)/2 - o_s(s) - o_r(s) - (s-1)G at each size
    L_unconstrained: float = math.nan   #: the median of L_by_size over the small sizes, any sign (s)
    L_identified: bool = True   #: False when L_unconstrained < 0 (then L = 0)
    #: what the medians outweighed: (parameter, size in bytes, its estimate at that size, s)
    #: for every small size whose o_s, o_r or L lies more than OUTLIER_MADS scaled median
    #: absolute deviations from the median it takes part in
    outliers: tuple = ()
    #: the least-squares slope of the gaps, any sign (s/B): where it is negative (gaps that do not
    #: grow over the sizes measured, as on one node at up to 16 KiB) G = 0 and g is their mean
    G_unconstrained: float = math.nan

    def dropped(self) -> list[str]:
        """What the fit left out, one sentence each (empty when nothing): the sizes whose
        estimate the medians outweighed, and the sizes whose gap is an overhead (not g)."""
        lines = [f"{name} at {size:g} B is {value * 1e6:.3f} µs, an outlier the median of the sizes "
                 f"up to {SMALL_BYTES} B leaves out" for name, size, value in self.outliers]
        if self.G_unconstrained < 0:
            lines.append(f"G: the gaps fall with size (slope {self.G_unconstrained * 1e9:.4f} ns/B), so G = 0 "
                         f"and g is their mean; no per-byte gap is seen at these sizes")
        left = [s for s in self.sizes if s not in self.gap_sizes]
        if left:
            lines.append(f"g and G: the gaps at {', '.join(f'{s:g}' for s in left)} B do not exceed o_s "
                         f"(they measure the send overhead) and are not fitted")
        return lines

    def model(self, P: int = 2) -> LogGP:
        """The fitted machine as :class:`LogGP`: negative estimates clipped to tiny positives,
        and g = G = 0 when they are not identified (sends are then spaced by o_s anyway)."""
        g, G = (0.0 if math.isnan(v) else max(v, 0.0) for v in (self.g, self.G))
        return LogGP(self.L, max(self.o_s, 1e-12), g, P,
                     o_r=max(self.o_r, 1e-12), G=G, name="PRTT fit")


def fit_prtt(sizes, prtt_1_0, prtt_n_0, prtt_n_d, n: int, d, o_r, margin: float = GAP_MARGIN) -> PRTTFit:
    """Fit LogGP to PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) as Netgauge does (Hoefler et al. 2007).

    PRTT(n, d, s) is the time of one "parametrised round trip": the client sends n
    messages of s bytes with a pause of d seconds after each send, the server answers
    with one message when all n have arrived.  Under LogGP, with the course's
    ``(s - 1) G`` convention (:class:`LogGP`) and gap(s) = max(o_s(s), g + (s-1)G):

    * PRTT(1,0,s) = 2 (o_s + L + o_r + (s-1) G) (a plain round trip);
    * PRTT(n,0,s) = PRTT(1,0,s) + (n - 1) gap(s): back-to-back sends go one gap apart;
    * PRTT(n,d,s) = PRTT(1,0,s) + (n - 1)(o_s + d) when d >= gap(s): o_s(s) follows.

    Where o_s(s) >= g + (s-1)G (the slides' o > g) the gap measures o_s, not g: so g and
    G are the intercept and slope of the least-squares line through (s - 1, gap(s)) over
    the sizes whose gap exceeds ``(1 + margin) o_s(s)`` only (``margin`` absorbs the
    noise of two measurements of one quantity).  With fewer than two such sizes g and G
    are not identified (NaN): every gap is then an overhead, and g <= min gap(s).  A line
    that falls with size is constrained as L is: G = 0 and g the mean gap (the least squares
    with G >= 0), the slope kept in ``G_unconstrained``.

    ``o_r`` (s, scalar or one per size) is measured directly (the time of a receive
    whose message has already arrived); ``d`` is a scalar or one per size.  The small-
    message parameters are medians over the sizes up to :data:`SMALL_BYTES` (the
    smallest size if none), so that one cold or noisy size cannot spoil them: o_s and
    o_r, and L, what the round trip leaves, PRTT(1,0,s)/2 - o_s(s) - o_r(s) - (s-1)G
    (G taken as 0 if not identified).  A negative estimate means that the overheads
    measured alone exceed half the round trip: they overlap in a round trip (e.g. through
    shared memory, or on a loaded machine), and latency and overhead cannot be separated.
    The fit then reports L as not identifiable (``L_identified`` False) and returns the
    constrained estimate L = 0 (the least-squares L >= 0 of the residual's median), the
    negative value in ``L_unconstrained``.  Sizes in bytes, times in s.
    """
    s = np.asarray(sizes, dtype=float)
    n = positive_int("n", n, minimum=2)
    margin = positive("margin", margin, allow_zero=True)
    arrays = [np.broadcast_to(np.asarray(a, dtype=float), s.shape) for a in (prtt_1_0, prtt_n_0, prtt_n_d, d, o_r)]
    if s.ndim != 1 or s.size < 2 or np.unique(s).size < 2:
        raise ValueError("sizes must be a 1-D sequence with at least 2 distinct sizes")
    if np.any(s < 0) or any(np.any(~np.isfinite(a) | (a < 0)) for a in arrays):
        raise ValueError("sizes and times must be finite and >= 0")
    r1, rn0, rnd, dd, orr = arrays
    x = wire_bytes(s)
    gap = (rn0 - r1) / (n - 1)
    o_s = (rnd - r1) / (n - 1) - dd
    above = gap > (1 + margin) * o_s              # the gap is g + (s-1)G here, not o_s
    identified = np.unique(x[above]).size >= 2
    G, g = np.polyfit(x[above], gap[above], 1) if identified else (math.nan, math.nan)
    G_raw = float(G)
    if identified and G < 0:                      # gaps that fall with size: G = 0 is the least squares G >= 0
        G, g = 0.0, float(np.mean(gap[above]))
    L_s = r1 / 2 - o_s - orr - x * (G if identified else 0.0)
    small = (s <= SMALL_BYTES) | (s == s.min())
    L_raw = float(np.median(L_s[small]))
    outliers = tuple((name, float(size), float(v)) for name, values in (("o_s", o_s), ("o_r", orr), ("L", L_s))
                     for size, v in zip(s[small], values[small]) if _outlying(v, values[small]))
    return PRTTFit(max(L_raw, 0.0), float(np.median(o_s[small])), float(np.median(orr[small])),
                   float(g), float(G), n, tuple(s), tuple(o_s), tuple(gap), bool(identified),
                   float(gap.min()), tuple(s[above]), tuple(L_s), L_raw, L_raw >= 0, outliers, G_raw)


#: how far from the median (in scaled median absolute deviations, 1.4826 MAD, the normal
#: distribution's standard deviation) an estimate lies before :func:`fit_prtt` names it
OUTLIER_MADS = 3.0


def _outlying(value: float, values: np.ndarray) -> bool:
    """``value`` lies more than :data:`OUTLIER_MADS` scaled MADs from the median of ``values``
    (and more than 1 % of it, so that identical estimates name nothing)."""
    med = np.median(values)
    spread = max(1.4826 * np.median(np.abs(values - med)), 0.01 * abs(med))
    return values.size >= 3 and abs(value - med) > OUTLIER_MADS * spread


def fit_results(results: list[dict], n: int, statistic: str = "min_s") -> PRTTFit:
    """:func:`fit_prtt` of the per-size ``results`` of ``python -m mpi_exercises logp`` (its
    JSON's "results"; ``n`` is its ``parameters["n"]``), on their minima (``"min_s"``, the
    default: noise only adds time) or medians (``"median_s"``).  The one LogP fit of a
    measurement: the benchmark's report, the chapters and the default machine use it."""
    col = lambda key: [r[key][statistic] for r in results]  # noqa: E731
    return fit_prtt([r["bytes"] for r in results], col("prtt_1_0"), col("prtt_n_0"), col("prtt_n_d"), n,
                    [r["d_s"] for r in results], col("o_r"))


def fit_copy_overhead(nbytes, o_s, o_r) -> float:
    """LogGOPS's ``O`` (s/B) from overheads measured per size: the least-squares slope of the
    mean of ``o_s`` and ``o_r`` (s, one per size) against ``(m - 1)`` bytes (the course's
    convention, :meth:`LogGOPS.copy_time`), clipped at 0 (an overhead that does not grow with
    size has no copy to charge).  Needs at least 2 distinct sizes."""
    m = np.asarray(nbytes, dtype=float)
    o = (np.asarray(o_s, dtype=float) + np.asarray(o_r, dtype=float)) / 2
    if m.ndim != 1 or m.shape != o.shape or np.unique(m).size < 2 or not np.all(np.isfinite(o)) or np.any(m < 0):
        raise ValueError("nbytes, o_s and o_r must be 1-D, of one length, finite, sizes >= 0 and at least "
                         "2 of them distinct")
    slope = np.polyfit(np.maximum(m - 1.0, 0.0), o, 1)[0]
    return float(max(slope, 0.0))


def prtt_model(params: LogGP, n: int, d: float, nbytes) -> np.ndarray:
    """PRTT(n, d, s) predicted by LogGP (s): the forward model :func:`fit_prtt` inverts.

    Uses :meth:`LogGP.wire_time`, the ``(s - 1) G`` of one s-byte message."""
    wire = np.asarray(params.wire_time(nbytes))
    rtt = 2 * (params.o_s + params.L + params.o_r + wire)
    f = np.maximum(params.o_s, params.g + wire)
    return rtt + (n - 1) * np.maximum(f, params.o_s + d)


@dataclass(frozen=True)
class BarrierFit:
    """LogP parameters fitted to measured barrier times, and the predictions (s)."""

    L: float
    o: float
    rows: tuple          #: (algorithm, P, measured_s, predicted_s)
    rms_relative: float  #: root-mean-square relative error over the rows fitted

    def params(self, P: int) -> LogP:
        return LogP(self.L, self.o, 0.0, P, name="fit to barrier times")


def fit_barrier_times(measured, options=None) -> BarrierFit:
    """Fit L and o (g <= o, so g drops out) to barrier times by relative least squares.

    ``measured`` is a sequence of ``(algorithm, P, seconds)``; ``options`` maps an
    algorithm to the keyword options of :func:`barrier_time` (e.g. a combining tree's
    ``fan_in``).  Uses ``scipy.optimize.least_squares`` with L, o >= 0.
    """
    from scipy.optimize import least_squares

    options = options or {}
    rows = [(a, positive_int("P", P), positive("seconds", t)) for a, P, t in measured]
    if len(rows) < 2:
        raise ValueError("measured must hold at least 2 (algorithm, P, seconds) rows to fit L and o")

    def predict(x):
        L, o = x
        return np.array([barrier_time(a, LogP(L, max(o, 1e-15), 0.0, P), **options.get(a, {}))
                         for a, P, _ in rows])

    t = np.array([r[2] for r in rows])
    scale = float(np.median(t))
    res = least_squares(lambda x: (predict(x * scale) - t) / t, x0=[0.05, 0.005],
                        bounds=([0, 1e-9], [np.inf, np.inf]))
    L, o = res.x * scale
    pred = predict(res.x * scale)
    return BarrierFit(float(L), float(o), tuple((a, P, m, float(p)) for (a, P, m), p in zip(rows, pred)),
                      float(np.sqrt(np.mean(((pred - t) / t) ** 2))))
