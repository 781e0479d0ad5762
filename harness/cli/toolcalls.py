"""``toolcalls score CORPUS... [--parser NAME|auto] [--json] [-k TEXT]``,
``toolcalls score --outputs FILE [DATA...] [--string-match strict|bfcl] [--record FILE]`` and
``toolcalls import-bfcl [SOURCE] [--out DIR] [--categories STEM...]`` for the harness CLI.

:func:`harness.cli.build_parser` wires it in with ``add_parser(sub)``; the parsed arguments
carry ``func=run``, which runs the subcommand named. Exit status: 0 when every case that is not
recorded as known broken passes, 1 otherwise, 2 for an invalid corpus (a line per error) or an
unknown parser (a :class:`~harness.cli.errors.CliError`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from harness.cli.errors import CliError

PARSER_HELP = (
    "auto (default): each case's own parser, through every installed implementation; "
    "a format (qwen3_coder) or one implementation (mlx_vlm.qwen3_coder) scores every case with it"
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``toolcalls score`` to an argparse subparsers object; return the ``toolcalls`` one."""
    toolcalls: argparse.ArgumentParser = subparsers.add_parser(
        "toolcalls", help="tool-call parsing accuracy of the installed backends on a corpus"
    )
    sub = toolcalls.add_subparsers(dest="toolcalls_command", required=True)
    score = sub.add_parser(
        "score",
        help="score corpus files (JSONL), or with --outputs a file of outputs made elsewhere",
    )
    score.add_argument(
        "corpus",
        nargs="*",
        metavar="CORPUS|DATA",
        help="*.jsonl files or directories; with --outputs, live prompt directories "
        "(default: the shipped set), or bfcl / bfcl:<stem>,... for the pinned BFCL data",
    )
    score.add_argument(
        "--outputs",
        default=None,
        metavar="FILE",
        help='JSONL, one line per prompt: {"id", "calls": [...]} or {"id", "text", "parser"}',
    )
    score.add_argument(
        "--string-match", default="strict", choices=["strict", "bfcl"], help="with --outputs"
    )
    score.add_argument("--record", default=None, metavar="FILE", help="with --outputs: JSON out")
    score.add_argument("--parser", default="auto", metavar="NAME|auto", help=PARSER_HELP)
    score.add_argument("--json", action="store_true", help="print the scores as JSON")
    score.add_argument("-k", default=None, help="only cases whose id contains this text")
    score.set_defaults(func=run)
    bfcl = sub.add_parser(
        "import-bfcl", help="BFCL data (bfcl-eval wheel or data dir) as live prompt files"
    )
    bfcl.add_argument(
        "source",
        nargs="?",
        default=None,
        metavar="SOURCE",
        help="bfcl_eval-*.whl, or a BFCL data dir (default: the pinned bfcl-eval wheel, "
        "downloaded from PyPI into the cache once)",
    )
    bfcl.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="where the YAML files go (default: the cache folder a suite's `data: bfcl` reads)",
    )
    bfcl.add_argument(
        "--categories",
        nargs="+",
        default=None,
        metavar="STEM",
        help="BFCL file stems (simple_python, live_multiple, ...); default: all supported",
    )
    bfcl.set_defaults(func=run)
    return toolcalls


def run(args: argparse.Namespace) -> int:
    """The ``toolcalls`` subcommand named on the command line."""
    if args.toolcalls_command == "import-bfcl":
        return _import_bfcl(args)
    return _score(args)


def _import_bfcl(args: argparse.Namespace) -> int:
    """Import BFCL categories into ``--out``; print counts and skips. 2 on a bad source.
    Without SOURCE the pinned wheel is used; without ``--out`` as well, the cache folder that
    ``data: bfcl`` reads is filled (once: a current import is kept)."""
    from harness.models.fetch import FetchError
    from harness.toolcalls.bfcl_data import ensure_imported, fetch_bfcl, imported_counts
    from harness.toolcalls.bfcl_import import BfclImportError, import_bfcl, write

    try:
        if args.source is None and args.out is None and args.categories is None:
            out = ensure_imported()
            counts = imported_counts()
        else:
            if args.out is None:
                raise BfclImportError("--categories or SOURCE need --out DIR; give one")
            imported = import_bfcl(args.source or fetch_bfcl(), args.categories)
            write(imported, args.out)
            out = args.out
            counts = imported.counts()
    except (BfclImportError, FetchError, OSError) as exc:
        raise CliError(str(exc)) from None
    for stem, (taken, left) in sorted(counts.items()):
        print(f"{stem}: {taken} imported, {left} skipped")
    total = sum(taken for taken, _ in counts.values())
    print(f"{total} prompts in {out}; skipped entries and reasons in {out}/skipped.txt")
    return 0


def _score(args: argparse.Namespace) -> int:
    from harness.toolcalls.corpus import CorpusInvalid, load_corpus
    from harness.toolcalls.render import as_json, failures, summary, table
    from harness.toolcalls.scorer import score_corpus

    if getattr(args, "outputs", None):
        return _score_outputs(args)
    if not args.corpus:
        raise CliError("give CORPUS files or directories, or --outputs FILE")
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
        raise CliError(str(exc)) from None
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


def _score_outputs(args: argparse.Namespace) -> int:
    """``score --outputs``: per-category accuracy of outputs made elsewhere. 2 on bad input.
    A DATA of ``bfcl`` or ``bfcl:<stem>,...`` is the pinned BFCL data, imported in the cache."""
    from harness.models.fetch import FetchError
    from harness.toolcalls import bfcl_data, shipped
    from harness.toolcalls.bfcl_import import BfclImportError
    from harness.toolcalls.live import Prompt
    from harness.toolcalls.live_data import LiveDataInvalid
    from harness.toolcalls.score_file import (
        OutputsInvalid,
        as_json,
        read_outputs,
        score_outputs,
        table,
    )
    from harness.toolcalls.values import StringMatch

    data = [str(d) for d in args.corpus] or [str(shipped.live_dir())]
    prompts: list[Prompt] = []
    try:
        for directory in data:
            prompts.extend(bfcl_data.load_source(directory).prompts)
        by_id = {p.id: p for p in prompts}
        parser = None if args.parser == "auto" else args.parser
        outputs = read_outputs(args.outputs, by_id, parser)
    except (LiveDataInvalid, OutputsInvalid) as exc:
        for error in exc.errors:
            print(error, file=sys.stderr)
        return 2
    except (ValueError, FetchError, BfclImportError) as exc:
        raise CliError(str(exc)) from None
    scored = score_outputs(list(by_id.values()), outputs, StringMatch(args.string_match))
    record = as_json(scored, str(args.outputs), data)
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
    else:
        print("\n".join(table(record)))
    if args.record:
        try:
            with open(args.record, "w", encoding="utf-8") as handle:
                json.dump(record, handle, indent=2, ensure_ascii=False)
        except OSError as exc:
            raise CliError(
                f"{args.record}: cannot write ({exc.strerror}); check the path"
            ) from None
    return 0
