"""One error format for every 4xx: {"errors": {field: [messages]}, "detail": summary}.

Services raise django `ValidationError` (field -> messages) or `PermissionDenied`; the rules engine
raises `RulesInputError`; pydantic raises its own `ValidationError`. All of them become the same
body here, so a client parses one shape whatever went wrong.
"""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from pydantic import ValidationError as PydanticValidationError
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from placement.common.queue import RunNotAccepted
from placement.rules.errors import RulesInputError

NON_FIELD = "non_field_errors"


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
        return {NON_FIELD: [str(d) for d in detail]}
    return {"detail": [str(detail)]}


def pydantic_field_errors(exc: PydanticValidationError, prefix: str = "") -> dict[str, list[str]]:
    """pydantic errors as dotted field paths (`placement.sources[0].url`); the body itself is
    `non_field_errors`."""
    errors: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False, include_input=False):
        loc = ""
        for part in error.get("loc", ()):
            loc += f"[{part}]" if isinstance(part, int) else (f".{part}" if loc else str(part))
        key = f"{prefix}.{loc}" if prefix and loc else (loc or prefix or NON_FIELD)
        errors.setdefault(key, []).append(str(error.get("msg", "Invalid value.")).removeprefix("Value error, "))
    return errors


def _django_errors(exc: DjangoValidationError) -> dict[str, list[str]]:
    if hasattr(exc, "error_dict"):
        return {(NON_FIELD if k == "__all__" else str(k)): [str(m) for m in v] for k, v in exc.message_dict.items()}
    return {NON_FIELD: [str(m) for m in exc.messages]}


class TooManyRequests(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_detail = "Too many requests."
    default_code = "too_many_requests"


class ServiceUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "Service unavailable; try again later."
    default_code = "service_unavailable"


def atlas_exception_handler(exc, context):
    if isinstance(exc, RunNotAccepted):
        exc = (TooManyRequests if exc.status_code == 429 else ServiceUnavailable)(exc.message)
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(_django_errors(exc))
    elif isinstance(exc, PydanticValidationError):
        exc = exceptions.ValidationError(pydantic_field_errors(exc))
    elif isinstance(exc, RulesInputError):
        exc = exceptions.ValidationError(exc.errors)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = exception_handler(exc, context)
    if response is None:
        return None
    errors = _as_field_errors(response.data)
    if "detail" in errors:
        summary = errors["detail"][0]
    elif response.status_code == status.HTTP_400_BAD_REQUEST or not errors:
        summary = "Invalid input."
    else:
        summary = next(iter(errors.values()))[0]
    response.data = {"detail": summary, "errors": errors}
    return response


def field_errors_response(errors: dict[str, list[str]], code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    return Response({"detail": "Invalid input.", "errors": errors}, status=code)


def error_body(detail: str, status_code: int) -> JsonResponse:
    return JsonResponse({"detail": detail, "errors": {"detail": [detail]}}, status=status_code)


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def bad_request(request, exception):
    """handler400: Django answers these before DRF runs (a body over DATA_UPLOAD_MAX_MEMORY_SIZE is
    refused while the CSRF middleware reads it). Under /api/ they get the one JSON body, a body too
    large as 413."""
    from django.conf import settings
    from django.core.exceptions import RequestDataTooBig
    from django.views import defaults

    if not _is_api(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        return error_body(f"Request body too large: at most {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes.", 413)
    return error_body("Bad request.", 400)


def server_error(request):
    """handler500: under /api/ the one JSON body (the traceback goes to the log, never the client)."""
    from django.views import defaults

    if not _is_api(request):
        return defaults.server_error(request)
    return error_body("Server error. It has been logged; please try again later.", 500)


@csrf_exempt
def api_not_found(request, *args, **kwargs):
    """Unknown paths under /api/ answer in the API's error format, not with an HTML page.

    It also stands in for APPEND_SLASH: a POST to a path without its trailing slash would make
    CommonMiddleware raise (a 500 under DEBUG); here it is a 404 that names the right path."""
    detail = "Not found."
    if not request.path.endswith("/"):
        from django.urls import Resolver404, resolve

        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            detail = f"Not found. Did you mean {request.path}/ (with a trailing slash)?"
    return JsonResponse({"detail": detail, "errors": {"detail": [detail]}}, status=404)


class ErrorSerializer(serializers.Serializer):
    """The body of every 4xx response."""

    detail = serializers.CharField(help_text="One-line summary: the reason, or 'Invalid input.' for field errors.")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Field (dotted path for nested fields; `non_field_errors` for the body as a whole; `detail` "
        "for errors that concern no field) -> messages.",
    )
