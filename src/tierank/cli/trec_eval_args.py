"""trec_eval 10's command line read as its ``getopt_long`` reads it (GNU permutation: options
anywhere, long options and their unique prefixes, ``--measure=X``), for ``tierank trec_eval``
(`tierank.cli.trec_eval`): the options into `Args`, a bad one refused with getopt's message and
trec_eval's usage (`Refused`, exit 1)."""

from __future__ import annotations

import getopt
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..report.formats import TREC_STATS

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

#: the statistics ``--stat`` takes: those ``--format trec_eval`` prints
STATS = TREC_STATS
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
