"""Command line: ``tierank eval QRELS RUN -m nDCG@10 -m RR@10 ...``.

Bad input is reported as one line per problem on stderr (``file:line: reason``)
with exit code 2, never a traceback.

One module per command group: `eval`, `analysis` (ties, sweep, compare, bands),
`similarity`, `diversity`, `plots` (the plot and report groups), `rerank`,
`mteb` (MTEB's saved predictions), `misc` (measures, example); the root command and the
group class are in `app`, the shared option types, the error decorator and the output helpers
in `common`, and every table printed on the terminal is built in `tierank.report.terminal`.

Start-up: a command line imports the module of its command only; ``tierank``, ``tierank --help`` and
``tierank --version`` import none (the root help lists `SUMMARIES`, which a test compares with
the commands' own help).
"""

from __future__ import annotations

import sys
import types
from importlib import import_module

__all__ = ["app", "main", "run"]


class _Package(types.ModuleType):
    """This package, whose name ``app`` is the Typer object (given by ``__getattr__`` once every
    command is registered on it), never the submodule `tierank.cli.app` that the import system
    binds here when it first imports it (typer is imported with it, by a command that uses typer
    only: ``tierank trec_eval`` does not)."""

    def __setattr__(self, name: str, value) -> None:
        if name == "app" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _root():
    """The module `tierank.cli.app` (the root command, typer's), imported on first use."""
    return import_module(f"{__name__}.app")


#: the modules that register the commands, in the order of ``tierank --help``
COMMAND_MODULES = (
    "eval",
    "analysis",
    "similarity",
    "diversity",
    "plots",
    "rerank",
    "mteb",
    "provenance",
    "misc",
    "judges",
    "planning",
    "label",
)

#: the module of each top-level command (a group's sub-commands are in its module): a command line
#: imports only its command's module
COMMANDS = {
    "eval": "eval",
    "ties": "analysis",
    "sweep": "analysis",
    "compare": "analysis",
    "bands": "analysis",
    "similarity": "similarity",
    "diversity": "diversity",
    "plot": "plots",
    "report": "plots",
    "rerank": "rerank",
    "mteb": "mteb",
    "verify": "provenance",
    "measures": "misc",
    "example": "misc",
    "judges": "judges",
    "plan": "planning",
    "discriminative-power": "planning",
    "forest": "planning",
    "label": "label",
}

#: each command's summary (the first paragraph of its help), in the order of ``tierank --help``: the root
#: help lists these without importing the commands (``tests/cli/test_startup.py`` compares them with the
#: commands' own help)
SUMMARIES: dict[str, str] = {
    "eval": "Evaluate RUN (or several runs) against QRELS with tie-aware statistics.",
    "ties": "Tie prevalence and ordering defects per run and for the set (Yang, Moffat & Turpin, Table 1).",
    "sweep": "What would lower precision do to my evaluation? Re-express RUN's scores in each format and report ties, oblivious, expected, range and bias.",
    "compare": "Systems side by side with E[M] and [min, max]; paired t-tests on per-query expected values; every pair whose order flips between oblivious and expected values, and every pair the ties leave undecidable; P(A>B): the probability that A's mean beats B's when both runs' ties are broken at random. One measure per call (-m given twice is an error).",
    "bands": "Worst-case change of RR and RBP that geometric rank banding can cause under permutation averaging (Yang, Moffat & Turpin, Table 2).",
    "similarity": "How far apart are two rankings? Rank-biased overlap (RBO) with Corsi and Urbano's tie treatments, its exact expected value, min and max over tie orderings; Kendall's tau-b, tau-AP and overlap at k; per query and averaged over the queries both runs answer.",
    "diversity": "Intent-aware (diversity) measures on subtopic qrels, tie-aware: the oblivious value and the expected value, min, max and std over tie orderings, per measure (tab-separated), averaged over the run's judged queries.",
    "rerank": "The low-precision reranking protocol (the paper's Table 1): score every candidate under every precision regime, write one run per regime, report M at FP32 and per regime M_obl, E[M], range, bias, tie statistics and scoring time. Scores are cached; an interrupted run resumes.",
    "mteb": "Evaluate MTEB's saved retrieval PREDICTIONS against QRELS (given first, as in every command) with tie-aware statistics.",
    "verify": "Recompute a manifest's numbers from its inputs: exit 0 when every number is made again, else 1 with what moved and why.",
    "measures": "List the supported measures (generated from the registry).",
    "example": "Print the path of a shipped example file or folder (tierank example NAME, NAME one of: run, qrels, askubuntu-run, askubuntu-qrels, trec-run, rag24-run, rag24-qrels, rag24-mini, llmjudge-mini, dir; sources and licences: README.md in `tierank example dir`).",
    "judges": "Agreement of relevance judges with a reference: Cohen's kappa (unweighted, linear, quadratic), Krippendorff's alpha (nominal, ordinal, interval), agreement binarised at --rel and the confusion matrix, pooled and per query, with bootstrap CIs over queries; with --runs, how the system ordering moves under each judge.",
    "plan": "How many topics? The topic set size to detect a difference at --alpha with --power (paired t-test for two systems, one-way ANOVA for more; Sakai's topic set size design), and the minimal detectable difference for given topic counts; the variance from --sd or from pilot runs, their tie variance included.",
    "discriminative-power": "Discriminative power (Sakai 2006): per measure, the share of system pairs separated at --alpha and the estimated difference required, by the paired bootstrap or randomized Tukey HSD, on the per-topic expected values (and on the oblivious ones).",
    "forest": "Forest plot of one pair of systems over collections: each collection's effect with its CI (tie variance included), the fixed-effect and random-effects (DerSimonian-Laird, Paule-Mandel) estimates.",
    "label": "An LLM as the relevance judge: the label distribution (p0 ... pK) of every pair of POOL from a generative model's next-token probabilities over the grade tokens, renormalised, with the grade logits computed in FP32 (HPS's head); written as label distributions for `tierank eval --labels`, and with --grades the most probable grades as qrels.",
    "plot": "Figures (PNG and SVG): tierank plot cutoff|ranges|sweep|ties.",
    "report": "One self-contained HTML page: tierank report eval|sweep|compare|rerank.",
}


def register(names=COMMAND_MODULES):
    """The Typer app with the commands of ``names`` (modules of `tierank.cli`) registered on it;
    registered in the order of ``tierank --help`` whatever the order they were asked for in."""
    app = _root().app
    for name in names:
        import_module(f"{__name__}.{name}")
    if len(names) > 1:
        order = {f"{__name__}.{name}": i for i, name in enumerate(COMMAND_MODULES)}
        app.registered_commands.sort(
            key=lambda c: order.get(getattr(c.callback, "__module__", ""), 0)
        )
    return app


def __getattr__(name: str):
    if name == "app":  # every command registered (the complete `tierank`, as Python callers use it)
        return register()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def listing():
    """A Typer app with the root command and, for each command, a stand-in with its summary: what
    ``tierank``, ``tierank --help`` and ``tierank --version`` need (no command module is imported).
    A stand-in never runs: a command line that names a command gets the real one."""
    from .app import root_typer

    listed = root_typer(_root().app.info.help)
    listed.registered_callback = _root().app.registered_callback
    for name, summary in SUMMARIES.items():
        listed.command(
            name,
            help=summary,
            add_help_option=False,
            context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        )(_stand_in)
    return listed


def _stand_in() -> None:  # pragma: no cover - never called: a named command is the real one
    raise RuntimeError("a stand-in of the listing of tierank --help was run")


def command_app(argv: list[str]):
    """The Typer app with what the command line ``argv`` needs: the module of its command only (the
    command-line start-up, without the imports of the other commands), or, for the root command alone
    (``tierank``, ``--help``, ``--version``, an unknown name), the listing of the commands."""
    first = argv[0] if argv else ""
    module = COMMANDS.get(first)
    return register((module,)) if module else listing()


def main() -> None:
    """Run the command line in this process (typer's ``SystemExit`` carries the status);
    ``tierank trec_eval ...`` is read as trec_eval reads its arguments, without typer."""
    if sys.argv[1:2] == ["trec_eval"]:
        raise SystemExit(import_module(f"{__name__}.trec_eval").run(sys.argv[2:]))
    command_app(sys.argv[1:])()


def run() -> None:
    """The ``tierank`` program: `main`, then leave without interpreter finalization.

    SIGTERM (what ``timeout``, Slurm and Kubernetes send) is handled as Ctrl-C is: it raises
    ``KeyboardInterrupt`` in the command, so that worker processes are terminated and no partial
    output is left (outputs are written atomically, at the end); the program then dies of SIGTERM.

    Output is flushed first.  ``os._exit`` skips the finalizers because, once in
    a few dozen runs, a native thread pool's teardown at interpreter exit aborted
    the process (``terminate called without an active exception``, exit 134)
    after all output was written.  Python callers use `main`.
    """
    import os
    import signal
    import sys

    terminated: list[int] = []
    finished: list[bool] = []

    def on_sigterm(signum, frame):
        if not terminated:  # once: a second SIGTERM does not interrupt the cleanup
            terminated.append(signum)
            if not finished:  # after the command returned, only remember it (die of it below)
                raise KeyboardInterrupt

    handled = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # left alone where it is ignored
    if handled:
        signal.signal(signal.SIGTERM, on_sigterm)
    try:
        main()
        code = 0
    except SystemExit as done:
        status = done.code
        if status is None:
            code = 0
        elif isinstance(status, int):
            code = status
        else:
            print(status, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:  # outside the command (click turns one inside into exit 1)
        code = 130
    finished.append(True)
    if handled:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    if terminated:  # cleaned up: now die of the signal, as the caller expects
        os.kill(os.getpid(), signal.SIGTERM)
    os._exit(code)
