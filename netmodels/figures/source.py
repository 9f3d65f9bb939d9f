"""A model's code on a chapter's page, read from its module so that it cannot drift.

:func:`show_source` returns the source of functions or methods (``inspect.getsource``) as one
Markdown code block: the chapter shows the step rule the simulator runs, not a copy of it.
"""

from __future__ import annotations

import inspect
import textwrap


def source_of(obj) -> str:
    """The source of the function, method or class ``obj``, dedented (ValueError if it has none)."""
    if not (inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isclass(obj)):
        raise ValueError(f"obj must be a function, a method or a class, got {type(obj).__name__}")
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError) as exc:
        raise ValueError(f"obj {obj.__qualname__} has no source to show ({exc})") from exc


def show_source(*objects):
    """The sources of ``objects`` (at least one) as one Markdown Python code block, each headed
    by a comment naming its module and qualified name."""
    from IPython.display import Markdown

    if not objects:
        raise ValueError("objects must name at least one function, method or class")
    parts = [f"# {obj.__module__}.{obj.__qualname__}\n{source_of(obj)}" for obj in objects]
    return Markdown("```python\n" + "\n".join(parts) + "```")
