"""``structured_output``: the verdicts on data (parsed, conforms, correct, an empty object,
truncated; honoured, rejected, ignored), the params' checks, constrained decoding in process
on a real zoo model (conforming JSON from random weights), and planted breaks over HTTP: small
real servers of our own that ignore ``response_format``, reject it with a 400, or answer
``{}``; the case names each finding. Then one real llama-server request through the runner."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.backends.base import BackendCapability, ConstrainedDecoding, LoadInfo
from harness.backends.fake import FakeModel
from harness.backends.http import ServedModel
from harness.backends.mlx_lm import BACKEND, MlxLmModel
from harness.backends.openai_client import Endpoint
from harness.scenarios import SCENARIOS
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.structured_output import SCENARIO, StructuredOutputParams
from harness.scenarios.structured_output.cases import BUILTIN
from harness.scenarios.structured_output.http import request_body
from harness.scenarios.structured_output.verdicts import Honour, Judged, Verdict, honour, judge

CITY = next(c for c in BUILTIN if c.name == "city_year")
LAX = {"type": "object", "properties": {"city": {"type": "string"}}}  # nothing required
FLAG = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
LIST = {
    "type": "object",
    "properties": {"colours": {"type": "array", "items": {"type": "string"}}},
    "required": ["colours"],
}

V = Verdict
# (id, text, schema, reference, cut by max_tokens, verdict, correct)
VERDICTS: list[tuple[str, str, dict[str, Any], dict[str, Any] | None, bool, Verdict, Any]] = [
    ("correct", '{"city":"Lisbon","year":1966}', CITY.json_schema, CITY.reference, False,
     V.CORRECT, True),
    ("case_and_spaces", '{"city":" lisbon ","year":1966.0}', CITY.json_schema, CITY.reference,
     False, V.CORRECT, True),
    ("wrong_value", '{"city":"Porto","year":1966}', CITY.json_schema, CITY.reference, False,
     V.CONFORMS, False),
    ("empty_object", "{}", CITY.json_schema, CITY.reference, False, V.NONCONFORMING, None),
    ("empty_object_lax_schema", "{}", LAX, {"city": "Lisbon"}, False, V.CONFORMS, False),
    ("extra_field", '{"city":"Lisbon","year":1966,"x":1}', CITY.json_schema, CITY.reference,
     False, V.NONCONFORMING, None),
    ("out_of_range", '{"city":"Lisbon","year":3000}', CITY.json_schema, CITY.reference, False,
     V.NONCONFORMING, None),
    ("number_as_string", '{"city":"Lisbon","year":"1966"}', CITY.json_schema, CITY.reference,
     False, V.NONCONFORMING, None),
    ("one_for_true", '{"ok":1}', FLAG, {"ok": True}, False, V.NONCONFORMING, None),
    ("false_for_true", '{"ok":false}', FLAG, {"ok": True}, False, V.CONFORMS, False),
    ("list_in_any_order", '{"colours":["Green","red","white"]}', LIST,
     {"colours": ["red", "white", "green"]}, False, V.CORRECT, True),
    ("list_short", '{"colours":["red"]}', LIST, {"colours": ["red", "white"]}, False,
     V.CONFORMS, False),
    ("no_reference", '{"city":"Porto","year":1999}', CITY.json_schema, None, False,
     V.CONFORMS, None),
    ("truncated", '{"city":"Lis', CITY.json_schema, CITY.reference, True, V.TRUNCATED, None),
    ("broken_not_cut", '{"city":"Lis', CITY.json_schema, CITY.reference, False, V.NOT_JSON,
     None),
    ("prose", "The city is Lisbon.", CITY.json_schema, CITY.reference, False, V.NOT_JSON, None),
    ("fenced", '```json\n{"city":"Lisbon","year":1966}\n```', CITY.json_schema,
     CITY.reference, False, V.NOT_JSON, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "schema", "reference", "cut", "verdict", "correct"),
    [r[1:] for r in VERDICTS],
    ids=[r[0] for r in VERDICTS],
)
def test_verdict_of_an_answer(
    text: str,
    schema: dict[str, Any],
    reference: dict[str, Any] | None,
    cut: bool,
    verdict: Verdict,
    correct: bool | None,
) -> None:
    judged = judge(text, schema, reference, cut)
    assert (judged.verdict, judged.correct) == (verdict, correct)
    assert (judged.why == "") == (verdict.conforms and correct is not False)


def test_why_names_the_field_and_the_rule() -> None:
    assert judge("{}", CITY.json_schema, CITY.reference, False).why == (
        "at (root): 'city' is a required property"
    )
    assert judge('{"city":"Porto","year":1}', CITY.json_schema, None, False).why.startswith(
        "at year: 1 is less than the minimum of 1000"
    )


GOOD = Judged(Verdict.CONFORMS, None)
CUT = Judged(Verdict.TRUNCATED, None)
PROSE = Judged(Verdict.NOT_JSON, None)
BAD = Judged(Verdict.NONCONFORMING, None)
H = Honour
# (id, status, constrained text, unconstrained text, verdict, honour)
HONOURS = [
    ("conforms", 200, '{"a":1}', "prose", GOOD, H.HONOURED),
    ("conforms_as_unasked", 200, '{"a":1}', '{"a":1}', GOOD, H.HONOURED),
    ("cut_differently", 200, '{"a":"xx', "prose", CUT, H.HONOURED),
    ("cut_the_same", 200, "same prose", "same prose", CUT, H.IGNORED),
    ("same_prose", 200, "same prose", "same prose", PROSE, H.IGNORED),
    ("other_prose", 200, "prose", "other prose", PROSE, H.IGNORED),
    ("empty_object", 200, "{}", "prose", BAD, H.IGNORED),
    ("bad_request", 400, "", "prose", PROSE, H.REJECTED),
    ("unprocessable", 422, "", "prose", PROSE, H.REJECTED),
]


@pytest.mark.parametrize(
    ("status", "constrained", "unconstrained", "judged", "expected"),
    [r[1:] for r in HONOURS],
    ids=[r[0] for r in HONOURS],
)
def test_what_the_server_did_with_response_format(
    status: int, constrained: str, unconstrained: str, judged: Judged, expected: Honour
) -> None:
    assert honour(status, constrained, unconstrained, judged) is expected


def test_the_request_carries_a_strict_json_schema_only_when_constrained() -> None:
    body = request_body(CITY, 32, constrained=True)
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "city_year", "schema": CITY.json_schema, "strict": True},
    }
    assert body["temperature"] == 0.0 and body["max_tokens"] == 32
    assert "response_format" not in request_body(CITY, 32, constrained=False)


@pytest.mark.parametrize(
    ("schemas", "message"),
    [
        ([{"name": "a", "prompt": "p", "json_schema": {"type": "nope"}}], "not a JSON Schema"),
        (
            [{"name": "a", "prompt": "p", "json_schema": FLAG, "reference": {"ok": "yes"}}],
            "the reference does not conform to its schema: 'yes' is not of type 'boolean'",
        ),
        ([{"name": "a", "prompt": "p", "json_schema": FLAG, "reference": {}}], "at least 1"),
        (
            [{"name": "a", "prompt": "p", "json_schema": FLAG}] * 2,
            "schema names must differ: a given twice",
        ),
        ([{"name": "a", "prompt": "p", "schema": FLAG}], "json_schema"),
    ],
    ids=["bad_schema", "reference_refused", "empty_reference", "same_name", "unknown_key"],
)
def test_params_refuse_schemas_that_cannot_judge(schemas: list[Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        StructuredOutputParams.model_validate({"schemas": schemas})


def test_builtin_schemas_require_their_fields_and_params_round_trip() -> None:
    assert SCENARIOS.get("structured_output") is SCENARIO
    for case in BUILTIN:
        assert set(case.json_schema["required"]) == set(case.json_schema["properties"])
        assert judge("{}", case.json_schema, case.reference, False).verdict is V.NONCONFORMING
    params = StructuredOutputParams()
    assert StructuredOutputParams.model_validate(params.model_dump()) == params


# -- in process -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama(tiny_llama: Path) -> MlxLmModel:
    return BACKEND.load(tiny_llama)[0]


def _ctx(model: object, *, repeats: int = 1, warmup: int = 0, backend: str = "mlx_lm") -> Any:
    info = LoadInfo(0.0, 0, "cpu")
    return ScenarioContext(model, info, repeats, warmup, lambda: (model, info), backend)


def _run(model: object, ctx: Any = None, **params: Any) -> ScenarioOutput:
    return SCENARIO.run(ctx or _ctx(model), StructuredOutputParams.model_validate(params))


def _samples(out: ScenarioOutput) -> dict[str, tuple[float, ...]]:
    return {m.name.removeprefix("structured_output."): m.samples for m in out.metrics}


def test_constrained_decoding_makes_random_weights_conform(llama: MlxLmModel) -> None:
    assert isinstance(llama, ConstrainedDecoding)
    assert BackendCapability.CONSTRAINED_DECODING in BACKEND.capabilities
    out = _run(llama, _ctx(llama, repeats=2, warmup=1), max_tokens=48)
    assert (out.failures, out.skip_reason, out.timed_out) == ((), None, None)
    samples = _samples(out)
    assert samples["parse_rate"] == samples["conform_rate"] == (1.0, 1.0)
    assert len(samples["correct_rate"]) == 2  # random weights: whatever it is, it is measured
    assert len(samples["cost_x"]) >= 2 and all(x > 0 for x in samples["cost_x"])
    assert all(t > 0 for t in samples["ttft_s"] + samples["unconstrained_ttft_s"])
    facts = out.artifacts
    assert facts["engine"].startswith("in process (llguidance ")
    assert facts["requests"] == 2 * len(BUILTIN) and facts["honour"] == {}
    assert facts["verdicts"]["nonconforming"] == facts["verdicts"]["not_json"] == 0
    for answer in facts["answers"]:
        assert answer["conforms"] is True and answer["honour"] is None
        json.loads(answer["text"])


def test_max_tokens_cuts_the_json_into_a_truncated_verdict_not_a_failure(
    llama: MlxLmModel,
) -> None:
    out = _run(llama, max_tokens=4, schemas=[CITY.model_dump()])
    assert (out.failures, out.skip_reason) == ((), None)
    assert [a["verdict"] for a in out.artifacts["answers"]] == ["truncated"]
    assert _samples(out)["parse_rate"] == (0.0,)


def test_a_backend_without_constrained_decoding_skips_with_the_reason() -> None:
    out = SCENARIO.run(_ctx(FakeModel({}), backend="fake"), StructuredOutputParams())
    assert out.skip_reason == (
        "capability_missing: backend fake has no JSON-Schema-constrained decoding"
    )


# -- over HTTP: servers of our own --------------------------------------------------------------

PROSE = "Here you go: the answer is in the sentence."


class Planted(ThreadingHTTPServer):
    """An OpenAI-ish chat server; ``mode`` says what it does with ``response_format``:
    honours (answers each built-in schema's reference), ignores (prose either way),
    rejects (a 400 with its message), empty (answers ``{}``); breaks: a 500 for everything."""

    mode = "honours"


class Handler(BaseHTTPRequestHandler):
    server: Planted

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        wanted = body.get("response_format")
        if wanted is not None and self.server.mode == "rejects":
            self._send(400, {"error": {"message": "response_format is not supported"}})
            return
        if self.server.mode == "breaks":
            self._send(500, {"error": {"message": "out of memory"}})
            return
        text = PROSE
        if wanted is not None and self.server.mode == "honours":
            name = wanted["json_schema"]["name"]
            text = json.dumps(next(c.reference for c in BUILTIN if c.name == name))
        elif wanted is not None and self.server.mode == "empty":
            text = "{}"
        chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for index, piece in enumerate(chunks):
            last = index == len(chunks) - 1
            choice = {"index": 0, "delta": {"content": piece}}
            choice["finish_reason"] = "stop" if last else None
            self.wfile.write(f"data: {json.dumps({'choices': [choice]})}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def planted(mode: str) -> Iterator[ServedModel]:
    server = Planted(("127.0.0.1", 0), Handler)
    server.mode = mode
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield ServedModel(Endpoint(f"http://{host}:{port}"), "planted", None)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_a_server_that_honours_the_schema_passes_with_its_verdicts() -> None:
    with planted("honours") as model:
        out = _run(model, _ctx(model, repeats=2, warmup=1, backend="http"))
    assert (out.failures, out.skip_reason) == ((), None)
    assert _samples(out)["correct_rate"] == (1.0, 1.0)
    assert out.artifacts["honour"] == {"honoured": 8, "rejected": 0, "ignored": 0}
    assert out.artifacts["verdicts"]["correct"] == 8


def test_a_server_that_ignores_response_format_is_a_named_finding() -> None:
    with planted("ignores") as model:
        out = _run(model, _ctx(model, backend="http"))
    assert out.failures == (
        "planted ignored response_format (json_schema) in 4 of 4 requests; first city_year: "
        'not JSON: Expecting value: line 1 column 1 (char 0): "' + PROSE + '"',
    )
    assert out.artifacts["honour"]["ignored"] == 4
    assert _samples(out)["parse_rate"] == (0.0,)


def test_an_empty_object_is_no_honoured_schema() -> None:
    with planted("empty") as model:
        out = _run(model, _ctx(model, backend="http"), schemas=[CITY.model_dump()])
    assert out.failures == (
        "planted ignored response_format (json_schema) in 1 of 1 requests; first city_year: "
        "at (root): 'city' is a required property: \"{}\"",
    )
    assert _samples(out)["correct_rate"] == (0.0,)


@pytest.mark.parametrize(
    ("require", "failures", "skip"),
    [
        (
            "honoured",
            (
                "planted rejected response_format (json_schema) in 4 of 4 requests: HTTP 400 "
                "at POST /v1/chat/completions: 'response_format is not supported'",
            ),
            None,
        ),
        (
            "not_ignored",
            (),
            "capability_missing: planted rejects response_format (json_schema): HTTP 400 at "
            "POST /v1/chat/completions: 'response_format is not supported'",
        ),
        ("nothing", (), None),
    ],
)
def test_a_server_that_rejects_it_fails_or_skips_as_required(
    require: str, failures: tuple[str, ...], skip: str | None
) -> None:
    with planted("rejects") as model:
        out = _run(model, _ctx(model, repeats=3, backend="http"), require=require)
    assert (out.failures, out.skip_reason) == (failures, skip)
    assert out.artifacts["honour"] == {"honoured": 0, "rejected": 4, "ignored": 0}
    assert out.artifacts["requests"] == 4  # one run: a server that refuses is not asked again
    assert "parse_rate" not in _samples(out)


def test_a_server_that_ignores_it_fails_unless_nothing_is_required() -> None:
    with planted("ignores") as model:
        out = _run(model, _ctx(model, backend="http"), require="nothing")
    assert (out.failures, out.skip_reason) == ((), None)
    assert out.artifacts["honour"]["ignored"] == 4


def test_a_broken_server_fails_the_case_with_its_message_and_time_running_out_keeps_it() -> None:
    with planted("breaks") as model:
        out = _run(model, _ctx(model, backend="http"))
    assert out.failures == (
        "request failed (city_year): HTTP 500 at POST /v1/chat/completions: 'out of memory'",
    )
    with planted("honours") as model:
        info = LoadInfo(0.0, 0, "cpu")
        ctx = ScenarioContext(model, info, 2, 0, lambda: (model, info), "http", case_end=0.0)
        out = _run(model, ctx)
    assert out.timed_out == "ran out after 0 of 2 runs (warm-ups included)"
    assert (out.failures, out.metrics) == ((), ())


# -- a real server, through the runner ----------------------------------------------------------

REAL_SUITE_HEAD = """\
schema_version: 1
defaults: {repeats: 1, warmup: 0, timeout_s: 300}
models:
  - name: smollm2@llama-server
    embedded: smollm2-135m-instruct
    serve: llama_server
scenarios:
  - scenario: structured_output
    params:
      max_tokens: 32
      schemas:
        - name: city_year
          prompt: "Extract the city and the year: 'The bridge in Lisbon opened in 1966.'"
          reference: {city: Lisbon, year: 1966}
          json_schema: """
REAL_SUITE = REAL_SUITE_HEAD + json.dumps(CITY.json_schema) + "\n"


@pytest.mark.real_model
@pytest.mark.slow
@pytest.mark.nightly  # a real llama-server on SmolLM2: 12-30 s here
def test_llama_server_honours_a_json_schema(tmp_path: Path) -> None:
    from harness.cli import main
    from harness.core.types import Status
    from harness.models.catalog import embedded_models
    from harness.models.llama_server import find_llama_server
    from harness.results.store import load_run

    if find_llama_server() is None:
        pytest.skip("llama-server is not built (run `make llama-server`)")
    if not any(m.name == "smollm2-135m-instruct" and m.prepared for m in embedded_models()):
        pytest.skip("not prepared: smollm2-135m-instruct (run `mlx-harness models prepare`)")
    suite = tmp_path / "so.suite.yaml"
    suite.write_text(REAL_SUITE)
    reports = tmp_path / "reports"
    assert main(["run", str(suite), "--report-dir", str(reports), "--run-id", "so"]) == 0
    (result,) = load_run(reports / "so").results
    assert result.status is Status.PASSED, result.reason
    assert result.artifacts["engine"] == "llama-server"
    assert result.artifacts["honour"] == {"honoured": 1, "rejected": 0, "ignored": 0}
    (answer,) = result.artifacts["answers"]
    assert answer["verdict"] in ("correct", "conforms"), answer
