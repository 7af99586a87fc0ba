"""`tierank rerank`: the low-precision reranking protocol.

The command gathers its options into one `tierank.hps.command.RerankOptions` (checked when made) and
calls `tierank.hps.command.run_rerank`, which runs `tierank.hps.protocol.rerank` (which checks
everything before loading a model, and writes every file of OUT/) and prints the table; an interrupt
exits 130.  Its ``--model`` and ``--regimes`` help comes from `tierank.hps.registry` and
`tierank.hps.variants`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..hps.command import RerankOptions, run_rerank
from ..hps.protocol import RERANK_MEASURES, RERANK_REGIMES
from ..hps.registry import backend_help, model_help
from ..hps.variants import VARIANT_HELP
from ..io.beir import QUERY_SETS
from ..settings import EvalSettings
from .app import app
from .common import Fmt, input_errors, measures_option
from .options import FROM_OPTIONS, Offer, with_settings


@app.command("rerank")
@input_errors
@with_settings(settings=Offer(EvalSettings, ("tie_break",)))
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
    settings: EvalSettings = FROM_OPTIONS,
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
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat",
            min=1,
            help="Run-to-run variance: score every variant N times in all (each repeat under its own "
            "cache key); table.json 'variance' gets the repeats' spread of E[M] beside the batch "
            "sizes' and the tie range, and which moves each number most",
        ),
    ] = 1,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            metavar="FILE",
            help="Also write a manifest of what made the numbers (the data's, the candidates', "
            "the qrels', each model file's and each written run's SHA-256, the model's dtype per "
            "regime, device, batch size, backend, versions, the table's numbers) as YAML; "
            "`tierank verify FILE` evaluates the written runs again.",
        ),
    ] = None,
) -> None:
    """The low-precision reranking protocol (the paper's Table 1): score every candidate under every
    precision regime, write one run per regime, report M at FP32 and per regime M_obl, E[M], range,
    bias, tie statistics and scoring time. Scores are cached; an interrupted run resumes."""
    options = RerankOptions(
        data,
        model,
        candidates=candidates,
        regimes=regimes,
        measures=tuple(measure or ()),
        output=output,
        qrels=qrels,
        cache=cache,
        batch_size=batch_size,
        queries=queries,
        depth=depth,
        max_queries=max_queries,
        device=device,
        backend=backend,
        budget=budget,
        max_doc_tokens=max_doc_tokens,
        threads=threads,
        tie_break=str(settings.tie_break),
        fmt=fmt.value,
        ray=ray,
        workers=workers,
        batch_sizes=batch_sizes,
        orders=orders,
        padding_sides=padding_sides,
        repeat=repeat,
        manifest=manifest,
    )
    try:
        run_rerank(options)
    except KeyboardInterrupt:  # run_rerank said that the scores so far are cached
        raise typer.Exit(130) from None
