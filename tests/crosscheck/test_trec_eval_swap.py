"""``tierank trec_eval ARGS`` against the real trec_eval 10 (built from ``tests/vendor``, fixture
``trec_eval_bin``) with the same ARGS: stdout byte for byte and the exit code, on trec_eval's test
pairs, AskUbuntu and rag24 (``tests/realdata.py``), as given and with their scores rounded to
bfloat16 (ties everywhere), under every flag set of :data:`FLAG_SETS` (quicktest parameters, repeated
and comma forms, long options, options after the files); where trec_eval refuses, tierank refuses
with the same exit code and message.

``tierank trec_eval`` runs in this process (`tierank.cli.trec_eval.run`); its dispatch from the
``tierank`` program is checked once by a subprocess.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from realdata import DATA, TREC_EVAL_PAIRS
from tierank.cli.trec_eval import run as tierank_trec_eval

# (name, qrels, run) relative to the real data
PAIRS = TREC_EVAL_PAIRS

#: the flag sets, as a trec_eval user types them (the files follow, unless the set says FILES)
FLAG_SETS = [
    "",
    "-q",
    "-m official",
    "-q -m all_trec",
    "-m all_trec",
    "-q -c -m all_trec",
    "-q -l 2 -m all_trec",
    "-q -M 10 -m all_trec",
    "-q -J -m all_trec",
    "-q -c -J -m all_trec",
    "-n -q -m official",
    "-q -m P.5,10 -m recall.5 -m P.20",
    "-q -m ndcg_cut.5,10,1000 -m map_cut.5,10",
    "-m set",
    "-q -m map -m P -m ndcg -m recip_rank",
    "-q -N 1000 -m all_trec",
    "-q -miprec_at_recall..10,.20,.25,.75,.50 -m 11pt_avg..25,.5,.75",
    "-q -msuccess.2,5,20 -m Rprec_mult.5.0,0.2,0.35",
    "-o -q -m official",
    "--query_eval_wanted --measure=map --measure P.5 --level_for_rel=2",
    "-q -l 3 -m ndcg -m ndcg_rel -m Rndcg",
    "-q -m relstring.20 -m bpref -m infAP",
    "-q -mutility.2,-1,0,0 -mndcg.1=3,2=9,4=4.5",
    "-c -M100 -m all_trec",
    "-q -m gm_map -m gm_bpref -m rbp -m unj",
    "-q -J -l 2 -m iprec_at_recall..3,0,1 -m 11pt_avg..25,.5",
    "FILES -q -m map -m P.10",
]

#: the flag sets also run on the bf16 runs (the tie-break decides the printed value)
TIED = [
    "-q -m all_trec",
    "-q -c -m all_trec",
    "-q -l 2 -m all_trec",
    "-q -M 10 -m all_trec",
    "-q -J -m all_trec",
]


@pytest.fixture(scope="session")
def bf16_dir(tmp_path_factory):
    """The runs with their scores rounded to bfloat16 (written as exact decimals)."""
    import numpy as np

    ml_dtypes = pytest.importorskip("ml_dtypes")
    out = tmp_path_factory.mktemp("bf16-swap")
    for _, _, run in PAIRS:
        lines = []
        for line in (DATA / run).read_text().splitlines():
            f = line.split()
            if len(f) < 6 or f[0].startswith("#"):
                lines.append(line)
                continue
            s = float(np.float64(f[4]).astype(ml_dtypes.bfloat16).astype(np.float64))
            lines.append(" ".join([f[0], f[1], f[2], f[3], repr(s), f[5]]))
        (out / run.replace("/", "__")).write_text("\n".join(lines) + "\n")
    return out


def args_of(flags: str, qrels, run) -> list[str]:
    words = flags.split()
    if words[:1] == ["FILES"]:  # the files first, the options after (GNU getopt permutes)
        return [str(qrels), str(run), *words[1:]]
    return [*words, str(qrels), str(run)]


def ours(args: list[str]) -> tuple[int, bytes, str]:
    out, err = io.BytesIO(), io.StringIO()
    code = tierank_trec_eval(args, out, err)
    return code, out.getvalue(), err.getvalue()


def same_as_trec_eval(binary, args: list[str]) -> None:
    te = subprocess.run([str(binary), *args], capture_output=True)
    code, out, err = ours(args)
    assert code == te.returncode, (code, te.returncode, err, te.stderr)
    if out != te.stdout:
        a, b = out.decode().splitlines(), te.stdout.decode().splitlines()
        diff = [(x, y) for x, y in zip(a, b) if x != y][:5]
        pytest.fail(f"{len(a)} lines, trec_eval {len(b)}; first differences: {diff}")


def _cells():
    for flags in FLAG_SETS:
        for name, qrels, run in PAIRS:
            yield pytest.param(flags, qrels, run, False, id=f"{name}[{flags or 'default'}]")
    for flags in TIED:
        for name, qrels, run in PAIRS:
            yield pytest.param(flags, qrels, run, True, id=f"{name}-bf16[{flags}]")


@pytest.mark.parametrize("flags, qrels, run, bf16", list(_cells()))
def test_byte_identical(trec_eval_bin, bf16_dir, flags, qrels, run, bf16):
    run_path = bf16_dir / run.replace("/", "__") if bf16 else DATA / run
    same_as_trec_eval(trec_eval_bin, args_of(flags, DATA / qrels, run_path))


REFUSALS = [
    ["-x"],  # an unknown option
    ["-m"],  # an option without its argument
    ["-m", "nosuch"],  # an illegal measure
    ["-m", "nosuch.5"],
    ["-m", "P."],  # an empty parameter list
    ["-m", "P.abc"],  # parameters the measure refuses
    ["-m", "ndcg.x"],
    ["--nosuchoption"],
    ["-T", "other_format"],
    ["-R", "other_format"],
]


@pytest.mark.parametrize("extra", REFUSALS, ids=" ".join)
def test_refusals_match(trec_eval_bin, extra):
    """trec_eval's exit code and its own message line (getopt's lines name the program by its path
    in trec_eval and by ``trec_eval`` here: those are compared from the first colon on); where a
    measure's parameters are refused, tierank's reason comes first."""
    args = [*extra, str(DATA / "trec_eval/qrels.test"), str(DATA / "trec_eval/results.test")]
    te = subprocess.run([str(trec_eval_bin), *args], capture_output=True, text=True)
    code, out, err = ours(args)
    assert code == te.returncode != 0
    assert out == te.stdout.encode()

    def tail(s: str) -> list[str]:
        return [ln.split(":", 1)[-1] for ln in s.splitlines()]

    # trec_eval's own last line; a bad option or measure (exit 1): every line
    assert tail(err)[-1] == tail(te.stderr)[-1]
    if code == 1:
        assert tail(err) == tail(te.stderr)


@pytest.mark.parametrize("files", [1, 3], ids=["one file", "three files"])
def test_file_count(trec_eval_bin, files):
    """One file: trec_eval's usage and exit 1.  Three: trec_eval refuses (exit 1), tierank evaluates
    each run after the qrels (its documented extension), each block labelled."""
    paths = [str(DATA / "trec_eval/qrels.test")] + [str(DATA / "trec_eval/results.test")] * (
        files - 1
    )
    if files == 3:
        paths[2] = str(DATA / "trec_eval/results.trunc")
    te = subprocess.run([str(trec_eval_bin), "-c", *paths], capture_output=True, text=True)
    code, out, err = ours(["-c", *paths])
    if files == 1:
        assert (code, out, err) == (te.returncode, b"", te.stderr)
        return
    assert te.returncode == 1 and code == 0
    one = subprocess.run([str(trec_eval_bin), "-c", *paths[:2]], capture_output=True).stdout
    two = subprocess.run([str(trec_eval_bin), "-c", paths[0], paths[2]], capture_output=True).stdout
    label = "run                   \tall\t"
    assert (
        out
        == (label + "results.test\n").encode() + one + (label + "results.trunc\n").encode() + two
    )


def test_missing_query_exit_4_after_the_lines_before_it(trec_eval_bin):
    """Without -c, trec_eval 10 prints the -q lines of the qrels queries before the first one the
    run lacks, then stops with exit 4: so does tierank trec_eval."""
    args = [
        "-q",
        "-m",
        "map",
        str(DATA / "trec_eval/qrels.test"),
        str(DATA / "trec_eval/results.trunc"),
    ]
    te = subprocess.run([str(trec_eval_bin), *args], capture_output=True)
    code, out, err = ours(args)
    assert te.returncode == code == 4
    assert out == te.stdout and out
    assert err.encode() == te.stderr


@pytest.mark.subprocess
def test_the_tierank_program_dispatches(trec_eval_bin):
    """``tierank trec_eval`` (the console entry point, as ``alias trec_eval='tierank trec_eval'``
    runs it) prints trec_eval's bytes; ``-q`` is trec_eval's flag, not a typer option."""
    args = [
        "-q",
        "-m",
        "all_trec",
        str(DATA / "trec_eval/qrels.test"),
        str(DATA / "trec_eval/results.test"),
    ]
    te = subprocess.run([str(trec_eval_bin), *args], capture_output=True)
    got = subprocess.run([sys.executable, "-m", "tierank", "trec_eval", *args], capture_output=True)
    assert got.returncode == te.returncode == 0, got.stderr
    assert got.stdout == te.stdout


@pytest.mark.subprocess
def test_run_from_stdin(trec_eval_bin):
    """``-`` as the results file reads standard input, as trec_eval does (runid included)."""
    run = (DATA / "trec_eval/results.test").read_bytes()
    args = ["-q", str(DATA / "trec_eval/qrels.test"), "-"]
    te = subprocess.run([str(trec_eval_bin), *args], input=run, capture_output=True)
    got = subprocess.run(
        [sys.executable, "-m", "tierank", "trec_eval", *args], input=run, capture_output=True
    )
    assert got.returncode == te.returncode == 0, got.stderr
    assert got.stdout == te.stdout


@pytest.mark.parametrize("flags", [[], ["-c"], ["-q", "-m", "all_trec", "-c"]], ids=" ".join)
def test_run_without_a_judged_query(trec_eval_bin, tmp_path, flags):
    """A run none of whose queries is judged: trec_eval 10 stops at the first qrels query (exit 4)
    without -c; with -c every qrels query scores as one that retrieved nothing."""
    run = tmp_path / "other.run"
    run.write_text("q9 Q0 a 1 1.0 t\n")
    same_as_trec_eval(trec_eval_bin, [*flags, str(DATA / "trec_eval/qrels.test"), str(run)])
