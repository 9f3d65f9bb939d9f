"""How the grader runs a notebook (``nbgrader autograde``, and the run for the feedback page).

``ExecuteRestartingDeadKernel``: nbgrader's ``Execute`` gives up on the whole notebook when the
kernel dies (``exit()``, ``os._exit()``, a crash), and the student gets nothing.  This one
records the death in the cell, starts a fresh kernel and goes on: the cells after it run without
the lost variables, as they would for the student.  It also bounds each cell's outputs as they
arrive (not only once the cell is done), and checks from outside, around each test cell, that
the kernel still runs code as written (``grading_probe``).

``LimitOutputSize``: nbgrader's ``LimitOutput`` counts lines: one ``print("x" * 10**7)`` is a
single line of 10 MB that would end up in the gradebook's notebook and in the student's HTML
feedback.  ``LimitOutputSize`` also caps the characters of every output and drops oversized
binary outputs (images), keeping a note of what was cut.
"""

from __future__ import annotations

import nbformat
import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync
from nbgrader.preprocessors import Execute, LimitOutput
from traitlets import Bool, Integer, default

from grading_probe import TamperingChecks


NOTE = "\n... output truncated while grading ({} characters) ...\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + NOTE.format(len(text))


#: characters of output a cell may send while it runs (streams, results, displays, errors,
#: widget messages); past it, further outputs are dropped as they arrive and a note is kept.
#: (The sandboxed kernel itself cuts its stdout and its stderr at a million characters each.)
OUTPUT_BUDGET = 2_000_000
#: largest part of a message the grader accepts from a kernel, bytes (a larger one is dropped by
#: ZeroMQ before it is read: the kernel's connection is cut and made again)
MESSAGE_BYTES = 16 * 2**20


def _chars(obj, limit: int) -> int:
    """Characters of the strings (and bytes) in ``obj`` (dicts, lists), counted up to past ``limit``."""
    if isinstance(obj, (str, bytes)):
        return len(obj)
    total, todo = 0, [obj]
    while todo and total <= limit:
        item = todo.pop()
        if isinstance(item, (str, bytes, bytearray, memoryview)):
            total += len(item)
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
    return total


class BoundedKernelClient(AsyncKernelClient):
    """A kernel client whose sockets refuse message parts over :data:`MESSAGE_BYTES`."""

    @default("context")
    def _context_default(self):
        self._created_context = True
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, MESSAGE_BYTES)   # for every socket made from it
        return context


class ExecuteRestartingDeadKernel(TamperingChecks, Execute):
    """``Execute`` that survives the death of the kernel, bounds outputs as they arrive, and
    checks that each test cell runs as written.

    - A dead kernel is restarted and the next cells run.  A kernel may also die just after a
      cell that called ``exit()`` replied; the death then shows at the next cell, which is run
      again once in the fresh kernel.
    - Outputs: at most ``output_budget`` characters per cell are kept as they arrive (the rest is
      dropped, with a note), each message part at most :data:`MESSAGE_BYTES`, so that a cell
      printing gigabytes cannot fill the grader's memory (``LimitOutputSize`` then cuts further).
    - Tampering: before and after each test cell the grader runs a probe of its own (random
      nonces, not stored in the history): it must fail its own ``assert`` with its message,
      print its nonce, and find IPython's input and output machinery, the built-ins, ``numpy`` and
      ``math`` as they were when the kernel started (the identities of their functions).  A test
      cell that also shows a result its code does not compute, or clears its outputs, is
      suspect too.  Such a test scores 0 (an error ``grading_probe.TAMPERED`` first in its outputs) and
      the log says why.  The kernel is the student's: a probe written against this one can
      still be fooled; it catches the generic ways (input or AST transformers, replaced hooks
      or built-ins, patched numpy), and the submission's code is in plain view.
    """

    output_budget = Integer(OUTPUT_BUDGET, help="characters of output kept per cell as it runs").tag(config=True)
    check_tampering = Bool(True, help="probe the kernel's machinery around each test cell").tag(config=True)

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.client_factory = BoundedKernelClient
        return km

    def preprocess_cell(self, cell, resources, index):
        for attempt in (1, 2):
            try:
                return self._run_checked(cell, resources, index)
            except DeadKernelError:
                self.log.warning("The kernel died in cell %d (attempt %d): restarting it", index, attempt)
                self._baseline = None
                run_sync(self.km.restart_kernel)(now=True)
                run_sync(self.kc.wait_for_ready)(timeout=self.startup_timeout)
        cell.outputs.append(nbformat.v4.new_output(
            "error", ename="DeadKernelError",
            evalue="the kernel died while running this cell; the next cells run in a new kernel",
            traceback=["DeadKernelError: the kernel died while running this cell (exit(), os._exit(), "
                       "a crash); the next cells run in a new kernel, without this cell's variables"]))
        return cell, self.resources

    # ------------------------------------------------------------ outputs, bounded as they arrive
    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        self._spent, self._dropped, self._cleared, self._results = 0, 0, False, 0
        try:
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        except CellTimeoutError as exc:   # replied, but its outputs never ended: some were lost
            if "Timeout waiting for IOPub output" not in str(exc):
                raise
            self.log.warning("Cell %d: outputs lost (a message over %d bytes, or no end)", cell_index,
                             MESSAGE_BYTES)
            cell.outputs.append(nbformat.v4.new_output("error", ename="OutputLost", evalue=(
                f"outputs of this cell were lost: a message over {MESSAGE_BYTES} bytes, or no end"),
                traceback=[f"OutputLost: outputs of this cell were lost (a message over {MESSAGE_BYTES} "
                           "bytes, or none that ended the cell); a test cell scores 0"]))
            self.nb.cells[cell_index] = cell
            self.kc.stop_channels()       # ZeroMQ cut the connection that carried it: a new client
            self.kc = self.km.client()
            self.kc.start_channels()
            await self.kc.wait_for_ready(timeout=self.startup_timeout)
            self.kc.allow_stdin = False
        if self._dropped:
            cell.outputs.append(nbformat.v4.new_output("display_data", data={"text/plain": (
                f"[grader] this cell's output was cut while it ran: {self.output_budget} characters kept, "
                f"{self._dropped} or more dropped")}))
        return cell

    execute_cell = run_sync(async_execute_cell)

    def process_message(self, msg, cell, cell_index):
        kind, content = msg["msg_type"], msg["content"]
        if kind in ("status", "execute_input"):
            return super().process_message(msg, cell, cell_index)
        if kind == "clear_output":
            self._cleared = True
            return super().process_message(msg, cell, cell_index)
        left = max(self.output_budget - self._spent, 0)
        size = _chars(content, left)
        if size <= left:
            self._spent += size
            self._results += kind == "execute_result"
            return super().process_message(msg, cell, cell_index)
        self._spent = self.output_budget
        if kind == "stream" and left:
            self._dropped += size - left
            content["text"] = str(content.get("text", ""))[:left]
            return super().process_message(msg, cell, cell_index)
        if kind == "error":           # an error always counts: cut its text, keep it
            keep = max(left, 2000)
            content["evalue"] = str(content.get("evalue", ""))[:keep]
            lines, kept = [], 0
            for line in content.get("traceback", []) if isinstance(content.get("traceback"), list) else []:
                line = str(line)[:keep - kept]
                lines.append(line)
                kept += len(line)
                if kept >= keep:
                    break
            content["traceback"] = lines
            self._dropped += size - keep
            return super().process_message(msg, cell, cell_index)
        self._dropped += size
        return None


class LimitOutputSize(LimitOutput):
    """``LimitOutput`` (lines) plus a cap on characters per output (-1: no cap)."""

    max_chars = Integer(20_000, help="maximum characters kept per output (-1 means no limit)").tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        limit = self.max_chars
        if limit < 0 or cell.cell_type != "code":
            return cell, resources
        for out in cell.outputs:
            kind = out.output_type
            if kind == "stream":
                out.text = _cut(out.text, limit)
            elif kind == "error":
                out.evalue = _cut(str(out.evalue), limit)
                out.traceback = [_cut(line, limit) for line in out.traceback]
            elif kind in ("execute_result", "display_data"):
                for mime, value in list(out.data.items()):
                    text = "".join(value) if isinstance(value, list) else str(value)
                    if len(text) <= limit or (mime.startswith("image/") and len(text) <= 50 * limit):
                        continue  # small, or an ordinary figure
                    if mime == "text/plain":
                        out.data[mime] = _cut(text, limit)
                    else:
                        del out.data[mime]
                if not out.data:
                    out.data["text/plain"] = "... output removed while grading (too large) ..."
        return cell, resources
