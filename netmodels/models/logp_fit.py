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
#: a size is long, in LogGP's sense, when its gap is at least this many times the smallest gap
#: measured: its bytes cost at least as much as the message itself ((s - 1) G >= g, as g is at most
#: the smallest gap); G is the gap per byte of those sizes (see :func:`fit_prtt`)
LONG_GAP_FACTOR = 2.0
#: G comes from the long sizes only when the PRTT measured a message of more than this many
#: bytes (the reports' class of long messages, above 64 KiB); a PRTT up to 16 KiB (the logp
#: benchmark's default sizes, lab 3, predict's calibration files before it measured long
#: messages) keeps one line for g and G, and fits as it always did
LONG_BYTES = 65536


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
    L_by_size: tuple = ()       #: PRTT(1,0,s)/2 - o_s(s) - o_r(s) - (s-1)G_short at each size
    L_unconstrained: float = math.nan   #: the median of L_by_size over the small sizes, any sign (s)
    L_identified: bool = True   #: False when L_unconstrained < 0 (then L = 0)
    #: what the medians outweighed: (parameter, size in bytes, its estimate at that size, s)
    #: for every small size whose o_s, o_r or L lies more than OUTLIER_MADS scaled median
    #: absolute deviations from the median it takes part in
    outliers: tuple = ()
    #: the least-squares slope of the gaps G is fitted to, any sign (s/B): where it is negative
    #: (gaps that do not grow over the sizes measured, as on one node at up to 16 KiB) G = 0 and
    #: g is their mean
    G_unconstrained: float = math.nan
    #: the sizes G is fitted to: the long sizes when at least two were measured, else ``gap_sizes``
    G_sizes: tuple = ()
    #: the slope of the line g is fitted to (s/B, >= 0): the short messages' time per byte (G
    #: itself when G and g come from one line)
    G_short: float = math.nan
    #: True when G is the gap per byte of long messages (at least two long sizes measured);
    #: False when g and G are one line over the gap-bound sizes (Netgauge's fit)
    G_long: bool = False

    def dropped(self) -> list[str]:
        """What the fit left out, one sentence each (empty when nothing): the sizes whose
        estimate the medians outweighed, and the sizes whose gap is an overhead (not g)."""
        lines = [f"{name} at {size:g} B is {value * 1e6:.3f} µs, an outlier the median of the sizes "
                 f"up to {SMALL_BYTES} B leaves out" for name, size, value in self.outliers]
        if self.G_unconstrained < 0:
            lines.append(f"G: the gaps fall with size (slope {self.G_unconstrained * 1e9:.4f} ns/B), so G = 0 "
                         f"and g is their mean; no per-byte gap is seen at these sizes")
        left = [s for s in self.sizes if s not in self.gap_sizes and s not in self.G_sizes]
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

    G is, as LogGP defines it (Alexandrov et al. 1995), the gap per byte of *long* messages:
    the least-squares slope of (s - 1, gap(s)) over the long sizes, those whose gap is at
    least :data:`LONG_GAP_FACTOR` times the smallest gap (their bytes cost more than the
    message: ``(s-1) G >= g``), when at least two were measured and the largest size exceeds
    :data:`LONG_BYTES` (``G_sizes``; predict's PRTT goes to 2 MiB, so on one node G comes from
    32 KiB, 256 KiB and 2 MiB).  A long gap counts
    whatever the send overhead measured at its size: LogGP's o is one number, the small
    messages' (a send overhead that grows with size is LogGOPS's O, :func:`fit_copy_overhead`).
    g is the gap of short messages: where o_s(s) >= g + (s-1)G (the slides' o > g) the gap
    measures o_s, not g, so g is the intercept of the least-squares line over the sizes that
    are not long and whose gap exceeds ``(1 + margin) o_s(s)`` (``gap_sizes``; ``margin``
    absorbs the noise of two measurements of one quantity), its slope ``G_short``; with fewer
    than two of them, the intercept of G's line.  Otherwise (a PRTT up to 16 KiB, as the logp
    benchmark's default sizes and calibration files written before predict measured long
    ones) g and G are one line over the sizes whose gap exceeds
    ``(1 + margin) o_s(s)``, Netgauge's fit, and G is then the short messages' slope.  With
    fewer than two sizes for either line g and G are not identified (NaN): every gap is then
    an overhead, and g <= min gap(s).  A line that falls with size is constrained as L is:
    G = 0 and g the mean gap (the least squares with G >= 0), the slope kept in
    ``G_unconstrained``.

    ``o_r`` (s, scalar or one per size) is measured directly (the time of a receive
    whose message has already arrived); ``d`` is a scalar or one per size.  The small-
    message parameters are medians over the sizes up to :data:`SMALL_BYTES` (the
    smallest size if none), so that one cold or noisy size cannot spoil them: o_s and
    o_r, and L, what the round trip leaves, PRTT(1,0,s)/2 - o_s(s) - o_r(s) - (s-1)G_short
    (taken as 0 if not identified).  A negative estimate means that the overheads
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
    long_ = gap >= LONG_GAP_FACTOR * gap.min() if gap.min() > 0 else np.zeros(s.shape, bool)
    if s.max() > LONG_BYTES and np.unique(x[long_]).size >= 2:     # LogGP's G: the gap per byte of long messages
        short = above & ~long_
        G, g_long = _line(x[long_], gap[long_])
        G_short, g = _line(x[short], gap[short]) if np.unique(x[short]).size >= 2 else (G, g_long)
        G_raw, identified, g_sizes, G_sizes = float(np.polyfit(x[long_], gap[long_], 1)[0]), True, short, long_
        G_long = True
        if not np.unique(x[short]).size >= 2:
            g_sizes = long_
    else:                                         # one line over the gap-bound sizes (Netgauge's)
        identified = np.unique(x[above]).size >= 2
        G, g = _line(x[above], gap[above]) if identified else (math.nan, math.nan)
        G_raw = float(np.polyfit(x[above], gap[above], 1)[0]) if identified else math.nan
        G_short, g_sizes, G_sizes, G_long = G, above, above, False
    L_s = r1 / 2 - o_s - orr - x * (G_short if identified else 0.0)      # small messages: the short slope
    small = (s <= SMALL_BYTES) | (s == s.min())
    L_raw = float(np.median(L_s[small]))
    outliers = tuple((name, float(size), float(v)) for name, values in (("o_s", o_s), ("o_r", orr), ("L", L_s))
                     for size, v in zip(s[small], values[small]) if _outlying(v, values[small]))
    return PRTTFit(max(L_raw, 0.0), float(np.median(o_s[small])), float(np.median(orr[small])),
                   float(g), float(G), n, tuple(s), tuple(o_s), tuple(gap), bool(identified),
                   float(gap.min()), tuple(s[g_sizes]), tuple(L_s), L_raw, L_raw >= 0, outliers, G_raw,
                   tuple(s[G_sizes]), float(G_short), G_long)


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``(slope, intercept)`` of the least-squares line with slope >= 0: where the free line
    falls, slope 0 and the mean of ``y``."""
    slope, intercept = np.polyfit(x, y, 1)
    return (float(slope), float(intercept)) if slope >= 0 else (0.0, float(np.mean(y)))


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


def fit_copy_overhead(nbytes, o_s, sizes=None, below: float = math.inf) -> float:
    """LogGOPS's ``O`` (s/B) from the PRTT's send overhead per size: the least-squares slope of
    ``o_s`` (s, one per size, :attr:`PRTTFit.o_s_by_size`) against ``(m - 1)`` bytes (the
    course's convention, :meth:`LogGOPS.copy_time`), clipped at 0 (an overhead that does not
    grow with size has no copy to charge), over the sizes in ``sizes`` (None: all) smaller than
    ``below`` (B): there the send overhead is CPU time and not waiting.

    The basis is LogGOPS itself (Hoefler, Schneider & Lumsdaine, HPDC 2010, and LogGOPSim's
    rules, ``LogGOPSim.cpp``): a send keeps its CPU ``o + (m-1) O``, a receive ``o + max((m-1)
    O, (m-1) G)``.  So Netgauge's send overhead o_s(m), a PRTT(n, d, m) with a pause longer
    than the gap (Hoefler, Lichei & Rehm 2007), grows by exactly O per byte, while the receive
    overhead o_r(m) grows by max(O, G) and says nothing of O alone (its mean with o_s, used
    before, is not O).  A send is CPU time where back-to-back sends are spaced by more than
    it (the gap-bound sizes of :func:`fit_prtt`, ``gap_sizes``) and below the protocol switch
    (``below``: the ping-pong's); where the gap is the send overhead itself, the send lasted
    as long as its message took to leave: it waited for the receiver (rendezvous, or a full
    shared-memory queue; on one node with MPICH from 16 KiB on, o_s(m) exceeds the one-way
    time).  Needs at least 2 distinct sizes there (ValueError otherwise)."""
    m = np.asarray(nbytes, dtype=float)
    o = np.asarray(o_s, dtype=float)
    if m.ndim != 1 or m.shape != o.shape or not np.all(np.isfinite(o)) or np.any(m < 0):
        raise ValueError("nbytes and o_s must be 1-D, of one length, finite, sizes >= 0")
    below = float(below)
    if not below > 0:
        raise ValueError(f"below must be > 0 bytes (inf: no switch), got {below!r}")
    keep = m < below
    if sizes is not None:
        keep &= np.isin(m, np.asarray(sizes, dtype=float))
    x = np.maximum(m[keep] - 1.0, 0.0)
    if np.unique(x).size < 2:                      # 0 and 1 B carry no byte beyond the first: one point
        raise ValueError("O needs at least 2 distinct sizes (beyond 1 B) whose send overhead is CPU time "
                         f"(gap-bound, below {below:g} B); got {', '.join(f'{v:g}' for v in m[keep]) or 'none'}")
    slope = np.polyfit(x, o[keep], 1)[0]
    return float(max(slope, 0.0))


def prtt_model(params: LogGP, n: int, d: float, nbytes) -> np.ndarray:
    """PRTT(n, d, s) predicted by LogGP (s): the forward model :func:`fit_prtt` inverts.

    Uses :meth:`LogGP.wire_time`, the ``(s - 1) G`` of one s-byte message; for LogGOPS (eager
    messages) also its ``(s - 1) O`` (:meth:`LogGOPS.copy_time`): a send keeps the CPU
    ``o_s + (s-1) O`` and one message takes ``o_s + L + o_r + max((s-1) O, (s-1) G)``, as in
    LogGOPSim."""
    wire = np.asarray(params.wire_time(nbytes))
    copy = np.asarray(params.copy_time(nbytes)) if hasattr(params, "copy_time") else 0.0
    rtt = 2 * (params.o_s + params.L + params.o_r + np.maximum(wire, copy))
    f = np.maximum(params.o_s + copy, params.g + wire)
    return rtt + (n - 1) * np.maximum(f, params.o_s + copy + d)


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
