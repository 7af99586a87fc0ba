"""Several judges of the same (query, document) pairs, read through the one input door.

A judge is any qrels source [`tierank.io.sources.read`][tierank.io.sources.read] reads (a TREC or BEIR
file, Parquet, a dict of dicts, a `Qrels`); several judges are several such sources, or one text file
with a judge column (``qid judge docid grade``, [`read_judge_column`][tierank.io.judgments.read_judge_column]).
Grades are read as floats, never truncated ([`non_integer`][tierank.io.judgments.non_integer] counts the
grades that are not whole numbers, for a note).

The checks every judge passes ([`check_scale`][tierank.io.judgments.check_scale],
[`align`][tierank.io.judgments.align]):

* a grade outside the declared scale (``LO..HI``; the LLMJudge files hold a 5 and a 10 on a 0-3 scale)
  is a located error (``file:line``), or, with ``out_of_scale="clip"`` / ``"drop"``, clipped to the
  scale / left out, with a note that counts the rows touched;
* a pair judged twice with different grades is a located error (the plain qrels reader refuses any
  repeated pair; the judge-column reader counts identical repeats in a note and keeps one);
* a pair the reference judged and a judge did not (or the other way round) is an error naming the
  judge, how many pairs and the first of them, or, with ``missing="drop"``, left out of that judge's
  comparison, with a note that counts them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..errors import Problem, ProblemLog, TierankInputError, quote
from . import lexer
from .model import Qrels
from .rows import RowLog, content_lines, fields, finite_grade, space_table

#: what happens to a grade outside the declared scale
OUT_OF_SCALE = ("error", "clip", "drop")
#: what happens to a pair judged on one side only
MISSING = ("error", "drop")


def parse_scale(text: str) -> tuple[float, float]:
    """``"LO..HI"`` as ``(lo, hi)``.

    >>> parse_scale("0..3")
    (0.0, 3.0)
    """
    lo, sep, hi = str(text).partition("..")
    a, b = lexer.parse_number(lo.strip()), lexer.parse_number(hi.strip())
    if not sep or a is None or b is None or not np.isfinite([a, b]).all() or a > b:
        raise TierankInputError(
            f"--scale {quote(str(text))}: expected LO..HI with LO <= HI, finite numbers (e.g. 0..3)"
        )
    return float(a), float(b)


def non_integer(grades: np.ndarray) -> int:
    """How many of ``grades`` are not whole numbers (read as floats, kept as floats)."""
    g = np.asarray(grades, dtype=np.float64)
    return int(np.count_nonzero(np.isfinite(g) & (g != np.round(g))))


def _local_text(source: str) -> bool:
    return "://" not in source and os.path.isfile(source)


def _row_lines(qrels: Qrels) -> np.ndarray | None:
    """Each row's line in ``qrels``' file, or None where it was not read from a local text file (or the
    rows do not follow its lines one for one)."""
    if not _local_text(qrels.source):
        return None
    try:
        data = lexer.load(qrels.source)
    except TierankInputError:
        return None
    lines = content_lines(data)
    if len(lines) == len(qrels) + 1:  # a BEIR header line
        lines = lines[1:]
    return lines if len(lines) == len(qrels) else None


def _pair(qrels: Qrels, r: int) -> str:
    return f"query {quote(str(qrels.qid[r]))} document {quote(str(qrels.docid[r]))}"


def check_scale(
    qrels: Qrels, scale: tuple[float, float] | None, out_of_scale: str = "error"
) -> tuple[Qrels, str | None]:
    """``qrels`` with every grade inside ``scale`` (``(lo, hi)``; None: no check), and a note when rows
    were touched.

    Raises
    ------
    TierankInputError
        One located line per grade outside the scale (``file:line``, or the row of an input that is not
        a text file) when ``out_of_scale`` is ``"error"``.
    """
    if out_of_scale not in OUT_OF_SCALE:
        raise TierankInputError(
            f"--out-of-scale {quote(out_of_scale)}: expected one of {', '.join(OUT_OF_SCALE)}"
        )
    if scale is None:
        return qrels, None
    lo, hi = scale
    g = qrels.grade
    bad = np.flatnonzero((g < lo) | (g > hi))
    if len(bad) == 0:
        return qrels, None
    shown = f"{lo:g}..{hi:g}"
    if out_of_scale == "error":
        log = RowLog(qrels.source, _row_lines(qrels))
        for r in bad.tolist():
            log.row(
                r,
                f"grade {g[r]:g} of {_pair(qrels, r)} is outside the scale {shown} "
                "(--scale LO..HI declares it; --out-of-scale clip|drop changes such grades, counted)",
            )
        raise log.error()
    if out_of_scale == "clip":
        fixed = Qrels(qrels.qid, qrels.docid, np.clip(g, lo, hi), qrels.source)
        verb = f"clipped to {shown}"
    else:
        keep = np.ones(len(g), bool)
        keep[bad] = False
        idx = pa.array(np.flatnonzero(keep))
        fixed = Qrels(qrels.qid.take(idx), qrels.docid.take(idx), g[keep], qrels.source)
        verb = "dropped"
    values = ", ".join(f"{v:g}" for v in np.unique(g[bad]))
    plural = "s" * (len(bad) != 1)
    return fixed, (
        f"{qrels.source}: {len(bad)} row{plural} with a grade outside the scale {shown} "
        f"({values}) {verb}"
    )


# ------------------------------------------------------------------------------ a judge column


def read_judge_column(path: str | os.PathLike) -> tuple[dict[str, Qrels], list[str]]:
    """The judges of one text file with a judge column (``qid judge docid grade``, plain or gzip),
    ``{judge: Qrels}`` in the order the judges first appear, and notes (identical repeated lines, counted
    and kept once).

    Raises
    ------
    TierankInputError
        Located lines: a line without 4 fields, a grade that is not a finite number, a pair one judge
        graded twice with different grades.
    """
    src = os.fspath(path)
    data = lexer.load(path)
    lines = content_lines(data)
    if len(lines) == 0:
        raise TierankInputError([Problem(src, None, "empty: no judgment lines")])
    table = space_table(
        data,
        ["qid", "judge", "docid", "grade"],
        {"qid": pa.string(), "judge": pa.string(), "docid": pa.string(), "grade": pa.float64()},
    )
    if table is None or table.num_rows != len(lines):
        _judge_lines_problems(src, data)  # raises with the located lines
        raise TierankInputError([Problem(src, None, "cannot be read as qid judge docid grade")])
    grade = table.column("grade").to_numpy()
    bad = np.flatnonzero(~np.isfinite(grade))
    if len(bad):
        log = ProblemLog(src)
        for r in bad.tolist():
            log(int(lines[r]), f"relevance grade {grade[r]!r} is not a finite number")
        raise log.error()
    qid = table.column("qid").to_numpy(zero_copy_only=False).astype(object)
    judge = table.column("judge").to_numpy(zero_copy_only=False).astype(object)
    docid = table.column("docid").to_numpy(zero_copy_only=False).astype(object)
    key = np.char.add(np.char.add(judge.astype(str), "\0"), np.char.add(qid.astype(str), "\0"))
    key = np.char.add(key, docid.astype(str))
    order = np.argsort(key, kind="stable")
    same = key[order][1:] == key[order][:-1]
    notes = []
    keep = np.ones(len(grade), bool)
    if same.any():
        later = order[1:][same]
        first = order[:-1][same]
        conflict = grade[later] != grade[first]
        if conflict.any():
            log = ProblemLog(src)
            for a, b in sorted(
                zip(later[conflict].tolist(), first[conflict].tolist(), strict=True)
            ):
                log.repeated(
                    int(lines[a]),
                    f"judge {quote(str(judge[a]))} grades query {quote(str(qid[a]))} document "
                    f"{quote(str(docid[a]))} twice, {grade[b]:g} and {grade[a]:g}",
                    int(lines[b]),
                )
            raise log.error()
        keep[later] = False
        notes.append(
            f"{src}: {int(same.sum())} repeated line{'s' * (int(same.sum()) != 1)} with the same grade "
            "counted once"
        )
    names, first_at = np.unique(judge[keep].astype(str), return_index=True)
    out: dict[str, Qrels] = {}
    for name in names[np.argsort(first_at)].tolist():
        rows = keep & (judge == name)
        out[name] = Qrels(
            pa.array(qid[rows].tolist(), pa.string()),
            pa.array(docid[rows].tolist(), pa.string()),
            grade[rows].astype(np.float64),
            f"{src}[{name}]",
        )
    return out, notes


def _judge_lines_problems(src: str, data: bytes) -> None:
    """Raise with the located lines of ``data`` that are not ``qid judge docid grade`` (the error path)."""
    log = ProblemLog(src)
    for lineno, parts in fields(data, log, "qid judge docid grade", 4):
        finite_grade(log, lineno, parts[3])
    log.raise_if_any()


# ----------------------------------------------------------------------------------- aligned


@dataclass(frozen=True)
class Judged:
    """A reference and several judges over the pairs each judge shares with it.

    ``qid``, ``docid``: the reference's pairs (sorted by query, then document); ``reference``: its
    grades; ``grades``: ``(judges, pairs)``, NaN where a judge left a pair out (``missing="drop"``);
    ``judges``: the judges' names; ``notes``: what was changed, counted."""

    qid: np.ndarray
    docid: np.ndarray
    reference: np.ndarray
    grades: np.ndarray
    judges: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def queries(self) -> np.ndarray:
        """The queries (sorted)."""
        return np.unique(self.qid)

    def judge_qrels(self, j: int) -> Qrels:
        """Judge ``j``'s grades as qrels (the pairs it graded)."""
        ok = ~np.isnan(self.grades[j])
        return Qrels(
            pa.array(self.qid[ok].tolist(), pa.string()),
            pa.array(self.docid[ok].tolist(), pa.string()),
            self.grades[j][ok],
            self.judges[j],
        )

    def reference_qrels(self, name: str = "reference") -> Qrels:
        """The reference's grades as qrels."""
        return Qrels(
            pa.array(self.qid.tolist(), pa.string()),
            pa.array(self.docid.tolist(), pa.string()),
            self.reference,
            name,
        )


def _keys(q: Qrels) -> np.ndarray:
    qid = np.asarray(q.qid.to_numpy(zero_copy_only=False), dtype=str)
    doc = np.asarray(q.docid.to_numpy(zero_copy_only=False), dtype=str)
    return np.char.add(np.char.add(qid, "\0"), doc)


def align(
    reference: Qrels,
    judges: Mapping[str, Qrels],
    missing: str = "error",
    scale: tuple[float, float] | None = None,
    out_of_scale: str = "error",
) -> Judged:
    """The reference and ``judges`` aligned on the reference's pairs (see the module's documentation for
    the checks and the options).  ``scale`` None: the reference's smallest and largest grade (the
    reference itself is then inside it).

    Raises
    ------
    TierankInputError
        Grades outside the scale (``out_of_scale="error"``), pairs judged on one side only
        (``missing="error"``): one line per problem, located.
    """
    if missing not in MISSING:
        raise TierankInputError(f"--missing {quote(missing)}: expected one of {', '.join(MISSING)}")
    if not judges:
        raise TierankInputError("no judge to compare with the reference")
    if scale is None:
        scale = (float(reference.grade.min()), float(reference.grade.max()))
    notes: list[str] = []
    problems: list[Problem] = []
    lo, hi = scale
    said = _scaled(reference, scale, out_of_scale, problems)
    notes += [said] if said else []
    rkey = _keys(reference)
    inside = (reference.grade >= lo) & (reference.grade <= hi)
    # pairs the reference had outside the scale and dropped: a judge's grade of them is no extra pair
    gone = np.sort(rkey[~inside]) if out_of_scale == "drop" else rkey[:0]
    keep = inside if out_of_scale == "drop" else np.ones(len(rkey), bool)
    order = np.flatnonzero(keep)[np.argsort(rkey[keep], kind="stable")]
    rkey = rkey[order]
    qid = np.asarray(reference.qid.to_numpy(zero_copy_only=False), dtype=object)[order]
    docid = np.asarray(reference.docid.to_numpy(zero_copy_only=False), dtype=object)[order]
    ref = np.clip(reference.grade[order], lo, hi)
    grades = np.full((len(judges), len(ref)), np.nan)
    for j, (name, q) in enumerate(judges.items()):
        said = _scaled(q, scale, out_of_scale, problems)
        notes += [said] if said else []
        grades[j], dropped, extra = _place(q, rkey, gone, scale, out_of_scale)
        lacking = np.flatnonzero(np.isnan(grades[j]) & ~dropped)
        if len(extra) == 0 and len(lacking) == 0:
            continue
        parts = []
        if len(lacking):
            parts.append(
                f"{len(lacking)} pair{'s' * (len(lacking) != 1)} of the reference not graded "
                f"(first: query {quote(str(qid[lacking[0]]))} document {quote(str(docid[lacking[0]]))})"
            )
        if len(extra):
            parts.append(
                f"{len(extra)} pair{'s' * (len(extra) != 1)} the reference did not grade "
                f"(first: {_pair(q, int(extra[0]))})"
            )
        if missing == "error":
            problems.append(
                Problem(
                    q.source,
                    None,
                    f"judge {quote(name)}: {' and '.join(parts)}; --missing drop compares the pairs "
                    "both graded",
                )
            )
        else:
            notes.append(f"judge {name}: {' and '.join(parts)}: left out of its comparison")
    if problems:
        raise TierankInputError(problems)
    floats = non_integer(ref) + non_integer(grades[~np.isnan(grades)])
    if floats:
        notes.append(
            f"{floats} grade{'s' * (floats != 1)} not a whole number: read as floats, never truncated "
            "(kappa takes each distinct grade as a category)"
        )
    return Judged(qid, docid, ref, grades, tuple(judges), tuple(notes))


def _place(
    q: Qrels, rkey: np.ndarray, gone: np.ndarray, scale: tuple[float, float], out_of_scale: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Judge ``q``'s grades on the reference's sorted pairs ``rkey`` (NaN: not graded, clipped to
    ``scale``), which of them ``out_of_scale="drop"`` left out, and the rows of ``q`` the reference
    did not grade (those of the reference's dropped pairs ``gone`` aside)."""
    lo, hi = scale
    row = np.full(len(rkey), np.nan)
    key = _keys(q)
    found = _member(rkey, key)
    at = np.searchsorted(rkey, key[found])
    graded = q.grade[found]
    dropped = np.zeros(len(rkey), bool)
    if out_of_scale == "drop":
        ok = (graded >= lo) & (graded <= hi)
        dropped[at[~ok]] = True
        at, graded = at[ok], graded[ok]
    row[at] = np.clip(graded, lo, hi)
    return row, dropped, np.flatnonzero(~found & ~_member(gone, key))


def _scaled(
    q: Qrels, scale: tuple[float, float], policy: str, problems: list[Problem]
) -> str | None:
    """The note of `check_scale` (its located errors added to ``problems``)."""
    try:
        return check_scale(q, scale, policy)[1]
    except TierankInputError as e:
        problems.extend(e.problems)
        return None


def _member(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Whether each of ``keys`` is in ``sorted_keys``."""
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


#: suffixes left out of a judge's name (``judges/gpt4o.qrels.gz`` is the judge ``gpt4o``)
NAME_SUFFIXES = (".gz", ".qrels", ".txt", ".tsv", ".trec")


def _short(names: list[str]) -> list[str]:
    """``names`` without `NAME_SUFFIXES`, where they stay distinct and non-empty."""
    out = []
    for n in names:
        stem = n
        while stem.lower().endswith(NAME_SUFFIXES):
            cut = stem.rsplit(".", 1)[0]
            if not cut:
                break
            stem = cut
        out.append(stem)
    return out if len(set(out)) == len(out) else names


def read_judges(
    sources: Sequence,
    names: Sequence[str] | None = None,
    judge_column: bool = False,
) -> tuple[dict[str, Qrels], list[str]]:
    """``{judge: Qrels}`` from ``sources``: each a qrels source read through the one input door (named
    by ``names``, default their shortest distinguishing path suffix without `NAME_SUFFIXES`), or, with ``judge_column``, text
    files of ``qid judge docid grade`` lines (named by that column); and notes.

    >>> judges, _ = read_judges([{"q": {"d": 1}}, {"q": {"d": 2.5}}], names=["a", "b"])
    >>> {k: v.grade.tolist() for k, v in judges.items()}
    {'a': [1.0], 'b': [2.5]}
    """
    from .naming import name_runs
    from .sources import read

    notes: list[str] = []
    out: dict[str, Qrels] = {}
    if judge_column:
        for s in sources:
            found, said = read_judge_column(s)
            notes += said
            twice = sorted(set(found) & set(out))
            if twice:
                raise TierankInputError(
                    [
                        Problem(
                            os.fspath(s), None, f"judge {quote(twice[0])} is in an earlier file too"
                        )
                    ]
                )
            out.update(found)
        return out, notes
    if names is None:
        paths = [s for s in sources if isinstance(s, (str, os.PathLike))]
        if len(paths) == len(sources):
            names = _short(list(name_runs([os.fspath(p) for p in paths])))
        else:
            names = [f"judge{i + 1}" for i in range(len(sources))]
    if len(set(names)) != len(names):
        raise TierankInputError("two judges have the same name")
    for name, s in zip(names, sources, strict=True):
        source = os.fspath(s) if isinstance(s, (str, os.PathLike)) else name
        out[name] = read(s, "qrels", source)
    return out, notes


__all__ = [
    "MISSING",
    "OUT_OF_SCALE",
    "Judged",
    "align",
    "check_scale",
    "non_integer",
    "parse_scale",
    "read_judge_column",
    "read_judges",
]
