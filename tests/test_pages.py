"""Message buffers on pages of a known kind (mpi_exercises.pages)."""

import mmap
import sys

import numpy as np
import pytest

from mpi_exercises import pages

THP = pages.transparent_huge_pages()


@pytest.mark.parametrize("kind, align", [("small", mmap.PAGESIZE), ("huge", pages.HUGE_PAGE)])
@pytest.mark.parametrize("shape, dtype", [(0, np.uint8), (1, np.float64), ((3, 5), np.float64),
                                          (5 << 20, np.uint8), ((2, 70000), np.int64)])
def test_buffers_are_aligned_zeroed_writeable_and_of_their_shape(kind, align, shape, dtype):
    a = pages.allocate(shape, dtype, kind)
    assert a.shape == (shape if isinstance(shape, tuple) else (shape,)) and a.dtype == dtype
    assert a.flags.c_contiguous and a.flags.writeable
    assert a.size == 0 or a.ctypes.data % align == 0     # (an empty array has no bytes to place)
    assert not a.any()
    a[...] = 7                      # the whole buffer is its own memory
    assert (a == 7).all()


def test_two_buffers_never_share_memory_and_outlive_their_views():
    a, b = pages.allocate(1 << 20), pages.allocate(1 << 20)
    assert not np.shares_memory(a, b)
    view = pages.allocate((4, 1000), np.float64)[1]
    view[:] = 2.5                   # the region stays mapped while a view of it lives
    assert view.sum() == 2500.0
    c = pages.copy(np.arange(6.0).reshape(2, 3))
    assert c.tolist() == [[0, 1, 2], [3, 4, 5]] and c.ctypes.data % mmap.PAGESIZE == 0


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="pages must be one of"):
        pages.allocate(10, np.uint8, "large")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps (Linux)")
def test_small_buffers_get_no_huge_pages_and_huge_ones_do_where_the_kernel_gives_them():
    """The point of the module: a buffer's page kind is what was asked for, not what the
    address malloc returned happens to allow (numpy alone gives arrays of 4 MiB or more
    huge pages on part of them only)."""
    small, huge = pages.allocate(8 << 20, np.uint8, "small"), pages.allocate(8 << 20, np.uint8, "huge")
    assert pages.huge_page_bytes(small) == 0
    assert pages.huge_page_bytes(huge) == (8 << 20 if THP in ("always", "madvise") else 0)


def test_the_kernel_mode_is_read_from_its_file(tmp_path, monkeypatch):
    f = tmp_path / "enabled"
    f.write_text("always [madvise] never\n")
    monkeypatch.setattr(pages, "_THP", f)
    assert pages.transparent_huge_pages() == "madvise"
    monkeypatch.setattr(pages, "_THP", tmp_path / "missing")
    assert pages.transparent_huge_pages() is None
