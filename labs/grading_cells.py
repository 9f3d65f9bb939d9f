"""Read-only cells put back as the source has them, with a warning only for a student's change.

nbgrader's ``generate_assignment`` records each locked cell's checksum in the gradebook *before*
it removes the hidden tests (``ComputeChecksums, SaveCells, ClearHiddenTests``): the test cell a
student receives lacks them, so its checksum differs from the recorded one.  ``autograde``'s
``OverwriteCells`` then warns ``Attribute 'checksum' for cell ... has changed!`` for every test
cell with hidden tests of every real hand-in, and puts the source back (which is how the hidden
tests return).  :class:`RestoreReleasedCells` tells that case apart: a locked cell that is
exactly as released (its source's with the hidden tests removed, by nbgrader's own
``ClearHiddenTests``) is put back with one ``INFO`` line; any other change keeps nbgrader's
warning.  Either way the cell runs as the source has it, and the grader's probe
(``grading_probe``) still checks that it runs as written.
"""

from __future__ import annotations

import copy

from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells


class RestoreReleasedCells(OverwriteCells):
    """``OverwriteCells`` (its options included) that logs a locked cell handed in as released,
    hidden tests removed, as restored rather than changed."""

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:        # nbgrader's own method below says so
                source = None
            if source is not None and source.locked and self._as_released(cell, source):
                self.log.info("Cell %s as released: its hidden tests put back", grade_id)
                cell.source = source.source
        return super().preprocess_cell(cell, resources, cell_index)

    def _as_released(self, cell, source) -> bool:
        """Whether ``cell``'s source is the gradebook's ``source`` cell's with its hidden tests
        removed, and not that source itself (a cell without hidden tests needs nothing)."""
        released = copy.deepcopy(cell)
        released.source = source.source
        removed = ClearHiddenTests(parent=self)._remove_hidden_test_region(released)
        return removed and cell.source == released.source
