"""Memory: 25 registered cards, each on its own GGUF file; peak RSS with and without the LRU cap.

Registering cards loads nothing; a model is loaded when a card first writes, and the llama.cpp
backend keeps at most KCARD_MAX_MODELS (default 4) loaded. Each of 25 questions asks a different card.
Run: .venv/bin/python benchmarks/memory.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import write_result

CHILD = r"""
import json, resource, sys
from pathlib import Path
from kcard_core.cards import Card, CardManifest
from kcard_core.chains import build_chain
from kcard_core.plugins import load_registry

def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

folder = Path(sys.argv[1])
registry = load_registry()
registry.cards = {f"card{i}": Card(CardManifest.from_dict({
    "name": f"card{i}", "description": f"card {i}", "version": "1", "license": "MIT", "prompt": "{query}",
    "generation": {"n": 1, "max_tokens": 16}, "artifacts": {"model": {"file": str(folder / f"card{i}.gguf")}}}))
    for i in range(25)}
after_registering = rss_mb()
for i in range(25):
    build_chain("bottom-up", registry=registry, cards=[f"card{i}"], n1=1, cache=False, settings={},
                selectors=("relevance",)).invoke(f"Question {i}: what is a card?")
print(json.dumps({"after_registering_mb": round(after_registering), "peak_mb": round(rss_mb())}))
"""


def main() -> None:
    from kcard_core.models import resolve_model

    model = resolve_model("smollm2-135m-instruct")[1]
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(25):  # distinct files, so that no two cards share a loaded model
            shutil.copyfile(model, Path(tmp) / f"card{i}.gguf")
        for label, cap in (("cap 4 (default)", "4"), ("no cap", "100")):
            done = subprocess.run([sys.executable, "-c", CHILD, tmp], capture_output=True, text=True, check=True,
                                  env={**os.environ, "KCARD_MAX_MODELS": cap})
            runs[label] = json.loads(done.stdout.strip().splitlines()[-1])
    rows = "\n".join(f"| {label} | {r['after_registering_mb']} | {r['peak_mb']} |" for label, r in runs.items())
    report = f"""# Memory: 25 cards

25 cards registered, each on its own copy of SmolLM2-135M-Instruct Q4_1 (98 MB), plus the base
LLM (the same model, its own file) and MiniLM; 25 questions, each asking a different card
(bottom-up, n1 = 1, 16 tokens). Peak resident memory of the process:

| loaded-model cap | MB after registering 25 cards | peak MB after using all 25 |
|---|---|---|
{rows}

Reproduce: `.venv/bin/python benchmarks/memory.py`
"""
    write_result("memory", {"cards": 25, "model_file_mb": round(model.stat().st_size / 2**20), "runs": runs}, report)


if __name__ == "__main__":
    main()
