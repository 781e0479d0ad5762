"""A deterministic corpus of hostile suite files: mutations of the shipped suites in suites/.

Three kinds, all from one seed (:data:`SEED`), so a failing input can be rebuilt from its id:
- ``insert``: snippets of :data:`SNIPPETS` put at the start of every line of every file (each
  line gets every other snippet, alternating, so each snippet lands on every other line);
- ``flip``: random bytes overwritten with random values;
- ``cut``: the file truncated at random offsets.
The shipped include file (``known_broken.yaml``) is mutated too; its mutants go with an intact
suite that includes it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

SEED = 20260211
SUITES_DIR = Path(__file__).resolve().parents[2] / "suites"
INCLUDE = "known_broken.yaml"
FLIPS_PER_FILE = 60
CUTS_PER_FILE = 20

# each one hostile in its own way: encodings, control bytes, YAML features the loader refuses
SNIPPETS: tuple[bytes, ...] = (
    b"\t",
    b"\x00",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"caf\xe9: 1\n",  # Latin-1
    b"\x1b[31m",
    b"  ",
    b"- ",
    b"{",
    b"]",
    b"'",
    b'"\\x1b" ',
    b"? [a, b]\n: 1\n",
    b"~: 1\n",
    b"yes: 1\n",
    b"&a [*a]\n",
    b"*nowhere\n",
    b"<<: *nowhere\n",
    b"---\n",
    b"!!python/object/apply:os.system ['true']\n",
    b"x: !!binary aGk=\n",
    b"x: 2026-13-45\n",
    b"schema_version: 1\n",  # a duplicate key in most files
    b"[" * 200 + b"]" * 200 + b"\n",
    b"tags: [_private]\n",
    b"models: 1\n",
)


@dataclass(frozen=True)
class Mutant:
    """One hostile input: the suite's bytes, and replaced include bytes (None: the shipped)."""

    id: str
    suite_name: str
    suite: bytes
    include: bytes | None = None


def shipped() -> dict[str, bytes]:
    """The shipped suite files (and the include file), by name."""
    files = [*sorted(SUITES_DIR.glob("*.suite.yaml")), SUITES_DIR / INCLUDE]
    return {path.name: path.read_bytes() for path in files}


def _inserts(data: bytes) -> list[tuple[str, bytes]]:
    lines = data.splitlines(keepends=True)
    out = []
    for n in range(len(lines)):
        for k, snippet in enumerate(SNIPPETS):
            if (n + k) % 2:  # every other snippet on each line, alternating: half the time
                continue
            mutated = b"".join(lines[:n]) + snippet + b"".join(lines[n:])
            out.append((f"insert{k}@line{n + 1}", mutated))
    return out


def _flips(data: bytes, rng: random.Random) -> list[tuple[str, bytes]]:
    out = []
    for i in range(FLIPS_PER_FILE):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        out.append((f"flip{i}", bytes(mutated)))
    return out


def _cuts(data: bytes, rng: random.Random) -> list[tuple[str, bytes]]:
    return [(f"cut{i}", data[: rng.randrange(len(data))]) for i in range(CUTS_PER_FILE)]


def corpus(seed: int = SEED) -> list[Mutant]:
    """Every mutant, in a fixed order for a given seed."""
    rng = random.Random(seed)
    files = shipped()
    host = "smoke.suite.yaml"  # the intact suite that carries the include file's mutants
    mutants = []
    for name, data in files.items():
        for kind_id, mutated in _inserts(data) + _flips(data, rng) + _cuts(data, rng):
            if name == INCLUDE:
                mutants.append(Mutant(f"{name}:{kind_id}", host, files[host], mutated))
            else:
                mutants.append(Mutant(f"{name}:{kind_id}", name, mutated))
    return mutants
