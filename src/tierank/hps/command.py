"""``tierank rerank`` as a library function: the command's options as one checked value,
[`RerankOptions`][tierank.hps.command.RerankOptions], and [`run_rerank`][tierank.hps.command.run_rerank], which runs the
protocol's stages on them (plan, score, record, write: `tierank.hps.protocol`) with a progress display
on stderr, prints its table and writes its manifest.

The command line only gathers its options into a `RerankOptions` and calls `run_rerank`; a Python
caller who wants the result without a terminal calls [`rerank`][tierank.hps.protocol.rerank] with a
[`RerankConfig`][tierank.hps.plan.RerankConfig] ([`RerankOptions.config`][tierank.hps.command.RerankOptions.config] builds one).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tierank.errors import TierankError, TierankInputError
from tierank.hps.output import locked, write_outputs
from tierank.hps.plan import RERANK_MEASURES, RERANK_REGIMES, RerankConfig, plan_rerank
from tierank.hps.record import ProtocolResult, manifest, record
from tierank.hps.score import score
from tierank.hps.table import TABLE_FIELDS
from tierank.io.beir import QUERY_SETS

__all__ = [
    "RerankOptions",
    "run_rerank",
    "show_result",
    "parse_sizes",
    "parse_sides",
    "write_manifest",
]

#: What ``tierank rerank`` prints after an interrupt (the score cache keeps what was scored).
INTERRUPTED = "tierank: interrupted; scores so far are cached, run the same command to resume"


def parse_sizes(text: str, option: str = "--batch-sizes", least: int = 1) -> list[int]:
    """The integers of a comma-separated ``text`` (each >= ``least``), or a one-line error naming ``option``.

    >>> parse_sizes("1, 8,32")
    [1, 8, 32]
    >>> parse_sizes("0,1", "--orders", 0)
    [0, 1]
    """
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise TierankInputError(
            f"{option}: {text!r} is not a comma-separated list of integers"
        ) from None
    if not sizes or min(sizes) < least:
        what = "positive integers, e.g. 1,8,32" if least == 1 else "integers, e.g. 1,2"
        raise TierankInputError(f"{option}: give {what} (got {text!r})")
    return sizes


def parse_sides(text: str) -> list[str]:
    """``--padding-sides``: comma-separated sides (checked by the protocol, with the model).

    >>> parse_sides("left, right")
    ['left', 'right']
    """
    sides = [x.strip() for x in text.split(",") if x.strip()]
    if not sides:
        raise TierankInputError(
            f"--padding-sides: give left and/or right, e.g. left,right (got {text!r})"
        )
    return sides


@dataclass(frozen=True)
class RerankOptions:
    """The options of ``tierank rerank``, checked when the value is made (what the protocol checks
    with the model, [`tierank.hps.plan.plan_rerank`][tierank.hps.plan.plan_rerank], is checked there).

    The fields are the command's options under their names (``measures``: the ``-m`` texts, none for
    `RERANK_MEASURES`; ``output``, ``cache``: ``-o`` and ``--cache``; ``fmt``: ``--format``); the
    comma-separated ones (``regimes``, ``batch_sizes``, ``orders``, ``padding_sides``) keep their
    text, and ``ray`` is ``local``, ``auto`` or a head's address.  Made here: OUT/ or a cache folder is
    given, ``workers`` comes with ``ray`` (and Ray is installed), the comma-separated lists parse.
    """

    data: Path
    model: str
    candidates: Path | None = None
    regimes: str = ",".join(RERANK_REGIMES)
    measures: tuple[str, ...] = ()
    output: Path | None = None
    qrels: Path | None = None
    cache: Path | None = None
    batch_size: int = 16
    queries: str = QUERY_SETS[0]
    depth: int | None = None
    max_queries: int | None = None
    device: str = "auto"
    backend: str = "hf"
    budget: int = 64
    max_doc_tokens: int = 256
    threads: int | None = None
    tie_break: str = "trec_eval"
    fmt: str = "table"
    ray: str | None = None
    workers: int | None = None
    batch_sizes: str | None = None
    orders: str | None = None
    padding_sides: str | None = None
    manifest: Path | None = None
    repeat: int = 1

    def __post_init__(self) -> None:
        if self.output is None and self.cache is None:
            raise TierankInputError(
                "give -o/--output DIR (runs, table and cache are written there)"
            )
        if self.workers is not None and self.ray is None:
            raise TierankInputError("--workers needs --ray")
        if self.ray is not None:
            from tierank.cluster import require_ray

            require_ray()
        _ = (
            self.extra_batch_sizes,
            self.extra_orders,
            self.extra_sides,
        )  # the lists parse now, or say why not

    @property
    def extra_batch_sizes(self) -> list[int] | None:
        """``--batch-sizes`` parsed (None when not given)."""
        return None if self.batch_sizes is None else parse_sizes(self.batch_sizes)

    @property
    def extra_orders(self) -> list[int] | None:
        """``--orders`` parsed: the seeds of the candidate orders (None when not given)."""
        return None if self.orders is None else parse_sizes(self.orders, "--orders", 0)

    @property
    def extra_sides(self) -> list[str] | None:
        """``--padding-sides`` parsed (None when not given)."""
        return None if self.padding_sides is None else parse_sides(self.padding_sides)

    def config(
        self,
        progress: Callable[[str, int], Any] | None = None,
        warn: Callable[[str], Any] | None = None,
    ) -> RerankConfig:
        """The protocol's [`RerankConfig`][tierank.hps.plan.RerankConfig] of these options, with the
        ``progress`` and ``warn`` hooks."""
        return RerankConfig(
            self.data,
            self.model,
            self.regimes,
            list(self.measures or RERANK_MEASURES),
            out_dir=self.output,
            candidates=self.candidates,
            qrels=self.qrels,
            cache_dir=self.cache,
            batch_size=self.batch_size,
            queries=self.queries,
            depth=self.depth,
            max_queries=self.max_queries,
            device=self.device,
            budget=self.budget,
            max_doc_tokens=self.max_doc_tokens,
            tie_break=self.tie_break,
            progress=progress,
            threads=self.threads,
            warn=warn,
            ray=None if self.ray is None else (True if self.ray == "local" else self.ray),
            workers=self.workers,
            batch_sizes=self.extra_batch_sizes,
            backend=self.backend,
            orders=self.extra_orders,
            padding_sides=self.extra_sides,
            repeat=self.repeat,
        )


@contextmanager
def _progress_bars(console) -> Iterator[Callable[[str, int], Callable[[], Any]]]:
    """A ``progress(label, total)`` hook drawing one rich bar per scored variant on ``console``
    (only where stderr is a terminal)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not sys.stderr.isatty(),
    ) as prog:

        def progress(label: str, total: int) -> Callable[[], Any]:
            task = prog.add_task(f"scoring {label}", total=total)
            return lambda: prog.advance(task)

        yield progress


@contextmanager
def _reported(console) -> Iterator[None]:
    """A tierank error of the protocol (a model that cannot be loaded, a scorer's bad output) as a
    [`TierankInputError`][tierank.errors.TierankInputError]; after a ``KeyboardInterrupt`` the line
    `INTERRUPTED` on ``console``, and the interrupt raised again."""
    try:
        yield
    except TierankInputError:
        raise
    except TierankError as e:
        raise TierankInputError(str(e)) from None
    except KeyboardInterrupt:
        console.print(INTERRUPTED, markup=False, highlight=False)
        raise


def run_rerank(options: RerankOptions) -> ProtocolResult:
    """``tierank rerank``: the protocol's stages on ``options`` (plan; with OUT/ locked score, record,
    write), the table on stdout ([`show_result`][tierank.hps.command.show_result]) and, with
    ``--manifest``, the manifest ([`write_manifest`][tierank.hps.command.write_manifest]).

    Progress bars and the score cache's warnings go to stderr.  A tierank error of the protocol (a
    model that cannot be loaded, a scorer's bad output) becomes a [`TierankInputError`][tierank.errors.TierankInputError]
    (one line, exit 2 on the command line); after a ``KeyboardInterrupt`` a line on stderr says that
    the scores so far are cached, and the interrupt is raised again.
    """
    from rich.console import Console

    # model loaders' tqdm bars (GGUF dequantization); rich shows progress
    os.environ.setdefault("TQDM_DISABLE", "1")
    console = Console(emoji=False, stderr=True)

    def warn(message: str) -> None:
        console.print(f"tierank: warning: {message}", markup=False, highlight=False, soft_wrap=True)

    with _reported(console), _progress_bars(console) as progress:
        config = options.config(progress, warn)
        plan = plan_rerank(config)
        with locked(plan.output.dirs):
            scored = score(plan)
            result = record(plan, scored)
            write_outputs(plan, scored, result)
    show_result(result, options.fmt)
    if options.manifest is not None:
        write_manifest(result, options.manifest)
    return result


def write_manifest(result: ProtocolResult, path: Path) -> None:
    """The manifest of a protocol run ([`tierank.hps.record.manifest`][tierank.hps.record.manifest]:
    the inputs', the models' and the written runs' SHA-256, the settings, the table's numbers), written
    atomically to ``path`` (``tierank rerank --manifest``); no written run is overwritten."""
    import shlex

    man = manifest(result, shlex.join(["tierank", *sys.argv[1:]]), Path(path).parent)
    man.write(path, protect=tuple(result.runs.values()))


def show_result(result: ProtocolResult, fmt: str = "table") -> None:
    """Print ``result`` on stdout: in ``fmt`` (a ``--format`` of the records) the rows, or as the
    terminal's Table 1 followed by one line per variant of the run-to-run variance."""
    from rich.console import Console

    from tierank.report.formats import render_records
    from tierank.report.terminal import rerank_table

    if fmt != "table":
        sys.stdout.write(render_records(result.rows, TABLE_FIELDS, fmt, document=result.document()))
        return
    Console(emoji=False, width=max(Console().width, 180)).print(rerank_table(result))
    for line in _variance_lines(result.settings.get("variance")):
        print(line)


def _variance_lines(variance: dict | None) -> list[str]:
    """One line per variant: the settings compared, the share of scores changed and each measure's E spread."""
    if not variance:
        return []
    sizes = ",".join(map(str, variance["batch_sizes"]))
    orders = (
        f" and candidate orders {','.join(map(str, variance['orders']))}"
        if variance.get("orders")
        else ""
    )
    if len(variance.get("padding_sides") or []) > 1:
        orders += f" and padding sides {','.join(variance['padding_sides'])}"
    if (variance.get("repeats") or 1) > 1:
        orders += f" and {variance['repeats']} repeats"
    lines = []
    for v, row in variance["variants"].items():
        spreads = ", ".join(f"{m} E spread {x['spread']:.4g}" for m, x in row["measures"].items())
        lines.append(
            f"batch sizes {sizes}{orders}: {v}: {row['changed_share']:.1%} of scores changed; {spreads}"
        )
    return lines
