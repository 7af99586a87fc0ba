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

The command line is read here without typer, and only what the command prints is computed:
the oblivious values of the printed measures and, for the note, their range (``--stat``: the
full statistics).
"""

from __future__ import annotations

import getopt
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from ..compat.pytrec_eval import empty_is_nan

#: trec_eval's short options (``getopt_long``'s optstring in trec_eval.c)
SHORT = "hvqm:cl:nD:JN:M:R:T:oZ:"
#: trec_eval's long options, then tierank's own (``--stat``)
LONG = [
    "help",
    "version",
    "query_eval_wanted",
    "measure=",
    "complete_rel_info_wanted",
    "level_for_rel=",
    "nosummary",
    "Debug_level=",
    "Judged_docs_only",
    "Number_docs_in_coll=",
    "Max_retrieved_per_topic=",
    "Rel_info_format=",
    "Results_format=",
    "Output_old_results_format=",
    "Zscore=",
    "stat=",
]
#: the long options' short letters
LONG_SHORT = {
    "--help": "-h",
    "--version": "-v",
    "--query_eval_wanted": "-q",
    "--measure": "-m",
    "--complete_rel_info_wanted": "-c",
    "--level_for_rel": "-l",
    "--nosummary": "-n",
    "--Debug_level": "-D",
    "--Judged_docs_only": "-J",
    "--Number_docs_in_coll": "-N",
    "--Max_retrieved_per_topic": "-M",
    "--Rel_info_format": "-R",
    "--Results_format": "-T",
    "--Output_old_results_format": "-o",
    "--Zscore": "-Z",
}

#: trec_eval's usage text (trec_eval.c), printed on a bad command line
USAGE = (
    "Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file\n"
    "   -h: Give full help information, including other options\n"
    "   -q: In addition to summary evaluation, give evaluation for each query\n"
    "   -m: calculate and print measures indicated by 'measure'\n"
    "       ('-m all_qrels' prints all qrels measures, '-m official' is default)\n"
)

HELP = (
    USAGE
    + """
tierank trec_eval: trec_eval 10's command line and output (alias trec_eval='tierank trec_eval').

trec_eval's options: -q (per query), -m measure[.params] (repeatable; official, all_trec, set),
-c (average over every qrels query), -n (no summary), -l N (relevance level), -J (judged
documents only), -M N (ranks read per query), -N N (documents in the collection), -R qrels,
-T trec_results, -o (obsolete, no effect), -v (version), -h (this help).

tierank's additions: several runs after the qrels (each block labelled by a first line
'run <TAB> all <TAB> NAME'); --stat S prints S (oblivious, expected, min, max, std, range,
bias) in the same layout; a note on stderr names the printed values that tied scores move.
The full tie-aware report: tierank eval QRELS RUN -m MEASURE.
"""
)

#: trec_eval's version (what ``trec_eval -v`` says, on stderr)
TREC_EVAL_VERSION = "10.0"

#: a printed value whose range over tie orderings reaches this is uncertain at its 4th decimal
UNCERTAIN = 0.00005

#: the statistics ``--stat`` takes
STATS = ("oblivious", "expected", "min", "max", "std", "range", "bias")
#: those that need the expectation or the variance over tie orderings (the others, and the note,
#: read the oblivious value, min and max only)
MOMENTS = frozenset({"expected", "std", "bias"})


class Refused(Exception):
    """trec_eval's refusal: its message lines (stderr) and exit code."""

    def __init__(self, code: int, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.code = code
        self.lines = lines


@dataclass
class Args:
    """A trec_eval command line, read."""

    per_query: bool = False
    measures: list[str] = field(default_factory=list)
    complete: bool = False
    rel: int = 1
    summary: bool = True
    judged_only: bool = False
    docs_in_collection: int | None = None
    max_depth: int | None = None
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscores: str | None = None
    debug: str | None = None
    stat: str = "oblivious"
    help: bool = False
    version: bool = False
    files: list[str] = field(default_factory=list)


def atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text`` (blanks, a sign, digits), 0 where there is none.

    >>> atol("12abc"), atol(" -3"), atol("x"), atol("2.5")
    (12, -3, 0, 2)
    """
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else 0


def _getopt_message(err: getopt.GetoptError) -> str:
    """glibc's ``getopt_long`` message for what Python's getopt refused."""
    opt, msg = err.opt, err.msg
    if len(opt) == 1:
        if "requires argument" in msg:
            return f"trec_eval: option requires an argument -- '{opt}'"
        return f"trec_eval: invalid option -- '{opt}'"
    if "not a unique prefix" in msg:
        return f"trec_eval: option '--{opt}' is ambiguous"
    if "requires argument" in msg:
        return f"trec_eval: option '--{opt}' requires an argument"
    if "must not have an argument" in msg:
        return f"trec_eval: option '--{opt}' doesn't allow an argument"
    return f"trec_eval: unrecognized option '--{opt}'"


#: the options without a value: (the field of `Args` they set, the value)
FLAG_OPTIONS: dict[str, tuple[str, bool]] = {
    "-h": ("help", True),
    "-v": ("version", True),
    "-q": ("per_query", True),
    "-c": ("complete", True),
    "-n": ("summary", False),
    "-J": ("judged_only", True),
}
#: the options with a value: (the field of `Args` they set, how the value is read: numbers as C's atol)
VALUE_OPTIONS: dict[str, tuple[str, Callable[[str], object]]] = {
    "-l": ("rel", atol),
    "-N": ("docs_in_collection", atol),
    "-M": ("max_depth", atol),
    "-D": ("debug", str),
    "-R": ("rel_format", str),
    "-T": ("results_format", str),
    "-Z": ("zscores", str),
}


def parse(argv: list[str]) -> Args:
    """trec_eval's command line ``argv`` (without the program name), read as its ``getopt_long``
    reads it; a bad option raises `Refused` (exit 1, getopt's message and the usage)."""
    try:
        opts, files = getopt.gnu_getopt(argv, SHORT, LONG)
    except getopt.GetoptError as err:
        raise Refused(1, _getopt_message(err), USAGE.rstrip("\n")) from None
    a = Args(files=files)
    for opt, val in opts:
        o = LONG_SHORT.get(opt, opt)
        if o in FLAG_OPTIONS:
            attr, value = FLAG_OPTIONS[o]
            setattr(a, attr, value)
        elif o in VALUE_OPTIONS:
            attr, convert = VALUE_OPTIONS[o]
            setattr(a, attr, convert(val))
        elif o == "-m":
            a.measures.append(val)
        elif o == "--stat":
            if val not in STATS:
                raise Refused(
                    1, f"tierank trec_eval: --stat {val!r}: one of {', '.join(STATS)}", USAGE
                )
            a.stat = val
        # -o: obsolete in trec_eval 10 too (its relation flag is read nowhere): no effect
    return a


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
            empty_is_nan(results[name], a.rel)
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


def tie_note(results: dict, plan, a: Args) -> str | None:
    """The note on stderr when a printed value's range over tie orderings reaches `UNCERTAIN`:
    the number of queries, the measures, and the command that shows expected, min and max;
    None when no printed value moves (or when ``--stat`` prints another statistic)."""
    import numpy as np

    if a.stat != "oblivious":
        return None
    moved: dict[str, None] = {}
    queries = 0
    total = 0
    for result in results.values():
        n = len(result.qids)
        total += n
        hit = np.zeros(n, dtype=bool)
        for e in plan.printed:
            m = e.measure
            if m is None or m not in result.stats or getattr(m, "string_valued", False):
                continue
            s = result.stats[m]
            spread = np.asarray(s.max, dtype=float) - np.asarray(s.min, dtype=float)
            per_query = spread >= UNCERTAIN
            shown = False
            if a.per_query and not getattr(m, "summary_only", False) and per_query.any():
                shown = True
            if a.summary and n:
                agg = result.summary(m)
                whole = agg.max - agg.min
                if whole == whole and whole >= UNCERTAIN:
                    shown = True
            if shown:
                moved[e.name] = None
                hit |= per_query
        queries += int(hit.sum())
    if not moved:
        return None
    import shlex

    where = (
        "per query and in the summary"
        if a.per_query and a.summary
        else "per query"
        if a.per_query
        else "in the summary"
    )
    return (
        f"tierank trec_eval: tied scores move printed values by 0.00005 or more ({where}): "
        f"{_listed(list(moved))}; {queries} of {total} queries have such ties. Expected, min and max "
        f"over every ordering of the tied documents: {shlex.join(eval_command(a))}"
    )


#: the measures a note names before it counts the rest
NAMED = 6


def _listed(names: list[str]) -> str:
    """``names`` joined, the first `NAMED` of them and the number of the others.

    >>> _listed(["map", "P_5"]), _listed([f"m{i}" for i in range(9)])
    ('map, P_5', 'm0, m1, m2, m3, m4, m5 and 3 more')
    """
    if len(names) <= NAMED:
        return ", ".join(names)
    return f"{', '.join(names[:NAMED])} and {len(names) - NAMED} more"


def eval_command(a: Args) -> list[str]:
    """The ``tierank eval`` command line that reports the same evaluation with every statistic
    (its table: oblivious, expected, min, max, range per measure): trec_eval's flags as
    ``tierank eval`` takes them, then the files.

    >>> eval_command(parse(["-q", "-l2", "--Judged", "-m", "P.5", "-o", "q", "r"]))
    ['tierank', 'eval', '-q', '-l', '2', '-J', '-m', 'P.5', 'q', 'r']
    """
    out = ["tierank", "eval"]
    out += ["-q"] * a.per_query + ["-c"] * a.complete
    out += ["-l", str(a.rel)] if a.rel != 1 else []
    out += ["-J"] * a.judged_only
    out += ["-M", str(a.max_depth)] if a.max_depth is not None else []
    out += ["-N", str(a.docs_in_collection)] if a.docs_in_collection else []
    for text in a.measures or ["official"]:
        out += ["-m", text]
    return out + a.files
