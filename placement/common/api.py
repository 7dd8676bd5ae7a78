"""What every API view shares: JSON-only input that cannot crash the server, the error responses in
the schema, pagination limits and the pydantic body parser."""

from __future__ import annotations

import math
from typing import Any

import django_filters
from django import forms
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError
from rest_framework import exceptions
from rest_framework.metadata import SimpleMetadata
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import JSONParser

from placement.common import openapi as pydantic_schema  # noqa: F401  (registers the OpenAPI 3.0 pydantic extension)
from placement.common.errors import NON_FIELD, ErrorSerializer, pydantic_field_errors

MAX_DEPTH = 32
MAX_LIMIT = 200

_ERROR_DESCRIPTIONS = {
    "400": "Invalid input: field -> messages.",
    "401": "Not authenticated (send `Authorization: Token <key>` or log in).",
    "403": "Authenticated but not allowed (role, read-only token, own proposal).",
    "404": "No such object.",
    "409": "Conflict with the current state.",
    "415": "Only application/json bodies are accepted.",
    "429": "Too many requests: a limit on how much one user may have pending.",
    "503": "A service the request needs (the task queue) is unavailable; nothing was done.",
}


class AtlasJSONParser(JSONParser):
    """DRF's JSON parser, but nesting deep enough to exhaust the recursion limit is a 400, not a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - nested too deeply.") from None


class LazyDjangoFilterBackend(DjangoFilterBackend):
    """Builds the filterset (a form, deep-copied fields) only when one of its parameters is given:
    without them it would filter nothing, at a measurable cost on every list request."""

    def filter_queryset(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None and not any(name in request.query_params for name in filterset_class.base_filters):
            return queryset
        return super().filter_queryset(request, queryset, view)


class AtlasPagination(LimitOffsetPagination):
    """limit/offset as in DRF, but a value that is not one whole number is a 400, not ignored
    (a client that typos `limit` should hear about it rather than get 50 rows)."""

    max_limit = MAX_LIMIT

    def _strict(self, request, name: str, default):
        values = request.query_params.getlist(name)
        if not values:
            return default
        try:
            if len(values) > 1 or not values[0].isascii() or not values[0].isdigit():
                raise ValueError
            return int(values[0])  # more than 4300 digits is a ValueError too
        except ValueError:
            raise exceptions.ValidationError({name: ["A whole number >= 0, given once."]}) from None

    def get_limit(self, request):
        limit = self._strict(request, self.limit_query_param, None)
        if limit is None:
            return self.default_limit
        return min(max(limit, 1), self.max_limit) if limit else self.default_limit

    def get_offset(self, request):
        return self._strict(request, self.offset_query_param, 0)

    def get_schema_operation_parameters(self, view):
        # The schema refuses what _strict refuses: negative values.
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 0
        return parameters


class AtlasMetadata(SimpleMetadata):
    """OPTIONS answers for every view. Views whose bodies are pydantic models (compare, compose,
    ...) have no DRF serializer to list fields from; their bodies are described in /api/schema/."""

    def determine_actions(self, request, view):
        if getattr(view, "serializer_class", None) is None:
            return {}
        return super().determine_actions(request, view)


class AtlasAutoSchema(AutoSchema):
    """Every operation documents the error body for the 4xx codes it can answer with, and a
    choice or number filter documents that an empty value means "any" (as the list page's form sends it)."""

    def _get_parameters(self):
        parameters = super()._get_parameters()
        for parameter in parameters:
            schema = parameter.get("schema", {})
            if parameter.get("in") != "query":
                continue
            if isinstance(schema.get("enum"), list) and "" not in schema["enum"]:
                schema["enum"] = [*schema["enum"], ""]
                parameter["description"] = (parameter.get("description", "") + "\n\nEmpty: any.").strip()
            elif schema.get("type") in ("integer", "number") and parameter["name"] not in ("limit", "offset"):
                # A number filter given empty (`?stack=`) filters nothing, as the list forms send it.
                parameter["schema"] = {"oneOf": [schema, {"type": "string", "enum": [""]}]}
                parameter["description"] = (parameter.get("description", "") + "\n\nEmpty: any.").strip()
        return parameters

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        codes = ["400", "401", "403", "404"]
        if self.method in ("POST", "PUT", "PATCH"):
            codes.append("415")
        codes += [str(c) for c in getattr(self.view, "extra_error_codes", ())]
        for code in codes:
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    OpenApiResponse(ErrorSerializer, description=_ERROR_DESCRIPTIONS.get(code, "")), code, direction=direction
                )
        return responses


def _bad(value: Any) -> str | None:
    if isinstance(value, str):
        if "\x00" in value:
            return "Null characters are not allowed."
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "Text must be valid Unicode (no lone surrogates)."
    elif isinstance(value, float) and not math.isfinite(value):
        return "Numbers must be finite."
    return None


def check_input(data: Any, where: str = "") -> None:
    """Reject what the database cannot store (NUL, lone surrogates, inf/NaN) or what is nested
    absurdly deep, before any service sees it. Iterative, so depth cannot hurt us here."""
    stack: list[tuple[Any, str, int]] = [(data, where, 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise exceptions.ValidationError({path or NON_FIELD: [f"Nested deeper than {MAX_DEPTH} levels."]})
        if isinstance(value, dict):
            for key, item in value.items():
                sub = f"{path}.{key}" if path else str(key)
                problem = _bad(key) if isinstance(key, str) else None
                if problem:
                    raise exceptions.ValidationError({path or NON_FIELD: [f"Key: {problem}"]})
                stack.append((item, sub, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))
        else:
            problem = _bad(value)
            if problem:
                raise exceptions.ValidationError({path or NON_FIELD: [problem]})


class AtlasViewMixin:
    """Put first in the bases of every API view."""

    parser_classes = [AtlasJSONParser]
    metadata_class = AtlasMetadata
    pagination_class = AtlasPagination
    schema = AtlasAutoSchema()
    read_only_post = False
    extra_error_codes: tuple[int, ...] = ()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        for key, values in request.query_params.lists():
            for value in [key, *values]:
                problem = _bad(value)
                if problem:
                    raise exceptions.ValidationError({key if value is not key else NON_FIELD: [problem]})
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            check_input(request.data)


def parse_body(model: type[BaseModel], data: Any, *, context: dict | None = None, prefix: str = "") -> Any:
    """Validate a request body with its pydantic model; errors become 400 field errors. A boolean
    field takes a JSON boolean only (pydantic's lax mode would read "yes" or 1 as true)."""
    loose = loose_booleans(model, data, prefix)
    if loose:
        raise exceptions.ValidationError({loc: ["Expected a JSON boolean (true or false)."] for loc in loose})
    try:
        return model.model_validate(data, context=context)
    except PydanticValidationError as exc:
        raise exceptions.ValidationError(pydantic_field_errors(exc, prefix)) from None


def _models_in(annotation) -> tuple[bool, list[type[BaseModel]], bool]:
    """(is a boolean, the models it may hold, holds a list of them) for a field's annotation."""
    import types
    import typing

    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if annotation is bool:
        return True, [], False
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return False, [annotation], False
    if origin is typing.Annotated:
        return _models_in(args[0])
    if origin in (typing.Union, types.UnionType):
        parts = [_models_in(a) for a in args]
        return (all(p[0] for p in parts), [m for p in parts for m in p[1]], any(p[2] for p in parts))
    if origin in (list, tuple) and args:
        is_bool, models, _ = _models_in(args[0])
        return False, models, True
    return False, [], False


def loose_booleans(model: type[BaseModel], data: Any, prefix: str = "") -> list[str]:
    """Paths (as the API names fields) of boolean fields given something other than true/false."""
    if not isinstance(data, dict):
        return []
    found = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key not in data:
            continue
        value, loc = data[key], f"{prefix}{key}"
        is_bool, models, many = _models_in(field.annotation)
        if is_bool and value is not None and not isinstance(value, bool):
            found.append(loc)
        elif len(models) == 1:
            items = enumerate(value) if many and isinstance(value, list) else [(None, value)] if not many else []
            for index, item in items:
                found += loose_booleans(models[0], item, f"{loc}.{index}." if index is not None else f"{loc}.")
    return found




class IdFilter(django_filters.NumberFilter):
    """A row id: a whole number (NumberFilter alone takes 53.62 and finds nothing)."""

    field_class = forms.IntegerField


