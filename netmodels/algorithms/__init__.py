"""Algorithms as schedules: steps of transfers (src, dst, block, count, combine) and their semantics."""
