"""Reference machine parameters from the papers, each with the paper and table it comes from.

Units are SI: seconds, bytes, bytes per second.  The papers' "Mbytes/sec" is
10**6 bytes per second (LS-DYNA paper: "megabytes per second, or equivalently,
bytes per microsecond").  A number from a paper is typed here once and never in
a notebook.
"""

from __future__ import annotations

from dataclasses import dataclass

from .alphabeta import AlphaBeta
from .bsp import BSP

US = 1e-6  #: one microsecond in seconds
MB = 1e6   #: one megabyte (10**6 bytes), as the papers use it

LSDYNA = "Wainscott & Wang, Message Passing and Advanced Computer Architectures (LS-DYNA/MPP)"


@dataclass(frozen=True)
class Range:
    """A measured range as a paper prints it, e.g. latency 95-120 µs (SI units)."""

    low: float
    high: float

    @property
    def middle(self) -> float:
        return 0.5 * (self.low + self.high)


#: Table 1 of the LS-DYNA paper as printed: latency (s) and bandwidth (B/s) ranges
#: measured on 12 workstations behind one half-duplex switch at 100 and 10 Mbit/s.
LSDYNA_TABLE1 = {
    "100 Mbit": {"latency": Range(95 * US, 120 * US), "bandwidth": Range(1.75 * MB, 1.78 * MB)},
    "10 Mbit": {"latency": Range(250 * US, 275 * US), "bandwidth": Range(0.21 * MB, 0.21 * MB)},
}

def _lsdyna(latency_us: float, mbytes_per_s: float, name: str, where: str) -> AlphaBeta:
    """An α-β machine of the LS-DYNA paper from its latency (µs) and bandwidth (MB/s) as printed."""
    return AlphaBeta.from_latency_bandwidth(latency_us * US, mbytes_per_s * MB, name=name, source=f"{LSDYNA}, {where}")


#: 100 Mbit/s half-duplex switch.  α = 100 µs and 1/β = 1.75 MB/s are the values the
#: paper itself uses in its worked example ("100 + 1266/1.75 = 823 µs"); Table 1 prints
#: the ranges 95-120 µs and 1.75-1.78 MB/s (see ``LSDYNA_TABLE1``).
LSDYNA_100MBIT = _lsdyna(100, 1.75, "100 Mbit Ethernet (LS-DYNA)", "Table 1 and the worked example below Table 2")

#: The same switch reset to 10 Mbit/s.  α = 250 µs and 1/β = 0.21 MB/s as in the paper's
#: worked example ("250 + 1266/0.21 = 6280 µs"); Table 1 prints 250-275 µs and 0.21 MB/s.
LSDYNA_10MBIT = _lsdyna(250, 0.21, "10 Mbit Ethernet (LS-DYNA)", "Table 1 and the worked example below Table 2")

#: Two SGI Origin 2000 under LAM/MPI, between processors of one node: "latency was
#: 10-15 microseconds, with bandwidth of about 15Mb/s".  Middle of the latency range;
#: the paper writes "Mb/s", read here as MB/s like its Table 1 (the text is ambiguous).
ORIGIN2000_INTRA = _lsdyna(12.5, 15, "Origin 2000, within a node (LAM/MPI)", "section Testing (middle of 10-15 µs)")

#: The same Origin 2000 pair, between the two nodes: "latency was 300 microseconds,
#: and bandwidth was about 2.5 Mb/sec" (read as MB/s, see ``ORIGIN2000_INTRA``).
ORIGIN2000_INTER = _lsdyna(300, 2.5, "Origin 2000, between nodes (LAM/MPI)", "section Testing")

#: Message statistics of the 128,000-element crash model on 12 processors
#: (LS-DYNA paper, section "Bandwidth and Latency"): per processor and cycle.
LSDYNA_MESSAGES = {
    "messages_per_cycle": 28,
    "mean_bytes": 1266,
    "fraction_below_8k": 0.99,   # "over 99%"
    "fraction_below_1k": 0.67,   # "almost 67%"
    "collectives_per_cycle": 9,
    "collective_bytes": (50, 100),
}

#: Table 2 of the LS-DYNA paper: speed in nanoseconds per zone cycle (NZC, proportional to
#: run time) of two crash models on 12 processors, per network.
LSDYNA_TABLE2_NZC = {
    "28,000 elements": {"100 Mbit": 6990, "10 Mbit": 15956},
    "128,000 elements": {"100 Mbit": 2965, "10 Mbit": 4239},
}

#: Table 3 of the LS-DYNA paper: NZC of the 128,000-element model on the Origin 2000 pair,
#: with standard and multilevel message passing (None: not run).
LSDYNA_TABLE3_NZC = {
    1: {"standard": 36677, "multilevel": None},
    4: {"standard": 11590, "multilevel": 11547},
    8: {"standard": 5161, "multilevel": 5134},
    12: {"standard": 3971, "multilevel": 3825},
    14: {"standard": 3544, "multilevel": 3475},
}

#: The paper's printed "Speedup" column of Table 3 (percent), kept to compare with.
LSDYNA_TABLE3_PRINTED_GAIN_PERCENT = {4: 0.4, 8: 0.5, 12: 3.8, 14: 2.0}

# ---------------------------------------------------------------- Littlefield 1992 (DELTA)
from .nbl import NBLModel  # noqa: E402  (kept next to the entries that use it)

LITTLEFIELD = ("Littlefield, Modeling Node Bandwidth Limits and Their Effect on Vector "
               "Combining Algorithms, PNL-SA-20425, 1992")

#: Intel Touchstone DELTA, software X020, csend/crecv, link speed deliberately halved
#: during the measurements (section 7.2): α = 54 µs, β = 1.54 µs per double
#: (5.2 MB/s), c2 = 0.25 µs per element (4.0 MFLOPS), c3 = 0.37 µs (5.3 MFLOPS); the
#: model takes β, c2 and c3 per byte (/ 8 bytes per double).  f(L) = 1 (the paper's
#: standard model) unless given: ``dataclasses.replace(DELTA, f=nbl.FITTED_DELTA)``.
DELTA = NBLModel(alpha=54 * US, beta=1.54 * US / 8, c2=0.25 * US / 8, c3=0.37 * US / 8, elem_bytes=8,
                 name="Intel Touchstone DELTA (X020, halved links)",
                 source=LITTLEFIELD + ", section 7.2 (DELTA System Parameters)")

#: Table 1 of Littlefield 1992: test-jig times T (s) on a 3x3 mesh, the centre node receiving
#: from one neighbour (L = 1) or exchanging with 1, 2, 3 neighbours (L = 2, 4, 6), for blocks
#: of S doubles.  ``printed_f`` holds the f(L) columns as printed (one per pair of rows).
DELTA_TABLE1 = {
    "S": (60, 120, 300, 600),
    "T": {1: (74 * US, 139 * US, 293 * US, 525 * US),
          2: (129 * US, 235 * US, 502 * US, 942 * US),
          4: (259 * US, 398 * US, 833 * US, 1733 * US),
          6: (345 * US, 575 * US, 1222 * US, 2578 * US)},
    "printed_dT": {1: (65 * US, 154 * US, 232 * US), 2: (106 * US, 267 * US, 440 * US),
                   4: (139 * US, 435 * US, 900 * US), 6: (230 * US, 647 * US, 1356 * US)},
    "printed_f": {2: (1.6, 1.7, 1.9), 4: (2.1, 2.8, 3.9), 6: (3.8, 4.2, 5.8)},
    "source": LITTLEFIELD + ", Table 1",
}

#: The paper's experiments (section 4.2): meshes W x H and vector lengths N (elements).
DELTA_MESHES = ((4, 4), (16, 16), (16, 32))
DELTA_VECTOR_LENGTHS = (10**2, 10**3, 10**4, 10**5, 5 * 10**5)
DELTA_BLOCK_RANGE = (20, 600)

HOEFLER2005 = ("Höfler & Rehm, A practical Approach to the Rating of Barrier Algorithms using the "
               "LogP Model and Open MPI (slides, 2005)")

#: The slides' "Benchmark Results" table: barrier times (s) on 128 and 256 nodes (Fast
#: Ethernet, Extreme Black Diamond switch).  "open_mpi" is Open MPI's own barrier; the
#: slides do not say which algorithm it used nor the combining tree's fan-in.
HOEFLER2005_BARRIER_TIMES = {
    "central_counter": {128: 4594.50 * US, 256: 4909.67 * US},
    "combining_tree": {128: 4009.79 * US, 256: 4343.63 * US},
    "tournament": {128: 3642.54 * US, 256: 4378.77 * US},
    "dissemination": {128: 1904.57 * US, 256: 1977.12 * US},
    "open_mpi": {128: 3559.88 * US, 256: 4226.88 * US},
}

# ------------------------------------------- LS-DYNA paper, "Multilevel Message Passing"

#: Section "Multilevel Message Passing": 4 nodes of 4 processors, every processor sharing
#: data with every other.  Standard: "240 messages ... 192 of them passed between nodes,
#: while 48 were internal"; multilevel: "48+84=132 (3*16 ... plus 4*3*7 ...)", "only 12
#: messages pass between nodes, with 120 being internal messages".
LSDYNA_MULTILEVEL_EXAMPLE = {
    "nodes": 4, "ppn": 4,
    "standard": {"total": 240, "between": 192, "inside": 48},
    "multilevel": {"total": 132, "between": 12, "inside": 120,
                   "printed_terms": {"3*16": 48, "4*3*7": 84}},
    "source": LSDYNA + ", section Multilevel Message Passing",
}

#: Section "Testing": the Origin 2000 latency within a node as printed, "10-15
#: microseconds" (``ORIGIN2000_INTRA`` takes the middle).
ORIGIN2000_INTRA_LATENCY = Range(10 * US, 15 * US)

#: Section "Analysis of test results": "the actual speedup from 1 to 12, with the original
#: algorithm, is 9.24. Thus each of the 12 processors spent 77% of their time doing useful
#: work and 23% was lost"; "a speedup of 4% is not insignificant", "a reduction of 4% in
#: total runtime".
LSDYNA_ANALYSIS = {
    "speedup_1_to_12": 9.24, "useful_percent": 77, "lost_percent": 23,
    "claimed_gain_percent": 4,
    "source": LSDYNA + ", section Analysis of test results",
}

# ------------------------------------------- Kumar 2004, all-to-all multicast on fat trees

KUMAR2004 = ("Kumar (& Kalé), Scaling Collective Multicast on Fat-tree Networks, "
             "ICPADS 2004 (slides)")

#: Slide 27, "Predicted vs Actual Performance": the predicted plot assumes α = 9 µs,
#: α_b = 15 µs and β = δ = 294 MB/s (β_em and δ are per-byte costs: 1 / 294 MB/s).
KUMAR2004_COST = {"alpha": 9 * US, "alpha_b": 15 * US, "beta_em": 1 / (294 * MB), "delta": 1 / (294 * MB),
                  "source": KUMAR2004 + ", slide 27"}

#: Slide 14: Quadrics QsNet, "Low latency (5 μs for MPI)", "High bandwidth (320 MB/s/node)",
#: fat tree, "Scales to 2 K nodes"; slide 16: "320 byte packet size", "Achievable
#: bandwidth is only 128 MB/s" (PCI/DMA from main memory); slide 19: "Messages sent
#: from NIC memory have 2.5 times better performance".
KUMAR2004_QUADRICS = {"mpi_latency": 5 * US, "link_bandwidth": 320 * MB, "packet_bytes": 320,
                      "pci_bandwidth": 128 * MB, "nic_memory_gain": 2.5, "fat_tree_arity": 4,
                      "source": KUMAR2004 + ", slides 14, 16, 19"}

#: Slide 23: node bandwidth (B/s, each way) of all-to-all multicast, "Our strategies send
#: messages from Elan memory".  None: no entry on the slide (prefix send at 144 nodes).
KUMAR2004_BANDWIDTH = {
    "nodes": (64, 128, 144, 256),
    "MPI": (123 * MB, 99 * MB, 94 * MB, 95 * MB),
    "prefix": (260 * MB, 224 * MB, None, 215 * MB),
    "k-prefix": (265 * MB, 259 * MB, 261 * MB, 256 * MB),
    "source": KUMAR2004 + ", slide 23",
}

#: Slides 28 and 29: node bandwidth (B/s) with one missing node.
KUMAR2004_MISSING_NODE = {
    "nodes": (128, 240),
    "MPI": (72 * MB, 69 * MB),
    "prefix": (158 * MB, None),
    "k-prefix": (169 * MB, 173 * MB),
    "k-shift": (196 * MB, 197 * MB),
    "k_shift_k": 8,
    "source": KUMAR2004 + ", slides 28 and 29",
}

# ---------------------------------------------------------------- the kit's own measurement (LogGP)
from .logp import LogGP  # noqa: E402  (kept next to the entry that uses it)

#: LogGP of the 2-core virtual machine the book was built on, measured on 2026-11-22 (load average 3.9) with
#: ``mpiexec -n 2 python -m mpi_exercises logp --json book/data/logp_kit_vm.json``
#: (MPICH 5.0.2, shared memory; the file is kept as it was measured, a named machine like the
#: papers', while ``logp_reference.json`` is re-measured with the kit), fitted to the
#: per-size minima by today's
#: ``logp_bench.fit(results, n, "min_s")`` (the LogP chapter's fit; the JSON's own "fit" and
#: "fit_min" blocks were written by an older fit and are not used).  Noise only adds time, so
#: the minima are the machine's own; the medians' block has o_s = 4.11 µs from one disturbed
#: 0-byte size, which the LogP chapter warns about.  The latency comes out negative (the
#: overheads measured alone exceed half the round trip: they overlap through shared memory),
#: so L is clipped at 0 as :meth:`netmodels.models.logp_fit.PRTTFit.model` does.  It is the
#: default machine of ``python -m netmodels simulate --model logp/loggp``.
KIT_VM_LOGGP = LogGP(L=0.0, o=5.667222258883462e-07, g=1.2465040718847995e-06, P=2,
                     o_r=1.2909999895782676e-06, G=5.306434158566671e-12,
                     name="course kit VM (MPICH, shared memory)",
                     source="book/data/logp_kit_vm.json, fit to the per-size minima, L clipped at 0")

#: BSP of the same 2-core virtual machine: g per float64 element of an h-relation and l per
#: superstep, the least-squares fit to the medians of
#: ``mpiexec -n 2 python -m mpi_exercises bsp --repetitions 300 --warmup 20`` as stored in
#: ``book/data/bsp_reference.json`` ("fit").  The default machine of the BSP model.
KIT_VM_BSP = BSP(g=5.31e-10, l=5.18e-6, unit="words", name="course kit VM (MPICH, shared memory)",
                 source="book/data/bsp_reference.json, fit to the medians")

#: LS-DYNA paper, section "Bandwidth and Latency": the 12-processor run of the 128,000-element
#: model "was about 10 times faster than a 1 processor run", which "would indicate that about
#: 15% of the 12 processor run is due to communication ... and load imbalance".
LSDYNA_SPEEDUP_ESTIMATE = {"processors": 12, "speedup": 10, "printed_loss_percent": 15}

# ---------------------------------------------------------------- Hoefler & Rehm (LoP)
from .lop import OverheadCurve, RTTCurve  # noqa: E402  (kept next to the entries that use it)

HOEFLER_REHM_LOP = ("Hoefler & Rehm, A Communication Model for Small Messages with InfiniBand "
                    "(64 nodes, Mellanox MTS 9600 switch, MTPB 23108 HCAs, 1-byte messages)")

#: Minimal Send/Receive RTT to p peers, section 4.7 ("Send/Receive Results"):
#: t = 9.1637 + 22.4558/(-0.0140 + p) + 0.0174 (1 - e^(-0.0625 (p - 101.3065))) µs.
LOP_SENDRECV_RTT_MIN = RTTCurve(
    (22.4558 * US, -0.0140, 9.1637 * US, 0.0174 * US, -0.0625, 101.3065),
    name="Send/Receive, minimal RTT", source=HOEFLER_REHM_LOP + ", section 4.7, t_rtt,min^send,n")

#: Minimal RDMA Write RTT to p peers, section 4.7 ("RDMA Write Results"):
#: t = 4.4642 + 16.7937/(0.0058 + p) + 4.4751 (1 - e^(-0.0642 (p - 12.9209))) µs.
LOP_RDMAW_RTT_MIN = RTTCurve(
    (16.7937 * US, 0.0058, 4.4642 * US, 4.4751 * US, -0.0642, 12.9209),
    name="RDMA Write, minimal RTT", source=HOEFLER_REHM_LOP + ", section 4.7, t_rtt,min^rdmaw,n")

#: RDMA Write send overhead o_s(p), section 4.7 and Figure 5: 0.5557 + 0.2103/(-0.7728 + p) µs.
#: The paper says Send/Receive overheads "equal to the RDMA results".
LOP_RDMAW_OS = OverheadCurve((0.5557 * US, 0.2103 * US, -0.7728), name="RDMA Write o_s",
                             source=HOEFLER_REHM_LOP + ", section 4.7, t_srov^rdmaw,n")

#: The overhead the paper subtracts in its printed L_min^send,n(p) (section 4.7, "Calculating
#: the L(p) Parameter"): 0.52 + 0.84/(-0.12 + p) µs.  It is not LOP_RDMAW_OS.
LOP_PRINTED_L_OVERHEAD = OverheadCurve((0.52 * US, 0.84 * US, -0.12), name="o_s in the printed L",
                                       source=HOEFLER_REHM_LOP + ", section 4.7, L_min^send,n(p)")

#: The RTT half in the printed L_min^send,n(p) as rounded there:
#: 4.58 + 11.23/(-0.01 + p) + 0.01 (1 - e^(-0.06 (p - 101.31))) µs, i.e. t_rtt/2.
LOP_PRINTED_L_HALF_RTT = RTTCurve((11.23 * US, -0.01, 4.58 * US, 0.01 * US, -0.06, 101.31),
                                  name="t_rtt/2 in the printed L",
                                  source=HOEFLER_REHM_LOP + ", section 4.7, L_min^send,n(p)")

#: The test cluster's size: p runs over 1..63 peers.
LOP_CLUSTER_NODES = 64
