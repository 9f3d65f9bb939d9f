"""What every topology offers: vectorised routes, readable routes, link loads."""

from __future__ import annotations

import numpy as np


def pair_arrays(src, dst=None, nprocs: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` as int64 arrays from two arrays, or from one sequence/array of pairs.

    ValueError if the lengths differ or a rank is outside 0 .. nprocs-1.
    """
    if dst is None:
        a = np.asarray(src, dtype=np.int64).reshape(-1, 2) if len(src) else np.zeros((0, 2), np.int64)
        src, dst = a[:, 0], a[:, 1]
    src = np.asarray(src).astype(np.int64, copy=False).reshape(-1)
    dst = np.asarray(dst).astype(np.int64, copy=False).reshape(-1)
    if src.shape != dst.shape:
        raise ValueError(f"src and dst must have the same length, got {src.size} and {dst.size}")
    if nprocs is not None:
        for name, a in (("src", src), ("dst", dst)):
            if a.size and (a.min() < 0 or a.max() >= nprocs):
                raise ValueError(f"{name} ranks must be in 0..{nprocs - 1}, got {int(a.min())}..{int(a.max())}")
    return src, dst


class Topology:
    """Base class: subclasses set ``nprocs``, ``nlinks`` and implement :meth:`_routes` and
    :meth:`link_name` (``link_id -> (from node, to node)``)."""

    nprocs: int
    nlinks: int

    def _routes(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def link_name(self, link: int) -> tuple:
        raise NotImplementedError

    def routes(self, src, dst) -> tuple[np.ndarray, np.ndarray]:
        """``(msg_index, link_id)``: message i uses link ``link_id[j]`` for every j with
        ``msg_index[j] == i`` (messages to oneself use no link)."""
        src, dst = pair_arrays(src, dst, self.nprocs)
        return self._routes(src, dst)

    def route(self, src: int, dst: int) -> list[tuple]:
        """The directed links from rank ``src`` to rank ``dst``, in order, as node-name pairs."""
        _, links = self.routes([src], [dst])
        return [self.link_name(int(l)) for l in links]

    def link_loads(self, src, dst=None) -> tuple[np.ndarray, int]:
        """Messages on each link (array of ``nlinks``) and the largest load.

        ``src, dst``: two arrays, or one sequence of ``(src, dst)`` pairs.
        """
        src, dst = pair_arrays(src, dst, self.nprocs)
        _, links = self._routes(src, dst)
        loads = np.bincount(links, minlength=self.nlinks)
        return loads, int(loads.max(initial=0))

    def message_loads(self, src, dst=None) -> np.ndarray:
        """For each message, the largest load among the links it uses (0 for none)."""
        src, dst = pair_arrays(src, dst, self.nprocs)
        idx, links = self._routes(src, dst)
        loads = np.bincount(links, minlength=self.nlinks)
        out = np.zeros(src.size, dtype=np.int64)
        np.maximum.at(out, idx, loads[links])
        return out

    def hops(self, src, dst=None) -> np.ndarray:
        """Number of links on each message's route."""
        src, dst = pair_arrays(src, dst, self.nprocs)
        idx, _ = self._routes(src, dst)
        return np.bincount(idx, minlength=src.size)
