"""Network topologies with deterministic routes: k-ary n-trees (fat trees), 2-D meshes and tori.

Every topology numbers its *directed* links 0 .. nlinks-1 and routes a message from
rank ``src`` to rank ``dst`` over a list of them.  The shared contract
(:class:`~netmodels.topology.base.Topology`):

- ``routes(src, dst) -> (msg_index, link_id)``, vectorised over arrays of messages:
  message ``i`` uses link ``link_id[j]`` for every ``j`` with ``msg_index[j] == i``;
- ``route(src, dst)``: the same path as readable ``(from, to)`` node names;
- ``link_loads(src, dst)``: messages per link, and the maximum.

:mod:`netmodels.topology.contention` says which permutations and schedule steps are
contention-free.
"""

from .base import Topology
from .fattree import KaryNTree
from .mesh import Mesh2D, Torus2D

__all__ = ["Topology", "KaryNTree", "Mesh2D", "Torus2D"]
