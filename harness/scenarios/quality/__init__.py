"""``quality``: perplexity on a shipped text set, and next-token agreement and KL divergence
against a reference model (e.g. a 4-bit model against its float32 conversion).

The text is tokenized by the model under test and cut into ``chunks`` items of
``chunk_tokens`` tokens; each item is one forward pass without a cache. Per item (one sample
per item, in text order, so two runs pair item by item; ``repeats`` do not apply: the
figures are deterministic):

- perplexity = exp(mean negative log-likelihood of each next token), natural log;
- with a ``reference``: its perplexity on the same tokens, greedy-token agreement (the share of
  positions where both models' most likely next token is the same) and the mean KL divergence
  KL(reference || model) of the next-token distributions, in nats.

Design: the reference is loaded in the same worker, through the same backend, for the length
of the case, and released after it. The runner keeps one worker per model, so a second step
would need the runner to pass logits between workers (hundreds of MB per item); loading the
reference beside the model costs its weights for one case (the workload names it, so the
preflight's memory estimate includes them), and keeps both forward passes on the same tokens
in one process. Both models must tokenize the text the same way and share the vocabulary, or
the comparison fails with the reason.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from harness.backends.base import BackendCapability, BackendError, LoadedModel
from harness.backends.scoring import Scoring
from harness.core.metrics import MetricSpec, VariesBy
from harness.core.types import Unit
from harness.probe.types import Capability, ReasonCode
from harness.scenarios.artifacts import ScenarioArtifacts
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.logprob_compare import kl_divergence
from harness.scenarios.second_model import SecondModel, SecondModelError, second_model_path

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

PERPLEXITY = MetricSpec(
    "quality.perplexity",
    Unit.SCORE,
    False,
    "perplexity of the text, per item",
    noise_floor=0.01,
    varies_by=VariesBy.ITEM,
)
REFERENCE_PERPLEXITY = MetricSpec(
    "quality.reference_perplexity",
    Unit.SCORE,
    False,
    "the reference model's perplexity on the same items",
    noise_floor=0.01,
    varies_by=VariesBy.ITEM,
)
AGREEMENT = MetricSpec(
    "quality.token_agreement",
    Unit.RATIO,
    True,
    "share of positions where the greedy next token equals the reference's",
    noise_floor=0.01,
    varies_by=VariesBy.ITEM,
)
KL = MetricSpec(
    "quality.kl_divergence",
    Unit.SCORE,
    False,
    "mean KL(reference || model) of next-token distributions, nats",
    noise_floor=0.05,
    varies_by=VariesBy.ITEM,
)


def shipped_texts() -> Path:
    return Path(__file__).resolve().parents[3] / "suites" / "data" / "quality"


ReferenceModel = SecondModel  # the model to compare against: an embedded name or a directory


class QualityParams(Params):
    text: str = Field(
        "public_domain",
        description="a shipped text set (suites/data/quality/NAME.txt) or a path to a .txt file",
    )
    chunk_tokens: int = Field(256, ge=8, le=8192, description="tokens per item")
    chunks: int = Field(4, ge=1, le=256, description="items scored (fewer if the text is short)")
    reference: ReferenceModel | None = Field(None, description="model to compare against")


class QualityError(ValueError):
    """The case's inputs cannot be used; the message is one line with the fix."""


def text_path(name: str) -> Path:
    shipped = shipped_texts() / f"{name}.txt"
    if shipped.is_file():
        return shipped
    given = Path(name).expanduser()
    if given.is_file():
        return given
    names = ", ".join(sorted(p.stem for p in shipped_texts().glob("*.txt")))
    raise QualityError(f"text {name!r} is neither a shipped set ({names}) nor a file")


def reference_path(reference: ReferenceModel) -> Path:
    try:
        return second_model_path(reference, "reference")
    except SecondModelError as exc:
        raise QualityError(str(exc)) from None


def chunked(tokens: list[int], size: int, count: int) -> list[list[int]]:
    """Up to ``count`` consecutive items of exactly ``size`` tokens (a short tail is dropped,
    unless the whole text is shorter than one item)."""
    items = [tokens[i : i + size] for i in range(0, len(tokens) - size + 1, size)][:count]
    return items or ([tokens] if len(tokens) >= 2 else [])


def perplexity(logprobs: NDArray[np.float32], tokens: list[int]) -> float:
    """exp(mean NLL of tokens[1:]) given row ``i`` = log p(. | tokens[: i + 1])."""
    import numpy as np

    targets = np.asarray(tokens[1:])
    picked = logprobs[np.arange(len(targets)), targets]
    return math.exp(-float(np.mean(picked, dtype=np.float64)))


def agreement(model: NDArray[np.float32], reference: NDArray[np.float32]) -> float:
    """Share of rows (positions) whose argmax is the same."""
    import numpy as np

    return float(np.mean(np.argmax(model, axis=-1) == np.argmax(reference, axis=-1)))


class QualityScenario(BaseScenario[QualityParams]):
    name: ClassVar[str] = "quality"
    measures_time: ClassVar[bool] = False  # perplexity, agreement, KL: ratios
    version: ClassVar[int] = 1
    params_model = QualityParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (PERPLEXITY, REFERENCE_PERPLEXITY, AGREEMENT, KL)
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION}
    )
    repeats_apply: ClassVar[bool] = False
    samples_from: ClassVar[str] = "text chunks"

    def workload(self, params: QualityParams) -> Workload:
        """One item's tokens, scored at every position; the reference (when it resolves) is
        loaded beside the model."""
        references: tuple[str, ...] = ()
        if params.reference is not None:
            with contextlib.suppress(QualityError):  # else the case fails with the reason
                references = (str(reference_path(params.reference)),)
        return Workload(params.chunk_tokens, 0, references, logits_rows=params.chunk_tokens)

    def run(self, ctx: ScenarioContext, params: QualityParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, LoadedModel):
            return lacks(ctx, BackendCapability.TEXT_GENERATION)
        if not isinstance(model, Scoring):
            return ScenarioOutput(
                (),
                skip_reason=f"{ReasonCode.CAPABILITY_MISSING.value}: backend {ctx.backend} "
                "gives no next-token log-probabilities",
            )
        try:
            path = text_path(params.text)
            ref_path = reference_path(params.reference) if params.reference else None
        except QualityError as exc:
            return ScenarioOutput((), failures=(str(exc),))
        text = path.read_text(encoding="utf-8")
        items = chunked(model.encode(text), params.chunk_tokens, params.chunks)
        if not items:
            return ScenarioOutput((), failures=(f"text {path} has fewer than 2 tokens",))
        artifacts: dict[str, object] = {
            "text": path.name,
            "items": len(items),
            "item_tokens": [len(i) for i in items],
        }
        reference: Scoring | None = None
        if ref_path is not None and params.reference is not None:
            artifacts["reference"] = params.reference.label
            reference, refused = _load_reference(ctx, ref_path, text, model.encode(text))
            if refused:
                ppl = [perplexity(model.next_token_logprobs(item), item) for item in items]
                return ScenarioOutput((metric(PERPLEXITY, ppl),), artifacts, failures=(refused,))
        return self._score(model, reference, items, artifacts)

    def _score(
        self,
        model: Scoring,
        reference: Scoring | None,
        items: list[list[int]],
        artifacts: dict[str, object],
    ) -> ScenarioOutput:
        values: dict[str, list[float]] = {spec.name: [] for spec in self.metrics}
        for item in items:
            ours = model.next_token_logprobs(item)[:-1]
            values[PERPLEXITY.name].append(perplexity(ours, item))
            if reference is None:
                continue
            theirs = reference.next_token_logprobs(item)[:-1]
            if ours.shape != theirs.shape:
                failure = (
                    f"the reference has {theirs.shape[-1]} vocabulary entries, the model "
                    f"{ours.shape[-1]}: agreement and KL need the same vocabulary"
                )
                return ScenarioOutput((), artifacts, failures=(failure,))
            values[REFERENCE_PERPLEXITY.name].append(perplexity(theirs, item))
            values[AGREEMENT.name].append(agreement(ours, theirs))
            values[KL.name].append(kl_divergence(ours, theirs))
        metrics = tuple(
            metric(spec, values[spec.name]) for spec in self.metrics if values[spec.name]
        )
        return ScenarioOutput(metrics, artifacts)


def _load_reference(
    ctx: ScenarioContext, path: Path, text: str, tokens: list[int]
) -> tuple[Scoring | None, str | None]:
    """The reference loaded through the case's backend, or why it cannot be compared."""
    from harness.backends import BACKENDS

    try:
        reference, _info = BACKENDS.get(ctx.backend).load(path)
    except BackendError as exc:
        return None, f"reference {path.name} could not be loaded: {exc}"
    if not isinstance(reference, Scoring) or not isinstance(reference, LoadedModel):
        return None, f"reference {path.name} gives no next-token log-probabilities"
    if reference.encode(text) != tokens:
        return None, (
            f"reference {path.name} tokenizes the text differently; agreement and KL need "
            "the same tokenizer"
        )
    return reference, None


@dataclass(frozen=True)
class QualityArtifacts(ScenarioArtifacts):
    """What a ``quality`` case records beside its metrics that the report reads."""

    text: str | None = None  # the file scored
    items: int | None = None  # its windows
    reference: str | None = None  # the reference model compared against (None: none)


SCENARIO = QualityScenario()
