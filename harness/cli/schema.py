"""``mlx-harness schema``: the suite JSON Schema, for editors."""

from __future__ import annotations

import argparse
import json
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "schema", help="print the suite JSON Schema (for editors)"
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from harness.spec.schema import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0
