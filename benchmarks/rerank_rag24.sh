#!/usr/bin/env bash
# The issue-3 evidence: the rerank protocol (Table 1 layout) on ../shared/data/rag24
# (31 judged TREC RAG 2024 topics x 20 candidates) for MiniLM, SmolLM2 yes/no and SmolLM2 Rank1-style.
# Needs the model stack (README, "High-Precision Scoring"). Outputs land in bench-data/rerank/
# (git-ignored): runs/, table.tsv, table.json and cache/ per model. Interrupt and re-run at will:
# the cache resumes. CPU timings: --threads 2 on the 2-core development machine.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench-data/rerank}
DATA=${DATA:-../shared/data/rag24}
mkdir -p "$OUT"
tierank rerank --data "$DATA" --model minilm -b 16 --threads 2 \
  --regimes "fp32,fp16,bf16,fp16->fp32,bf16->fp32,emb-int8,emb-binary,emb-binary+rescore@5,onnx-int8" \
  -o "$OUT/minilm" | tee "$OUT/minilm.txt"
tierank rerank --data "$DATA" --model smollm2-yesno -b 8 --threads 2 \
  --regimes "fp32,bf16,bf16->fp32,bf16->fp32:head" -o "$OUT/yesno" | tee "$OUT/yesno.txt"
tierank rerank --data "$DATA" --model smollm2-rank1 -b 8 --budget 32 --max-doc-tokens 128 --threads 2 \
  --regimes "fp32,bf16,bf16->fp32,bf16->fp32:head" -o "$OUT/rank1" | tee "$OUT/rank1.txt"
# FP16 on a CPU is emulated and about 7x slower than FP32: the first 8 topics only (reusing the cache above)
tierank rerank --data "$DATA" --model smollm2-yesno -b 8 --threads 2 --max-queries 8 --cache "$OUT/yesno/cache" \
  --regimes "fp32,fp16,bf16,fp16->fp32,bf16->fp32,fp16->fp32:head,bf16->fp32:head" -o "$OUT/yesno8" | tee "$OUT/yesno8.txt"
for m in minilm yesno rank1 yesno8; do tierank report rerank "$OUT/$m/table.json" -o "$OUT/$m.html"; done
