"""One live progress display on stderr for a command: phases, streamed lines, runs done.

Silent when stderr is not a terminal (pipes, files, CI logs): nothing is written at all.  There
is one display per command because rich allows one live display at a time.

>>> import io
>>> from rich.console import Console
>>> buf = io.StringIO()
>>> with Progress(console=Console(file=buf, force_terminal=True, width=100)) as p:
...     p.stream(2_000_000, 2_000)
>>> p.description  # doctest: +ELLIPSIS
'2,000,000 lines, 2,000 queries, ...M lines/s'
>>> "2,000,000 lines" in buf.getvalue()
True
"""

from __future__ import annotations

import sys
import time
from typing import Any


class Progress:
    """A transient spinner line with what is going on and the time elapsed.

    * `phase` names a step (``reading run.txt (3.1 GB)``);
    * `stream` is the ``progress(lines, queries)`` callback of `tierank.stream.evaluate_stream`
      (lines and queries done, rate), `stream_bytes` its ``progress_bytes(done, size)`` (a bar of
      the file done, where it is read in byte ranges);
    * `steps` follows an evaluation in memory: reading, tie groups, then measure by measure, with
      a bar of the measures done;
    * `runs` counts runs done out of a total, with a bar.

    ``console`` defaults to stderr; without a terminal the display is off and the methods only
    keep `description` (what would be shown).
    """

    def __init__(self, console=None, enabled: bool | None = None):
        self.enabled = (
            sys.stderr.isatty() if enabled is None and console is None else (enabled is not False)
        )
        self.console = console
        self.description = ""
        self._share = ""  # streaming: ", 37% of 3.1 GB" once the bytes done are known
        self._bar: dict[str, int] = {}
        self._prog: Any = None  # a rich Progress while shown (rich is imported only then)
        self._task: Any = None
        self._start = time.perf_counter()

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import Progress as RichProgress

            self._prog = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console or Console(emoji=False, stderr=True),
                transient=True,
            )
            self._prog.__enter__()
            self._task = self._prog.add_task("", total=None)
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        if self._prog is not None:
            self._prog.__exit__(*exc)
            self._prog = None

    def _show(self, text: str, **fields) -> None:
        self.description = text
        if self._prog is not None:
            self._prog.update(self._task, description=text, **fields)

    def phase(self, text: str) -> None:
        self._show(text)

    def stream(self, lines: int, queries: int) -> None:
        rate = lines / max(time.perf_counter() - self._start, 1e-9)
        self._show(
            f"{lines:,} lines, {queries:,} queries, {rate / 1e6:.2f}M lines/s{self._share}",
            **self._bar,
        )

    def stream_bytes(self, done: int, size: int) -> None:
        """The bytes of the file done (``progress_bytes`` of `tierank.stream.evaluate_stream`):
        a bar in percent, and the share in the line."""
        percent = 100 * done // max(size, 1)
        self._share = f", {percent}% of {size_text(size)}"
        self._bar = {"completed": percent, "total": 100}

    def steps(self, what: str, text: str, done: int, total: int) -> None:
        """The steps of an in-memory evaluation of ``what`` (the ``progress`` of
        `tierank.evaluate.Evaluator.evaluate`): reading, tie groups, then each measure, with a bar
        of the measures done."""
        doing = {"reading": "reading", "ties": "finding the tie groups of"}.get(text)
        if doing is not None:
            self._show(f"{doing} {what}", completed=done, total=total)
        else:
            self._show(f"{what}: {text}", completed=done, total=total)

    def runs(self, done: int, total: int, name: str = "") -> None:
        self._show(f"runs evaluated{': ' + name if name else ''}", completed=done, total=total)


def size_text(n: int) -> str:
    """``n`` bytes for people.

    >>> size_text(3_100_000_000), size_text(512)
    ('3.1 GB', '512 B')
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
