"""A BEIR-layout set written on the fly and a deterministic fake scorer: protocol tests without torch."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np

from tierank.hps.base import QueryScores, ScorerBase
from tierank.hps.protocol import rerank


def write_set(root: Path, n_queries=4, n_docs=6, seed=0) -> Path:
    """queries.jsonl, corpus.jsonl, candidates.run and qrels.txt; the last query is unjudged."""
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    queries, corpus, run, qrels = [], [], [], []
    for qi in range(n_queries):
        q = f"q{qi}"
        queries.append({"_id": q, "text": f"query {qi}"})
        for di in range(n_docs):
            d = f"d{qi}_{di}"
            corpus.append({"_id": d, "title": f"t{di}", "text": f"doc {qi} {di}"})
            run.append(f"{q} Q0 {d} {di + 1} {n_docs - di} bm25")
            if qi != n_queries - 1:  # the last query is unjudged
                qrels.append(f"{q} 0 {d} {int(rng.integers(0, 3))}")
    (root / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries))
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (root / "candidates.run").write_text("\n".join(run) + "\n")
    (root / "qrels.txt").write_text("\n".join(qrels) + "\n")
    return root


class FakeScorer(ScorerBase):
    """Deterministic scores from the texts; bf16-like rounding for low-precision groups."""

    family = "yesno"

    def __init__(self, group: str, fail_after: int | None = None):
        self.group = group
        self.model_dtype = group
        self.calls = 0
        self.fail_after = fail_after

    @classmethod
    def from_spec(cls, source, group, *, batch_size, device, **options):
        return cls(group)

    def score_query(self, query, docs, variants):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt
        self.calls += 1
        base = (
            np.array([(zlib.crc32(f"{query}|{d}".encode()) % 10_000) / 10_000 + 0.1 for d in docs])
            * 0.3
            + 0.1
        )
        # values that print with many digits: exactness of the written runs is tested
        base = base + 1e-9 * np.arange(len(docs))
        out = QueryScores(model_s=0.5, reasoning=[f"because {d}" for d in docs])
        for v in variants:
            s = np.round(base, 2) if v.model_dtype != "fp32" and v.level == "none" else base
            out.add(v, s, 0.001 if v.level == "none" else 0.002)
        return out

    def metadata(self):
        return {"scorer": "fake", "group": self.group}


class Fp32OnlyScorer(FakeScorer):
    """A fake scorer of a model that can only score ``fp32`` (its :meth:`supports` says so)."""

    @classmethod
    def supports(cls, variant):
        return variant.name == "fp32"


#: The repository root (``tests.hps.fakes`` is importable from it).
ROOT = Path(__file__).resolve().parents[2]

#: ``python -c CLI_CODE ARGS...`` runs ``tierank ARGS...`` in a fresh process, with a model kind ``fake``
#: (:class:`FakeScorer`, any existing path as its source) registered first when the first argument is
#: ``--fake``.  It prints ``torch imported: True|False`` on stdout after the command and exits with its code.
CLI_CODE = (
    "import sys\n"
    f"sys.path.insert(0, {str(ROOT)!r})\n"
    "args = sys.argv[1:]\n"
    "if args[:1] == ['--fake']:\n"
    "    from tierank.hps.registry import ModelKind, register\n"
    "    register(ModelKind('fake', 'tests.hps.fakes:FakeScorer', frozenset({'precision', 'head'})))\n"
    "    args = args[1:]\n"
    "from tierank.cli import main\n"
    "sys.argv = ['tierank', *args]\n"
    "try:\n"
    "    main()\n"
    "    code = 0\n"
    "except SystemExit as e:\n"
    "    code = e.code\n"
    "print('torch imported:', 'torch' in sys.modules)\n"
    "sys.exit(code)\n"
)


def run_cli_process(*args, fake: bool = False) -> subprocess.CompletedProcess:
    """``tierank ARGS...`` in a subprocess (see :data:`CLI_CODE`); ``fake`` registers the ``fake`` model kind."""
    argv = [sys.executable, "-c", CLI_CODE, *(["--fake"] if fake else []), *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True)


def factory(log=None, fail_after=None):
    """A scorer factory that records the groups it loads in ``log``."""

    def make(spec, group):
        if log is not None:
            log.append(group)
        return FakeScorer(group, fail_after)

    return make


def rerank_fake(out, data, **kw):
    """The protocol on ``data`` with the fake scorer (four variants, three measures by default)."""
    kw.setdefault("regimes", "fp32,bf16,bf16->fp32,bf16->fp32:head")
    kw.setdefault("measures", ["nDCG@10", "RR@10", "P@3"])
    return rerank(
        data, "yesno:fake", out_dir=out, scorer_factory=kw.pop("factory", factory()), **kw
    )
