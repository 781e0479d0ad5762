"""``make screenshots``: a short real run on the embedded models, its report, and headless-Chromium
screenshots of it, all under ``reports/screenshots/`` (git-ignored).

The suite is written next to the run (not under ``suites/``, so neither ``pytest suites/`` nor
the shipped-suite tests pick it up): tiny-llama and SmolLM2 at three prompt lengths and two KV
depths (speed curves, roofline share, predicted vs measured memory), and prompt-cache shapes on
the zoo llama (cache speedup against the share reused). Usage::

    python tests/report/screenshots.py [OUT_DIR] [--reuse]   # default reports/screenshots
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from headless_chromium import Chromium, find_chromium

SUITE = """\
schema_version: 1
name: screenshots
description: a short real run whose report shows every chart the harness draws offline
defaults: {repeats: 4, warmup: 1, timeout_s: 300}
models:
  - {name: tiny-llama, embedded: zoo/llama, tags: [tiny, random]}
  - {name: smollm2-135m-f32, embedded: smollm2-135m-instruct-f32, tags: [real]}
scenarios:
  - scenario: load
  - scenario: throughput
    params: {gen_tokens: 16}
    sweep: {prompt_tokens: [64, 256, 1024]}
  - scenario: throughput
    id: depth
    params: {prompt_tokens: 64, gen_tokens: 16}
    sweep: {depth: [256, 1024]}
  - scenario: prompt_cache
    models: [tiny-llama]
    params: {prompt_tokens: 256, gen_tokens: 8}
    sweep: {shape: [exact_repeat, shared_prefix, multi_turn, divergent_edit]}
"""
RUN_ID = "screenshots"
SHOTS = (("top", 1400, 2200), ("full", 1400, 9000))


def main(out: Path, *, reuse: bool) -> int:
    """Run the suite (or, with ``reuse``, re-render the run already there), then screenshot."""
    harness = Path(sys.executable).with_name("mlx-harness")
    out = out.resolve()  # Chromium opens it as a file:// URI
    run_dir = out / RUN_ID
    if reuse and (run_dir / "run.jsonl").is_file():
        command = [str(harness), "report", str(run_dir)]
    else:
        suite = out / "suite" / "screenshots.suite.yaml"
        suite.parent.mkdir(parents=True, exist_ok=True)
        suite.write_text(SUITE)
        shutil.rmtree(run_dir, ignore_errors=True)
        command = [str(harness), "run", str(suite), "--report-dir", str(out), "--run-id", RUN_ID]
    print("+", " ".join(command), flush=True)
    code = subprocess.run(command, check=False).returncode
    html = run_dir / "report.html"
    if not html.is_file():
        print(f"{html}: no report (mlx-harness run exited {code})", file=sys.stderr)
        return 1
    binary = find_chromium()
    if binary is None:
        print("chromium not found: `make system-deps` installs it", file=sys.stderr)
        return 1
    chromium = Chromium(binary)
    for name, width, height in SHOTS:
        png = chromium.screenshot(html.as_uri(), out / f"{name}.png", width=width, height=height)
        print(f"screenshot: {png}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out", nargs="?", default="reports/screenshots", type=Path)
    parser.add_argument("--reuse", action="store_true", help="re-render the last run, no new run")
    args = parser.parse_args()
    sys.exit(main(args.out, reuse=args.reuse))
