"""Shared by the benchmarks: where data lives, machine facts, and writing results."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
SHARED_DATA = Path(os.environ.setdefault("KCARD_DATA", str(HERE.parent.parent / "shared" / "data")))


def midterm_questions(limit: int) -> list[str]:
    data = json.loads((SHARED_DATA / "midtermqa" / "openbook.json").read_text())
    return [item["question"] for item in data["testset"][:limit]]


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {"cpu": cpu, "cores": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform()}


def code_fingerprint() -> str:
    """A sha256 of kcard's own code and card manifests (core and the first-party plugins, not their
    tests): a stored run is reused only while this is unchanged."""
    import hashlib

    root, digest = HERE.parent, hashlib.sha256()
    files = [*root.glob("kcard_core/**/*.py"), *root.glob("plugins/*/kcard_*/**/*.py"),
             *root.glob("plugins/*/kcard_*/**/*.toml")]
    for path in sorted(files):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def table(header: list[str], rows: list[list]) -> str:
    """A Markdown table: ``header``'s cells, then one line per row of cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows])


def write_result(name: str, result: dict, report: str) -> None:
    """benchmarks/results/<name>.json and <name>.md."""
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    result = {"benchmark": name, "date": time.strftime("%Y-%m-%d"), "machine": machine(), **result}
    (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / f"{name}.md").write_text(report.strip() + "\n")
    print(report)


def train_card(text: Path, name: str, out: Path, options: list[str] = ()) -> dict:
    """`kcard train TEXT --name NAME --out OUT` at its defaults (plus ``options``) in a child process,
    so that its wall time and peak memory are its own; the figures the row records."""
    import tomllib

    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "kcard_core", "train", str(text), "--name", name, "--out",
                              str(out), *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = ""
    for line in child.stdout:  # shown as it comes (the estimate first), kept for an error
        print(line, end="", file=sys.stderr, flush=True)
        output += line
    # this child's own peak (RUSAGE_CHILDREN's is the largest of every child so far: one run's rows all had the first's)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(output)
    trained = tomllib.loads((out / "card.toml").read_text())["training"]
    return {"train_seconds": round(time.perf_counter() - started, 1), "recall": trained["recall"],
            "recall_by_epoch": trained.get("recall_by_epoch"), "train_steps": trained["steps"],
            "train_peak_rss_mb": round(usage.ru_maxrss / 1024), "train_options": list(options),
            "estimated_seconds": trained["estimated_seconds"],
            "estimated_most_seconds": trained["estimated_most_seconds"],
            "seconds_after_estimate": round(trained["seconds"] - trained["estimated_at_seconds"], 1)}


def run_seconds(command: list[str], env: dict | None = None, repeat: int = 5) -> float:
    """Median wall time of a command."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2]
