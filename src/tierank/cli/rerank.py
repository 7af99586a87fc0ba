"""`tierank rerank`: the low-precision reranking protocol.

The command parses its options into a `tierank.hps.protocol.RerankConfig`, calls
`tierank.hps.protocol.rerank`
(which checks everything before loading a model, and writes every file of
OUT/) and prints the table.  Its ``--model`` and ``--regimes`` help comes
from `tierank.hps.registry` and `tierank.hps.variants`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ..errors import TierankError, TierankInputError
from ..hps.protocol import RERANK_MEASURES, RERANK_REGIMES
from ..hps.registry import backend_help, model_help
from ..hps.variants import VARIANT_HELP
from ..io.beir import QUERY_SETS
from ..report.terminal import rerank_table as _rerank_table
from .app import app
from .common import Fmt, TieBreakOption, input_errors, measures_option


def _sizes(text: str, option: str = "--batch-sizes", least: int = 1) -> list[int]:
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


def _sides(text: str) -> list[str]:
    """``--padding-sides``: comma-separated sides (checked by the protocol, with the model)."""
    sides = [x.strip() for x in text.split(",") if x.strip()]
    if not sides:
        raise TierankInputError(
            f"--padding-sides: give left and/or right, e.g. left,right (got {text!r})"
        )
    return sides


@app.command("rerank")
@input_errors
def rerank_cmd(
    data: Annotated[
        Path,
        typer.Option("--data", help="BEIR-layout directory: corpus.jsonl, queries.jsonl, qrels"),
    ],
    model: Annotated[str, typer.Option("--model", help=f"Model: {model_help()}")],
    candidates: Annotated[
        Path | None,
        typer.Option(
            "--candidates", help="First-stage TREC run to rerank (default DATA/candidates.run)"
        ),
    ] = None,
    regimes: Annotated[
        str, typer.Option("--regimes", help=f"Comma-separated: {VARIANT_HELP}")
    ] = ",".join(RERANK_REGIMES),
    measure: measures_option(list(RERANK_MEASURES)) = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            help="Output directory: runs/ (one TREC run per regime, exact scores), "
            "table.tsv, table.json, cache/",
        ),
    ] = None,
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="qrels (default DATA/qrels.txt)")
    ] = None,
    cache: Annotated[
        Path | None, typer.Option("--cache", help="Score cache directory (default OUT/cache)")
    ] = None,
    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size",
            "-b",
            help="Pairs / texts per forward pass (recorded: it changes low-precision scores)",
        ),
    ] = 16,
    queries: Annotated[
        str,
        typer.Option(
            "--queries",
            help=f"{QUERY_SETS[0]} (default: queries with judgments) or {QUERY_SETS[1]}",
        ),
    ] = QUERY_SETS[0],
    depth: Annotated[
        int | None, typer.Option("--depth", help="Rerank the top N candidates of each query")
    ] = None,
    max_queries: Annotated[
        int | None, typer.Option("--max-queries", help="Only the first N queries")
    ] = None,
    device: Annotated[
        str, typer.Option("--device", help="auto (CUDA when present), cpu, cuda, cuda:N")
    ] = "auto",
    backend: Annotated[
        str, typer.Option("--backend", help=f"The engine of the forward pass: {backend_help()}.")
    ] = "hf",
    budget: Annotated[
        int, typer.Option("--budget", help="Rank1-style: reasoning tokens per pair (>= 0)")
    ] = 64,
    max_doc_tokens: Annotated[
        int,
        typer.Option("--max-doc-tokens", help="Generative: document truncation in tokens (>= 1)"),
    ] = 256,
    threads: Annotated[
        int | None, typer.Option("--threads", help="torch CPU threads (>= 1)")
    ] = None,
    tie_break: TieBreakOption = "trec_eval",
    fmt: Annotated[
        Fmt, typer.Option("--format", "-f", help="Format of the table on stdout.")
    ] = Fmt("table"),
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="Shard the queries over Ray workers: 'local' starts a local Ray, 'auto' joins the cluster "
            "of this node, HOST:PORT a cluster's head (pip install 'tierank[ray]')",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="With --ray: model copies (default one per GPU of the cluster, else one per CPU)",
        ),
    ] = None,
    batch_sizes: Annotated[
        str | None,
        typer.Option(
            "--batch-sizes",
            help="Run-to-run variance: also score every variant under these batch sizes "
            "(comma-separated, e.g. 1,8,32); table.json 'variance' gets the share of scores that "
            "changed and E[M] per batch size",
        ),
    ] = None,
    orders: Annotated[
        str | None,
        typer.Option(
            "--orders",
            help="Run-to-run variance: also score every variant with each query's candidates in these "
            "seeded random orders (other batches, other padding), e.g. 1,2; reported like "
            "--batch-sizes",
        ),
    ] = None,
    padding_sides: Annotated[
        str | None,
        typer.Option(
            "--padding-sides",
            help="Run-to-run variance: also score every variant with the batches padded on these "
            "sides, e.g. left,right (yes/no and Rank1-style models on the hf backend: RoPE makes "
            "the sides equal but for rounding); reported like --batch-sizes",
        ),
    ] = None,
) -> None:
    """The low-precision reranking protocol (the paper's Table 1): score every candidate under every
    precision regime, write one run per regime, report M at FP32 and per regime M_obl, E[M], range,
    bias, tie statistics and scoring time. Scores are cached; an interrupted run resumes."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from ..hps.protocol import TABLE_FIELDS, RerankConfig, rerank
    from ..report.formats import render_records

    if output is None and cache is None:
        raise TierankInputError("give -o/--output DIR (runs, table and cache are written there)")
    if workers is not None and ray is None:
        raise TierankInputError("--workers needs --ray")
    if ray is not None:
        from ..cluster import require_ray

        require_ray()
    os.environ.setdefault(
        "TQDM_DISABLE", "1"
    )  # model loaders' tqdm bars (GGUF dequantization); rich shows progress
    measures = list(measure or RERANK_MEASURES)
    console = Console(emoji=False, stderr=True)

    def warn(message: str) -> None:
        console.print(f"tierank: warning: {message}", markup=False, highlight=False, soft_wrap=True)

    try:
        with Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=not sys.stderr.isatty(),
        ) as prog:

            def progress(label: str, total: int):
                task = prog.add_task(f"scoring {label}", total=total)
                return lambda: prog.advance(task)

            config = RerankConfig(
                data,
                model,
                regimes,
                measures,
                out_dir=output,
                candidates=candidates,
                qrels=qrels,
                cache_dir=cache,
                batch_size=batch_size,
                queries=queries,
                depth=depth,
                max_queries=max_queries,
                device=device,
                budget=budget,
                max_doc_tokens=max_doc_tokens,
                tie_break=tie_break,
                progress=progress,
                threads=threads,
                warn=warn,
                ray=None if ray is None else (True if ray == "local" else ray),
                workers=workers,
                batch_sizes=None if batch_sizes is None else _sizes(batch_sizes),
                backend=backend,
                orders=None if orders is None else _sizes(orders, "--orders", 0),
                padding_sides=None if padding_sides is None else _sides(padding_sides),
            )
            result = rerank(config)
    except TierankInputError:
        raise
    except (
        TierankError
    ) as e:  # a model that cannot be loaded, a scorer's bad output: one line, exit 2 (input_errors)
        raise TierankInputError(str(e)) from None
    except KeyboardInterrupt:
        console.print(
            "tierank: interrupted; scores so far are cached, run the same command to resume",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(130) from None
    if fmt is not Fmt("table"):
        sys.stdout.write(
            render_records(result.rows, TABLE_FIELDS, fmt.value, document=result.document())
        )
        return
    Console(emoji=False, width=max(Console().width, 180)).print(_rerank_table(result))
    variance = result.settings.get("variance")
    if variance:
        sizes = ",".join(map(str, variance["batch_sizes"]))
        orders = (
            f" and candidate orders {','.join(map(str, variance['orders']))}"
            if variance.get("orders")
            else ""
        )
        if len(variance.get("padding_sides") or []) > 1:
            orders += f" and padding sides {','.join(variance['padding_sides'])}"
        for v, row in variance["variants"].items():
            spreads = ", ".join(
                f"{m} E spread {x['spread']:.4g}" for m, x in row["measures"].items()
            )
            print(
                f"batch sizes {sizes}{orders}: {v}: {row['changed_share']:.1%} of scores changed; {spreads}"
            )
