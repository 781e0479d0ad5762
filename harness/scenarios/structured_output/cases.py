"""``structured_output``'s requests: a JSON Schema, the user turn that asks for it, and the
answer a right reading of the turn gives (``reference``: the fields whose values are checked).

A schema is checked against its own metaschema when the suite is read, and a reference against
the schema (a reference the schema refuses could never be matched). The built-in ones are small
and tight (enums, bounded integers, strings of at most a few dozen characters), so a
random-weight model under the constraint closes its JSON well within ``max_tokens``; each lists
its fields in ``required``, so an empty object ``{}`` does not conform.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class SchemaCase(BaseModel):
    """One request: ``prompt`` (a user turn) answered under ``schema``; ``reference`` (optional,
    not empty) the field values a right answer has."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64, description="names the request in reports")
    prompt: str = Field(min_length=1, description="the user turn")
    json_schema: dict[str, Any] = Field(description="the JSON Schema the answer must conform to")
    reference: dict[str, Any] | None = Field(
        None, min_length=1, description="field values of a right answer (unset: not checked)"
    )

    @model_validator(mode="after")
    def _schema_and_reference_hold(self) -> SchemaCase:
        from jsonschema import exceptions, validators

        validator = validators.validator_for(self.json_schema)
        try:
            validator.check_schema(self.json_schema)
        except exceptions.SchemaError as exc:
            raise ValueError(f"{self.name}: not a JSON Schema: {exc.message}") from None
        if self.reference is not None:
            error = exceptions.best_match(validator(self.json_schema).iter_errors(self.reference))
            if error is not None:
                raise ValueError(
                    f"{self.name}: the reference does not conform to its schema: {error.message}"
                )
        return self


def _object(properties: Mapping[str, Any]) -> dict[str, Any]:
    """A closed object whose every property is required."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": False,
    }


BUILTIN: tuple[SchemaCase, ...] = (
    SchemaCase(
        name="city_year",
        prompt="Extract the city and the year: 'The bridge in Lisbon opened in 1966.'",
        json_schema=_object(
            {
                "city": {"type": "string", "minLength": 1, "maxLength": 24},
                "year": {"type": "integer", "minimum": 1000, "maximum": 2100},
            }
        ),
        reference={"city": "Lisbon", "year": 1966},
    ),
    SchemaCase(
        name="sentiment",
        prompt="Is this review positive, negative or neutral? 'The soup was cold and the "
        "waiter was rude.'",
        json_schema=_object({"sentiment": {"enum": ["positive", "negative", "neutral"]}}),
        reference={"sentiment": "negative"},
    ),
    SchemaCase(
        name="person",
        prompt="Extract the person's name and age: 'Maria is 34 years old and lives in Porto.'",
        json_schema=_object(
            {
                "name": {"type": "string", "minLength": 1, "maxLength": 24},
                "age": {"type": "integer", "minimum": 0, "maximum": 130},
            }
        ),
        reference={"name": "Maria", "age": 34},
    ),
    SchemaCase(
        name="fact_check",
        prompt="True or false: 'Water boils at 100 degrees Celsius at sea level.'",
        json_schema=_object({"answer": {"type": "boolean"}}),
        reference={"answer": True},
    ),
)
