"""Generate the command-line and measure references of the documentation site.

Nothing in these two pages is typed by hand, so they cannot drift from the code:

* ``reference/cli.md`` walks the click command tree of the typer app ``tierank.cli.app`` (every
  command and sub-command, in ``tierank --help`` order) and writes each one's usage line, help
  text, arguments and options (names, type, default, help) as click itself reports them;
* ``reference/measures.md`` walks the measure registry (``tierank.measures.REGISTRY``): each
  family's name, description, parameters (from its ``Param`` schema), cutoff, the trec_eval names
  that map to it (resolved through ``tierank.measures.names``, trec_eval's own measure table), and
  which statistics are exact and which sampled, read from what the engine labels when it evaluates
  the family on a small run with ties.

MkDocs loads this file as a hook (``hooks:`` in ``mkdocs.yml``): :func:`on_files` adds the two pages
to the site when it is built; ``python docs/gen_ref.py DIR`` writes them into DIR, and the tests call
:func:`cli_reference` and :func:`measure_reference` directly.
"""

from __future__ import annotations

import html
import re
import sys
import warnings
from pathlib import Path

# ---------------------------------------------------------------------------------------------
# command line


def _plain(text: str | None) -> str:
    """Help text without typer/rich markup escapes (``\\[ray]`` -> ``[ray]``), whitespace tidied."""
    if not text:
        return ""
    text = text.replace("\\[", "[")
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip())]
    return "\n\n".join(p for p in paras if p)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """``text`` as inline code inside a table cell (a ``|`` in a backtick span would show its escape)."""
    return "<code>" + html.escape(text).replace("|", "&#124;") + "</code>"


def _commands(cmd, ctx, path: tuple[str, ...]):
    """(path, command, context) for ``cmd`` and every sub-command, depth first, in listing order.

    Duck-typed: typer ships its own copy of click (``typer._click``) whose classes are not click's."""
    yield path, cmd, ctx
    if hasattr(cmd, "list_commands"):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            yield from _commands(
                sub, sub.context_class(sub, info_name=name, parent=ctx), path + (name,)
            )


def command_tree():
    """The click command of ``tierank`` and its context (the typer app as click sees it)."""
    import typer.main

    from tierank.cli import app

    root = typer.main.get_command(app)
    return root, root.context_class(root, info_name="tierank")


def cli_reference() -> str:
    """The command-line reference page (markdown), generated from the typer app."""
    root, ctx = command_tree()
    out = [
        "# Command-line reference",
        "",
        "Generated from the command tree of `tierank.cli` when the site is built (`docs/gen_ref.py`); "
        "`tierank COMMAND --help` prints the same.",
        "",
    ]
    entries = list(_commands(root, ctx, ("tierank",)))
    out += ["| command | what it does |", "|---|---|"]
    for path, cmd, _ in entries[1:]:
        anchor = "-".join(path)
        short = _plain(cmd.get_short_help_str(limit=200))
        out.append(f"| [`{' '.join(path)}`](#{anchor}) | {_cell(short)} |")
    out.append("")
    for path, cmd, cctx in entries:
        level = "#" * min(len(path) + 1, 4)
        anchor = "-".join(path)
        out += [f"{level} `{' '.join(path)}` {{#{anchor}}}", ""]
        usage = cmd.get_usage(cctx).strip()
        out += ["```text", usage, "```", ""]
        if cmd.help:
            out += [_plain(cmd.help), ""]
        params = [p for p in cmd.get_params(cctx) if not getattr(p, "hidden", False)]
        for kind, title in (("argument", "argument"), ("option", "option")):
            rows = [p.get_help_record(cctx) for p in params if p.param_type_name == kind]
            rows = [r for r in rows if r]
            if rows:
                out += [f"| {title} | description |", "|---|---|"]
                out += [f"| {_code(names)} | {_cell(_plain(text))} |" for names, text in rows]
                out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# measures

#: a small run with ties in every query, relevant and non-relevant documents in the same tie groups
_QRELS = {"q1": {"a": 1, "c": 2, "e": 0}, "q2": {"b": 1, "d": 1, "x": 1}}
_RUN = {
    "q1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5, "e": 0.5, "f": 0.25},
    "q2": {"a": 2.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0},
}
#: the same judgments with subtopics, for the families that read them (``needs_subtopics``)
_SUBTOPIC_QRELS = {
    "q1": {"a": {"1": 1}, "c": {"1": 1, "2": 2}, "e": {"2": 0}},
    "q2": {"b": {"1": 1}, "d": {"2": 1}, "x": {"1": 1, "3": 1}},
}


def _instance(cls) -> str:
    """A measure string of family ``cls`` with its default parameters (``cls.example`` where the
    family has a required parameter)."""
    if getattr(cls, "example", None):
        return cls.example
    if cls.cutoff_required:
        return f"{cls.family}@0.5" if cls.cutoff_param is not None else f"{cls.family}@3"
    return cls.family


def _trec_names() -> dict[str, list[str]]:
    """family -> the trec_eval names (``-m`` spellings) that resolve to it."""
    from tierank.measures import names

    out: dict[str, list[str]] = {}
    for name in names.TREC_ORDER:
        if name == names.RUNID:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                measures = names.resolve([name])
        except Exception:  # a trec_eval measure tierank lacks
            continue
        for fam in dict.fromkeys(m.family for m in measures):
            out.setdefault(fam, []).append(name)
    return out


def _methods(cls) -> tuple[str, str]:
    """(how E and std are computed, how min and max are) for family ``cls``: what the engine labels
    ("not labelled" where the family cannot be evaluated on the small run, e.g. one that needs other
    qrels: the page is still generated)."""
    import tierank
    from tierank.measures import sampling

    subtopics = getattr(cls, "needs_subtopics", False)
    limit = tierank.EvalSettings().exact_limit if subtopics else sampling.ENUMERATE

    def labels(enumerate_up_to: int) -> set[str] | None:
        before = sampling.ENUMERATE
        sampling.ENUMERATE = enumerate_up_to
        extra = {"exact_limit": max(enumerate_up_to, 1)} if subtopics else {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = tierank.evaluate(
                    _SUBTOPIC_QRELS if subtopics else _QRELS,
                    _RUN,
                    [_instance(cls)],
                    samples=50,
                    seed=0,
                    **extra,
                )
                recs = res.records(per_query=not getattr(cls, "summary_only", False))
        except Exception:  # noqa: BLE001 - a family this small run cannot evaluate
            return None
        finally:
            sampling.ENUMERATE = before
        return {r.get("method", "exact") for r in recs}

    usual, unenumerated = labels(limit), labels(0)
    if usual is None or unenumerated is None:
        return "not labelled", "not labelled"
    if getattr(cls, "expectation_exact", False) and unenumerated != {"exact"}:
        e = f"expected exact; std exact up to {sampling.ENUMERATE:,} orderings, else sampled"
    elif usual != {"exact"}:
        e = "sampled"
    elif unenumerated != {"exact"}:  # exact here because its orderings are few enough to enumerate
        e = f"exact up to {limit:,} orderings, else sampled"
    else:
        e = "exact"
    extremes = getattr(cls, "extremes_exact", True)
    # "as E": the extremes of the orderings enumerated, else of those drawn (inner bounds)
    return e, ("exact" if extremes is True else e if extremes == "as E" else "sampled")


def _about(cls):
    """The family's metadata (``Measure.about``), defaults filled in even for a class that sets its
    attributes to None or lacks them."""
    from tierank.measures.base import FamilyInfo, FamilyNames

    about = getattr(cls, "about", None)
    try:
        info = about() if about is not None else None
    except Exception:  # noqa: BLE001 - the page is generated whatever one family declares
        info = None
    if info is None:
        names = getattr(cls, "names", None)
        info = FamilyInfo(
            family=cls.family,
            pretty=getattr(cls, "pretty", "") or cls.family,
            definition=getattr(cls, "definition", "") or getattr(cls, "description", "") or "",
            citation=getattr(cls, "citation", "") or "",
            names=names if isinstance(names, FamilyNames) else FamilyNames(),
        )
    return info


def _other_names(info) -> str:
    """``tool `name` ``, ... for the family's names in ranx, MTEB and sentence-transformers."""
    n = info.names
    shown = [
        (tool, getattr(n, attr, None))
        for tool, attr in (
            ("ranx", "ranx"),
            ("MTEB", "mteb"),
            ("sentence-transformers", "sentence_transformers"),
        )
    ]
    return ", ".join(f"{tool} `{name}`" for tool, name in shown if name)


def measure_reference() -> str:
    """The measure reference page (markdown), generated from the measure registry."""
    from tierank.measures import REGISTRY, supported

    trec = _trec_names()
    out = [
        "# Measure reference",
        "",
        "Generated from the measure registry (`tierank.measures.REGISTRY`) when the site is built "
        "(`docs/gen_ref.py`); `tierank measures` prints the same list. Measure strings are written as "
        "ir_measures writes them, `NAME[(param=value,...)][@cutoff]`; `tierank eval -m` and "
        '`tierank.evaluate` also take the trec_eval names listed in each family\'s details. "Exact" is a closed form or a '
        'polynomial algorithm checked against every ordering by the brute-force tests; "sampled" is a '
        'labelled estimate (`method: "sampled"`, `samples`, `seed`, standard error `se`; '
        "`--samples N --seed S`). The exact/sampled column is read from what the engine labels when it "
        "evaluates each family on a small run with ties.",
        "",
        "Each family is also a Python value of `tierank.measures` (`from tierank.measures import nDCG, "
        "AP, P`, then `nDCG@10`, `P@[5, 10]`, `nDCG(dcg='exp-log2')@10`). The names, definitions and "
        "citations below are the data each family carries (`Measure.about()`).",
        "",
        "| family | what it is | cutoff | E, std | min, max |",
        "|---|---|---|---|---|",
    ]
    fams = supported()
    info = {}
    for fam in fams:
        cls = REGISTRY[fam]
        e, mm = _methods(cls)
        cp = cls.cutoff_param
        at = (
            None
            if cp is None
            else f"`@{'r' if cp.name == 'recall' else cp.name}` required (a {cp.description})"
        )
        cut = (
            (at or "`@k` required")
            if cls.cutoff_required
            else "`@k` optional"
            if cls.cutoff_allowed
            else "none"
        )
        short_cut = (
            (
                f"`@{'r' if cp.name == 'recall' else cp.name}` required"
                if cp is not None
                else "`@k` required"
            )
            if cls.cutoff_required
            else "`@k` optional"
            if cls.cutoff_allowed
            else "none"
        )
        about = _about(cls)
        info[fam] = (cls, e, mm, cut, about)
        out.append(
            f"| [`{fam}`](#{fam.lower()}) | {_cell(_plain(about.pretty))} | {short_cut} | {e} | {mm} |"
        )
    out.append("")
    for fam in fams:
        cls, e, mm, cut, about = info[fam]
        out += [
            f"## `{fam}` {{#{fam.lower()}}}",
            "",
            f"**{_plain(about.pretty)}**: {_plain(about.definition)}.",
            "",
        ]
        if cls.description and cls.description != about.definition:
            out += [_plain(cls.description) + ".", ""]
        facts = [
            f"- module: `{cls.__module__}`",
            f"- cutoff: {cut}",
            f"- expectation and standard deviation: **{e}**; minimum and maximum: **{mm}**",
            f"- example: `{_instance(cls)}`",
            f"- name in tierank: `{fam}` (Python: `from tierank.measures import {fam}`)",
            "- name in ir_measures: " + (f"`{about.ir_measures}`" if about.ir_measures else "none"),
            "- trec_eval names: "
            + (
                ", ".join(f"`{n}`" for n in trec[fam])
                if trec.get(fam)
                else ", ".join(f"`{n}`" for n in about.trec_eval) or "none"
            ),
        ]
        others = _other_names(about)
        if others:
            facts.append(f"- names elsewhere: {others}")
        facts.append(
            f"- citation: {_plain(about.citation)}" if about.citation else "- citation: none given"
        )
        if cls.is_count:
            facts.append("- a count: the summary is the sum over queries")
        if cls.summary_only:
            facts.append("- printed in the summary only")
        refusal = cls.bounds_refusal
        if isinstance(refusal, property):  # it depends on the parameters: ask the default instance
            default = _instance(cls)
            from tierank.measures import parse_measure

            refusal = parse_measure(default).bounds_refusal
            note = " with the default parameters; see the parameters" if refusal is None else ""
        else:
            note = ""
        if refusal:
            facts.append(f"- `--unjudged bounds`: refused ({_plain(refusal)})")
        else:
            facts.append(f"- `--unjudged bounds`: supported{note}")
        # the details, collapsed (pymdownx.details): names, citation, parameters
        title = "Names, citation and parameters" if cls.schema else "Names and citation"
        details = facts + [""]
        if cls.schema:
            details += [
                "| parameter | type | default | accepted | description |",
                "|---|---|---|---|---|",
            ]
            for p in cls.schema:
                default = "the evaluation's setting" if p.default is None else f"`{p.default}`"
                details.append(
                    f"| `{p.name}` | {p.type.__name__} | {default} | {_cell(p.range_text())} "
                    f"| {_cell(p.description)} |"
                )
        out += (
            [f'??? info "{title}"', ""]
            + [("    " + line) if line else "" for line in details]
            + [""]
        )
    out += _diversity_reference()
    return "\n".join(out)


def _diversity_reference() -> list[str]:
    """The families that read subtopic qrels (`Measure.needs_subtopics`), from the registry."""
    from tierank.measures import REGISTRY, supported

    fams = [f for f in supported() if getattr(REGISTRY[f], "needs_subtopics", False)]
    out = [
        "## Intent-aware measures (subtopic qrels) {#intent-aware}",
        "",
        "These families read subtopic qrels (`qid subtopic docid grade`; see the "
        "[diversity guide](../guides/diversity.md)): "
        + ", ".join(f"[`{f}`](#{f.lower()})" for f in fams)
        + ". `tierank eval QRELS RUN -m alpha_nDCG@10` and `tierank.evaluate` read the qrels as subtopic "
        "qrels when one of them is asked for (plain qrels are refused, with the reason), and evaluate the "
        "other measures on each document's largest grade. Definitions follow ndeval (checked against "
        "pyndeval on tie-free runs); their statistics are enumerated exactly up to `exact_limit` "
        "orderings of a query (default 10,000), else labelled sampled.",
        "",
    ]
    return out


# ---------------------------------------------------------------------------------------------


def manifest_reference() -> str:
    """The manifest's keys (``tierank.provenance.manifest.SCHEMA``), one row each."""
    from tierank.provenance.manifest import SCHEMA, SCHEMA_VERSION

    rows = [
        "# Manifest schema",
        "",
        f"The keys of a manifest (schema {SCHEMA_VERSION}) written by `tierank eval`, `compare` or `judges` --manifest FILE "
        "or `result.manifest.write(FILE)`, generated from `tierank.provenance.manifest.SCHEMA`. "
        "`[]` marks a list's items, `*` any name. The top-level sections `tag`, `platform`, "
        "`implementation`, `method` and `data` are ir_metadata's (PRIMAD); `results` and `seal` "
        "are tierank's. How to use it: [Reproducible numbers](../guides/reproducible.md).",
        "",
        "| key | what it holds |",
        "|---|---|",
    ]
    rows += [f"| {_code(path)} | {_cell(meaning)} |" for path, meaning in SCHEMA]
    return "\n".join(rows)


PAGES = {
    "reference/cli.md": cli_reference,
    "reference/measures.md": measure_reference,
    "reference/manifest.md": manifest_reference,
}


def on_files(files, config):
    """MkDocs hook: the generated pages added to the site's files (no page is written into ``docs/``)."""
    from mkdocs.structure.files import File

    for name, make in PAGES.items():
        files.append(File.generated(config, name, content=make() + "\n"))
    return files


def main(argv: list[str]) -> None:
    """Write the generated pages into the folder ``argv[0]``."""
    for name, make in PAGES.items():
        target = Path(argv[0]) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(make() + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
