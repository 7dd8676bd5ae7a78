"""pydantic models in the OpenAPI schema, as OpenAPI 3.0 understands them.

drf-spectacular's contrib extension (`drf_spectacular.contrib.pydantic`) emits pydantic's JSON
schema as is: JSON Schema 2020-12, where an optional field is `anyOf: [X, {type: null}]`. The
schema we serve is OpenAPI 3.0.3 (SPECTACULAR_SETTINGS has no OAS_VERSION), which has no `null`
type, so validators and clients reject it. This extension does the same registration (one
component per model, `$defs` as sibling components) and rewrites the 3.1-only keywords:
`{type: null}` in anyOf/oneOf becomes `nullable: true`, `const` becomes a one-value `enum`,
numeric `exclusiveMinimum/Maximum` the 3.0 boolean form, `examples` the first `example`.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.contrib.pydantic import PydanticExtension
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import serializers

REF_PREFIX = "#/components/schemas/"


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        extra = {k: v for k, v in schema.items() if k != "$ref"}
        return {"allOf": [{"$ref": schema["$ref"]}], "nullable": True, **extra}
    return {**schema, "nullable": True}


def to_openapi_30(node: Any) -> Any:
    if isinstance(node, list):
        return [to_openapi_30(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: to_openapi_30(value) for key, value in node.items()}
    for combinator in ("anyOf", "oneOf"):
        options = node.get(combinator)
        if isinstance(options, list) and any(o == {"type": "null"} for o in options):
            rest = [o for o in options if o != {"type": "null"}]
            siblings = {k: v for k, v in node.items() if k != combinator}
            if len(rest) == 1:
                merged = {**rest[0], **{k: v for k, v in siblings.items() if k not in rest[0]}}
                node = _nullable(merged)
            else:
                node = {**siblings, combinator: rest, "nullable": True}
    if node.get("type") == "null":
        node.pop("type")
        node["nullable"] = True
        node.setdefault("enum", [None])
    if "const" in node:
        node["enum"] = [node.pop("const")]
    for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = node.get(bound)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            node[plain] = value
            node[bound] = True
    if "examples" in node and isinstance(node["examples"], list):
        examples = node.pop("examples")
        if examples:
            node.setdefault("example", examples[0])
    node.pop("propertyNames", None)
    return node


class OpenApi30PydanticExtension(PydanticExtension):
    priority = 1  # wins over the contrib extension it refines

    def map_serializer(self, auto_schema, direction):
        from pydantic.json_schema import model_json_schema

        schema = model_json_schema(self.target, ref_template=REF_PREFIX + "{model}", mode="validation")
        for sub_name, sub_schema in schema.pop("$defs", {}).items():
            auto_schema.registry.register_on_missing(
                ResolvedComponent(
                    name=sub_name, type=ResolvedComponent.SCHEMA, object=sub_name, schema=to_openapi_30(sub_schema)
                )
            )
        return to_openapi_30(schema)




class PydanticField(serializers.JSONField):
    """Read-only JSON whose schema is a pydantic model's (stored data is passed through as is)."""

    def __init__(self, model, **kwargs):
        self.pydantic_model = model
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)


class PydanticFieldExtension(OpenApiSerializerFieldExtension):
    target_class = PydanticField
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        return auto_schema.resolve_serializer(self.target.pydantic_model, direction).ref


# --- vocabulary -----------------------------------------------------------------------------------


