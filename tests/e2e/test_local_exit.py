"""A process that loaded the local model exits quietly: its models are freed before shutdown.

Left to `Llama.__del__` at interpreter shutdown, llama.cpp's frees run after llama_cpp's module
globals are gone and print `Exception ignored … 'NoneType' object is not callable`.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from graphs.models.gguf_assembly import ModelPartsMissingError, resolve_gguf
from graphs.runtime.settings import Settings

pytestmark = pytest.mark.e2e

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not built in this environment")

ROOT = Path(__file__).resolve().parents[2]

# A plain call, a grammar-constrained one, a streamed one and a grammar-constrained one again:
# every way a model is used. A daemon thread holds the loader's module, as a test suite's pools
# and servers do: without it a small script frees everything in its first collection at exit,
# while llama_cpp is still whole, and the bug never shows.
SCRIPT = """
import sys
import threading
import time
from langchain_core.messages import HumanMessage
from pydantic import BaseModel
from graphs.models import llama_loader
from graphs.models.local_model import LocalLlamaChatModel

class City(BaseModel):
    name: str

model = LocalLlamaChatModel(model_path=sys.argv[1], n_ctx=512, max_tokens=8)
model.invoke([HumanMessage("Say hi.")])
model.with_structured_output(City).invoke([HumanMessage("Name a city.")])
"".join(str(chunk.content) for chunk in model.stream([HumanMessage("Count to three.")]))
# Last, so that the grammar's sampler is still held by the model at exit.
model.with_structured_output(City).invoke([HumanMessage("Name another city.")])
threading.Thread(target=lambda held: time.sleep(3600), args=(llama_loader,), daemon=True).start()
print("answered")
"""


def test_a_process_that_loaded_the_model_exits_without_tracebacks() -> None:
    try:
        path = resolve_gguf("local:smollm2", Settings().model_dir)
    except ModelPartsMissingError as exc:
        pytest.skip(str(exc))

    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "answered"
    assert "Exception ignored" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
