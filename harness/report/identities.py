"""Models: what each model was, for judging whether two runs are comparable."""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.types import RunRecord, Unit
from harness.report.formatting import MISSING, format_value
from harness.report.sections import CLOSING, Section
from harness.report.table import Cell, Column, Table


@dataclass(frozen=True)
class Identities:
    table: Table


def _short(sha: str | None) -> str:
    return sha[:12] if sha else MISSING


def build(run: RunRecord) -> Identities | None:
    if not run.models:
        return None
    rows = tuple(
        (
            Cell(identity.key),
            Cell(identity.backend),
            Cell(identity.revision or MISSING),
            Cell(
                format_value(identity.weights_bytes, Unit.BYTES)
                if identity.weights_bytes is not None
                else MISSING,
                sort=identity.weights_bytes,
            ),
            Cell(_short(identity.config_sha256), title=identity.config_sha256),
            Cell(_short(identity.chat_template_sha256), title=identity.chat_template_sha256),
            Cell(identity.path or MISSING),
        )
        for identity in run.models.values()
    )
    columns = (
        Column("model"),
        Column("backend"),
        Column("revision"),
        Column("weights", numeric=True),
        Column("config sha256"),
        Column("chat template sha256"),
        Column("path"),
    )
    return Identities(Table(columns, rows))


SECTION = Section("models", "Model identities", build, order=CLOSING + 40)
