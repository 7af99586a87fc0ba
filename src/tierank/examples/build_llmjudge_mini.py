"""Build the shipped ``llmjudge-mini`` sample from the full LLMJudge data (deterministic).

``llmjudge-mini`` is a small real sample of the LLMJudge challenge's test set (``../shared/data/llmjudge``:
human grades 0-3 of 4,423 TREC DL 2023 query-passage pairs and 33 LLM judges' grades of the same pairs):

- ``human.qrels.gz``: the human grades of the sampled pairs (``qid 0 docid grade``);
- ``judges/NAME.qrels.gz``: the grades of the same pairs by each judge of `JUDGES` (one file a judge);
- ``judges.qrels.gz``: the same judges' grades in one file with a judge column (``qid judge docid grade``).

The pairs: of every one of the 25 queries the `PER_QUERY` pairs whose SHA-1 of ``qid docid`` comes first,
plus every pair some judge of `JUDGES` grades outside 0-3 (the real quirks: a 5 and a 10); each file's
lines byte for byte as in the source (the judge-column file: the source line with the judge's name in
the second field), in the source's order, gzip-compressed at level 9 with no file name and time stamp 0.
Rebuild with::

    python -m tierank.examples.build_llmjudge_mini ../shared/data/llmjudge

(``--out DIR`` writes elsewhere; the default is the shipped folder).  Sources and licences: ``README.md``
beside this module.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
from pathlib import Path

NAME = "llmjudge-mini"
OUT = Path(__file__).resolve().parent / NAME
#: the judges of the sample (two of them hold the out-of-scale grades)
JUDGES = ("Olz-gpt4o", "RMITIR-llama70B", "TREMA-CoT", "h2oloo-zeroshot2", "willia-umbrela1")
#: pairs sampled per query
PER_QUERY = 16


def _key(line: bytes) -> tuple[bytes, bytes]:
    f = line.split()
    return f[0], f[2]


def select(source: Path, per_query: int = PER_QUERY) -> dict[str, bytes]:
    """The sample's files (uncompressed bytes, by relative path) cut from the LLMJudge folder ``source``."""
    human = [ln for ln in (source / "test.human.qrels").read_bytes().splitlines(True) if ln.strip()]
    judged = {
        j: [
            ln
            for ln in (source / "judges" / f"{j}.txt").read_bytes().splitlines(True)
            if ln.strip()
        ]
        for j in JUDGES
    }
    by_query: dict[bytes, list[tuple[str, tuple[bytes, bytes]]]] = {}
    for ln in human:
        q, d = _key(ln)
        by_query.setdefault(q, []).append((hashlib.sha1(q + b" " + d).hexdigest(), (q, d)))
    chosen = {k for pairs in by_query.values() for _, k in sorted(pairs)[:per_query]}
    for lines in judged.values():
        for ln in lines:
            if float(ln.split()[3]) > 3 or float(ln.split()[3]) < 0:
                chosen.add(_key(ln))
    out = {"human.qrels": b"".join(ln for ln in human if _key(ln) in chosen)}
    column = []
    for j, lines in judged.items():
        kept = [ln for ln in lines if _key(ln) in chosen]
        out[f"judges/{j}.qrels"] = b"".join(kept)
        for ln in kept:
            f = ln.split()
            column.append(b" ".join([f[0], j.encode(), f[2], f[3]]) + b"\n")
    out["judges.qrels"] = b"".join(column)
    out["labels.txt"] = panel_labels(out["judges.qrels"])
    return out


def panel_labels(judge_column: bytes) -> bytes:
    """The five judges' grade frequencies per pair (grades clipped to 0-3) as label distributions
    (``qid 0 docid p0 p1 p2 p3``)."""
    import tempfile

    from tierank.io.distributions import format_distributions, from_panel
    from tierank.io.judgments import read_judge_column

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judges.qrels"
        path.write_bytes(judge_column)
        judges, _ = read_judge_column(path)
        return format_distributions(from_panel(judges, 3)).encode()


def write(files: dict[str, bytes], out: Path = OUT) -> None:
    """Write ``files`` gzip-compressed (level 9, no name, time stamp 0) under ``out``."""
    for name, data in files.items():
        path = out / f"{name}.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(data, 9, mtime=0))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="the LLMJudge folder (../shared/data/llmjudge)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    write(select(args.source), args.out)


if __name__ == "__main__":
    main()
