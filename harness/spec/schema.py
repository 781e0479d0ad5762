"""The suite schema (pydantic, unknown keys forbidden). ``mlx-harness schema`` prints it."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SUITE_SCHEMA_VERSION = 1


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Defaults(Strict):
    repeats: int = Field(3, ge=1, description="measured repetitions per case")
    warmup: int = Field(1, ge=0, description="warm-up runs per case, kept apart from samples")
    timeout_s: float = Field(600.0, gt=0, description="wall-clock limit per case (and per load)")


class ModelEntry(Strict):
    """A model: exactly one of ``path`` (local directory), ``hub`` (id) or ``embedded`` (name)."""

    name: str | None = Field(None, description="alias used in ids, expect and reports")
    path: str | None = Field(None, description="local model directory (relative to the suite)")
    hub: str | None = Field(None, description="Hugging Face id, resolved from the local cache")
    embedded: str | None = Field(None, description="embedded model, e.g. zoo/llama")
    revision: str | None = Field(None, description="hub revision (branch, tag or commit)")
    backend: str = Field("mlx_lm", description="backend that loads it")
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_source(self) -> ModelEntry:
        given = [k for k in ("path", "hub", "embedded") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(
                "a model needs exactly one of 'path', 'hub' or 'embedded'"
                + (f" (got {', '.join(given)})" if given else "")
            )
        return self

    @property
    def location(self) -> str:
        return str(self.path or self.hub or self.embedded)

    @property
    def key(self) -> str:
        if self.name:
            return self.name
        return self.location.rstrip("/").split("/")[-1] if self.path else self.location


class ScenarioEntry(Strict):
    scenario: str = Field(description="registered scenario name, e.g. throughput")
    id: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="name used in case ids instead of the scenario name (needed when one "
        "scenario is listed twice for a model)",
    )
    params: dict[str, Any] = Field(default_factory=dict, description="scenario parameters")
    sweep: dict[str, list[Any]] = Field(
        default_factory=dict, description="parameters to sweep; one case per combination"
    )
    models: list[str] | None = Field(None, description="restrict to these model names")
    repeats: int | None = Field(None, ge=1)
    warmup: int | None = Field(None, ge=0)
    timeout_s: float | None = Field(None, gt=0)
    gates: dict[str, str] = Field(default_factory=dict)

    @field_validator("sweep")
    @classmethod
    def _non_empty(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in value.items():
            if not values:
                raise ValueError(f"sweep '{key}' needs at least one value")
        return value


class ExpectEntry(Strict):
    """A known outcome: strict xfail (an upstream fix shows as XPASS) or skip."""

    model: str = Field("*", description="model name or glob")
    scenario: str = Field("*", description="scenario name or glob")
    status: Literal["xfail", "skip"]
    reason: str
    link: str | None = None
    recheck: dt.date | None = Field(None, description="date to re-check this entry")
    strict: bool = True


class IncludeFile(Strict):
    """A file named in ``include:``: shared model lists and known-broken entries."""

    schema_version: int = SUITE_SCHEMA_VERSION
    models: list[ModelEntry] = Field(default_factory=list)
    expect: list[ExpectEntry] = Field(default_factory=list)


class Suite(Strict):
    schema_version: Literal[1] = Field(description="suite format version")
    name: str | None = Field(None, description="defaults to the file name")
    description: str | None = None
    include: list[str] = Field(default_factory=list, description="files with models/expect")
    allow_download: bool = Field(False, description="allow hub downloads (offline by default)")
    defaults: Defaults = Field(default_factory=Defaults)  # type: ignore[arg-type]
    models: list[ModelEntry] = Field(default_factory=list)
    scenarios: list[ScenarioEntry]
    expect: list[ExpectEntry] = Field(default_factory=list)
    gates: dict[str, str] = Field(
        default_factory=dict, description='metric -> gate, e.g. throughput.decode_tps: ">= 5"'
    )


def json_schema() -> dict[str, Any]:
    """JSON Schema of a suite file, for editors."""
    schema = Suite.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "mlx-harness suite"
    return schema
