"""``toolcalls score CORPUS... [--parser NAME|auto] [--json] [-k TEXT]`` for the harness CLI.

harness/cli.py wires it in with ``add_parser(sub)``; the parsed arguments carry ``func=run_cli``.
Exit status: 0 when every case that is not recorded as known broken passes, 1 otherwise, 2 for
an invalid corpus or an unknown parser.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

PARSER_HELP = (
    "auto (default): each case's own parser, through every installed implementation; "
    "a format (qwen3_coder) or one implementation (mlx_vlm.qwen3_coder) scores every case with it"
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``toolcalls score`` to an argparse subparsers object; return the ``toolcalls`` one."""
    toolcalls = subparsers.add_parser(
        "toolcalls", help="tool-call parsing accuracy of the installed backends on a corpus"
    )
    sub = toolcalls.add_subparsers(dest="toolcalls_command", required=True)
    score = sub.add_parser("score", help="score corpus files (JSONL) or directories of them")
    score.add_argument("corpus", nargs="+", metavar="CORPUS", help="*.jsonl files or directories")
    score.add_argument("--parser", default="auto", metavar="NAME|auto", help=PARSER_HELP)
    score.add_argument("--json", action="store_true", help="print the scores as JSON")
    score.add_argument("-k", default=None, help="only cases whose id contains this text")
    score.set_defaults(func=run_cli)
    return toolcalls


def run_cli(args: argparse.Namespace) -> int:
    from harness.toolcalls.corpus import CorpusInvalid, load_corpus
    from harness.toolcalls.render import as_json, failures, summary, table
    from harness.toolcalls.scorer import score_corpus

    try:
        cases = load_corpus(args.corpus)
    except CorpusInvalid as exc:
        for error in exc.errors:
            print(error, file=sys.stderr)
        return 2
    if getattr(args, "k", None):
        cases = tuple(c for c in cases if args.k in c.id)
    try:
        score = score_corpus(cases, None if args.parser == "auto" else args.parser)
    except ValueError as exc:
        print(f"mlx-harness: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(as_json(score), indent=2, ensure_ascii=False))
    else:
        print("\n".join(table(score)))
        lines = failures(score)
        if lines:
            print()
            print("\n".join(lines))
        print()
        print(summary(score))
    return 0 if score.passed else 1
