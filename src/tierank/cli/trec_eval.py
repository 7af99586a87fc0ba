"""`tierank trec_eval`: trec_eval 10's own command line, byte for byte on stdout.

``tierank trec_eval [-q] [-m measure[.params]]... [-c] [-n] [-l N] [-J] [-M N] [-N N] QRELS RUN``
reads its arguments as trec_eval does (getopt with GNU permutation: options anywhere, long
options and their unique prefixes, ``--measure=X``), prints trec_eval's layout on stdout, and
refuses as trec_eval refuses, with its messages on stderr and its exit codes:

* 1: a bad option or a missing argument (``getopt``'s message, then trec_eval's usage), not two
  files, an illegal measure (``trec_eval: illegal measure 'NAME'``);
* 2: a file that cannot be read or parsed (tierank's located line: file, line, reason), an
  unknown ``-R`` or ``-T`` format, a measure's bad parameters
  (``trec_eval: Cannot initialize measure 'NAME'``, after tierank's reason);
* 4: without ``-c``, a qrels query that the run does not answer
  (``trec_eval: result qid 'Q' not found in qrels``, after the ``-q`` lines of the queries before
  it, as trec_eval 10 does);
* 7: no query with both results and relevance information.

Where tierank goes on or refuses deliberately: ``-R prefs|qrels_prefs|qrels_jg`` and ``-Z``
(not supported: exit 2 with one line saying so), ``-D`` (debug output: ignored, said on stderr),
``-o`` (obsolete in trec_eval too: no effect), ``-M`` below 1 (refused, exit 2), tierank's measure
names besides trec_eval's (``-m nDCG@10``: accepted), and several runs after the qrels (each
run's block is labelled with a first line ``run <TAB> all <TAB> NAME``).

After the output, on stderr, one note when tied scores make a printed value uncertain at its
fourth decimal (its range over the orderings of tied documents reaches 0.00005): how many
queries, which measures, and the command that shows expected, min and max.  Nothing is said
when no printed value moves.  ``--stat S`` prints the statistic S (expected, min, max, std, range,
bias) in the same layout instead of the tie-oblivious value.

The command line is read without typer (`tierank.cli.trec_eval_args`), and only what the command
prints is computed: the oblivious values of the printed measures and, for the note
(`tierank.cli.trec_eval_note`), their range (``--stat``: the full statistics).
"""

from __future__ import annotations

import sys

from ..measures.plans import empty_is_nan
from .trec_eval_args import (
    HELP,
    MOMENTS,
    TREC_EVAL_VERSION,
    USAGE,
    Args,
    Refused,
    atol,
    parse,
)
from .trec_eval_note import UNCERTAIN, eval_command, tie_note

__all__ = ["run", "parse", "atol", "Args", "Refused", "tie_note", "eval_command", "UNCERTAIN"]


def _plan(a: Args):
    """The measures of ``-m`` (trec_eval's ``official`` when none), checked one text at a time as
    trec_eval's ``mark_measure`` checks them: the first illegal one refuses with exit 1."""
    from ..errors import TierankInputError
    from ..measures.names import plan

    texts = a.measures or ["official"]
    for text in texts:
        try:
            plan([text])
        except TierankInputError as e:
            name, dot, params = text.partition(".")
            if "not implemented" in str(e) or "not supported" in str(e):
                raise Refused(2, f"tierank trec_eval: {e}") from None
            if dot and params and _known(name):  # trec_eval's init_meas refuses the parameters
                raise Refused(
                    2, f"tierank: error: {e}", f"trec_eval: Cannot initialize measure '{name}'"
                ) from None
            lines = []
            if dot and not params:
                lines.append(f"trec_eval: improper measure in parameter '{name}'")
            lines.append(f"trec_eval: illegal measure '{name}'")
            raise Refused(1, *lines) from None
    p = plan(texts).with_docs_in_collection(a.docs_in_collection if a.docs_in_collection else None)
    return p.with_trec_eval_quirks().with_trec_eval_counts(
        complete=a.complete, rel=a.rel, judged_only=a.judged_only
    )


def _known(name: str) -> bool:
    """Whether ``name`` alone is a measure or nickname tierank takes."""
    from ..errors import TierankInputError
    from ..measures.names import plan

    try:
        plan([name])
    except TierankInputError:
        return False
    return True


def _check_formats(a: Args) -> None:
    """trec_eval's refusals of ``-R``, ``-T``, ``-Z``; tierank's of ``-M`` below 1."""
    if a.rel_format != "qrels":
        if a.rel_format in ("prefs", "qrels_prefs", "qrels_jg"):
            raise Refused(
                2,
                f"tierank trec_eval: -R {a.rel_format}: tierank reads TREC qrels only (-R qrels); "
                "trec_eval's preference and judgment-group files are not supported",
            )
        raise Refused(2, f"trec_eval: Illegal rel_format '{a.rel_format}'")
    if a.results_format != "trec_results":
        raise Refused(2, f"trec_eval: Illegal retrieval results format '{a.results_format}'")
    if a.zscores is not None:
        raise Refused(2, "tierank trec_eval: -Z: z-score standardisation is not supported")
    if a.max_depth is not None and a.max_depth < 1:
        raise Refused(
            2, f"tierank trec_eval: -M {a.max_depth}: at least 1 document per topic is read"
        )


def run(argv: list[str], out=None, err=None) -> int:
    """``tierank trec_eval ARGV``: the exit code; the output written to ``out`` (a binary stream,
    default stdout's) and the messages to ``err`` (a text stream, default stderr)."""
    if out is None:
        sys.stdout.flush()
        out = sys.stdout.buffer
    err = sys.stderr if err is None else err
    try:
        return _run(argv, out, err)
    except Refused as r:
        out.flush()
        for line in r.lines:
            print(line.rstrip("\n"), file=err)
        return r.code
    except BrokenPipeError:  # the reader went away (``| head``): nothing more to say
        return 0


def _run(argv: list[str], out, err) -> int:
    from ..errors import TierankInputError

    a = parse(argv)
    if a.help:
        out.write(HELP.encode())
        return 0
    if a.version:
        from ..version import __version__

        print(f"trec_eval version {TREC_EVAL_VERSION} (tierank {__version__})", file=err)
        return 0
    plan = _plan(a)
    if len(a.files) < 2:
        raise Refused(1, USAGE.rstrip("\n"))
    _check_formats(a)
    if a.debug is not None:
        print(f"tierank trec_eval: -D {a.debug}: debug output is not written", file=err)
    try:
        return _evaluate(a, plan, out, err)
    except TierankInputError as e:
        raise Refused(2, *(f"tierank: error: {p}" for p in e.problems)) from None


def _evaluate(a: Args, plan, out, err) -> int:
    from ..errors import NothingToEvaluate
    from ..evaluate import Evaluator
    from ..io.readers import run_tag
    from ..io.sources import hold
    from ..report.formats.grouped import ResultTable
    from ..report.formats.trec_eval import render_pieces
    from ..settings import EvalSettings

    qrels, runs = a.files[0], a.files[1:]
    settings = EvalSettings(
        rel=a.rel,
        complete=a.complete,
        judged_only=a.judged_only,
        unjudged="condensed" if a.judged_only else "nonrelevant",
        max_depth=a.max_depth,
    )
    ev = Evaluator(qrels, plan, settings)
    names = _names(runs)
    results, runids = {}, {}
    for name, path in zip(names, runs):
        source = hold(path)
        try:
            results[name] = ev.evaluate(source, moments=a.stat in MOMENTS)
        except NothingToEvaluate:
            if not a.complete:  # trec_eval 10 stops at the first qrels query first
                first = min(_qrels_queries(ev), key=lambda q: q.encode("utf-8"))
                raise Refused(4, f"trec_eval: result qid '{first}' not found in qrels") from None
            raise Refused(7, "trec_eval: No queries with both results and relevance info") from None
        runids[name] = run_tag(source) if plan.runid else None
        if a.judged_only:
            empty_is_nan(results[name].stats, a.rel)
    table = ResultTable.of(results, runids={k: v for k, v in runids.items() if v is not None})
    if not a.complete:
        missing = _first_missing(ev, results)
        if missing is not None:
            name, qid = missing
            if a.per_query:
                _write_before(out, table, plan, a, name, qid)
            out.flush()
            raise Refused(4, f"trec_eval: result qid '{qid}' not found in qrels")
    for piece in render_pieces(table, a.per_query, plan=plan, stat=a.stat, summary=a.summary):
        out.write(piece)
    out.flush()
    said = tie_note(results, plan, a)
    if said:
        print(said, file=err)
    return 0


def _names(runs: list[str]) -> list[str]:
    """Each run's name: its shortest distinguishing path suffix (`tierank.io.naming.run_names`); the
    same file twice is refused."""
    if len(runs) == 1:
        return list(runs)
    from ..io.naming import run_names

    return list(run_names(runs))


def _first_missing(ev, results: dict) -> tuple[str, str] | None:
    """The first (run name, qrels query) in trec_eval's order whose query the run does not answer
    (trec_eval 10 stops there without ``-c``), or None."""
    judged = _qrels_queries(ev)
    for name, result in results.items():
        answered = set(result.qids)
        if len(answered) >= len(judged):
            continue
        for qid in sorted(judged, key=lambda s: s.encode("utf-8")):
            if qid not in answered:
                return name, qid
    return None


def _qrels_queries(ev) -> list[str]:
    """The query ids of the evaluator's qrels, each once."""
    from .. import compute as ac

    return ac.unique(ac.decoded(ev.qrels.qid)).to_pylist()


def _write_before(out, table, plan, a: Args, name: str, qid: str) -> None:
    """What trec_eval prints before it stops at query ``qid`` of run ``name``: the runs before it
    whole, then that run's ``-q`` lines of the queries sorted before ``qid``."""
    from ..report.formats.trec_eval import render_pieces

    text = b"".join(bytes(p) for p in render_pieces(table, True, plan=plan, stat=a.stat))
    stop = qid.encode("utf-8")
    label = f"{'run':<22}\tall\t".encode()
    current = None if table.keys else name
    for line in text.splitlines(keepends=True):
        if table.keys and line.startswith(label):
            current = line[len(label) :].rstrip(b"\n").decode("utf-8")
        parts = line.split(b"\t")
        if current == name and len(parts) == 3 and (parts[1] == b"all" or parts[1] >= stop):
            if not line.startswith(label):
                return
        out.write(line)
