"""The nbgrader preprocessors that ``nbgrader_config.py`` names, by role:

- before grading (``Autograde``'s sanitizing): ``RestoreReleasedCells`` (test cells put back
  from the gradebook, a warning only for a student's change): ``grading_cells.py``;
- while grading (``Autograde``): ``ExecuteRestartingDeadKernel`` (a dead kernel is restarted,
  outputs are bounded as they arrive, each test cell is checked to run as written) and
  ``LimitOutputSize`` (characters per output): ``grading_execute.py``, ``grading_probe.py``;
- for the feedback pages (``GenerateFeedback``): ``GetGradesMarkingPending``,
  ``HideHiddenTestsInFeedback``, ``TidyErrorsForFeedback`` and ``InlineMathJax``, and the run
  without hidden tests that a page shows: ``grading_feedback.py``.
"""

from grading_cells import RestoreReleasedCells
from grading_execute import ExecuteRestartingDeadKernel, LimitOutputSize
from grading_feedback import (GetGradesMarkingPending, HideHiddenTestsInFeedback, InlineMathJax,
                              TidyErrorsForFeedback)

__all__ = ["RestoreReleasedCells", "ExecuteRestartingDeadKernel", "LimitOutputSize", "GetGradesMarkingPending",
           "HideHiddenTestsInFeedback", "TidyErrorsForFeedback", "InlineMathJax"]
