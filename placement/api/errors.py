"""One error format for every 4xx: {"errors": {field: [messages]}, "detail": summary}."""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


def _as_field_errors(detail) -> dict[str, list[str]]:
    if isinstance(detail, dict):
        out: dict[str, list[str]] = {}
        for key, value in detail.items():
            if isinstance(value, dict):
                for sub, messages in _as_field_errors(value).items():
                    out[f"{key}.{sub}"] = messages
            elif isinstance(value, list):
                flat = []
                for item in value:
                    if isinstance(item, dict):
                        for sub, messages in _as_field_errors(item).items():
                            out[f"{key}.{sub}"] = messages
                    else:
                        flat.append(str(item))
                if flat:
                    out[str(key)] = flat
            else:
                out[str(key)] = [str(value)]
        return out
    if isinstance(detail, list):
        return {"non_field_errors": [str(d) for d in detail]}
    return {"detail": [str(detail)]}


def atlas_exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(getattr(exc, "message_dict", {"non_field_errors": exc.messages}))
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = exception_handler(exc, context)
    if response is None:
        return None
    errors = _as_field_errors(response.data)
    summary = errors.get("detail", ["Invalid input."])[0] if "detail" in errors else "Invalid input."
    response.data = {"detail": summary, "errors": errors}
    return response


def field_errors_response(errors: dict[str, list[str]], code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    return Response({"detail": "Invalid input.", "errors": errors}, status=code)
