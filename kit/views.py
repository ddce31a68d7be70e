from pathlib import Path

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

_FAVICON = (Path(__file__).resolve().parent / "static" / "kit" / "favicon.ico").read_bytes()


@require_safe
@cache_control(public=True, max_age=7 * 24 * 3600)
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers ask for on every page that names no icon (the
    admin's, the API docs'); Kit's own pages link the same file from static."""
    return HttpResponse(_FAVICON, content_type="image/x-icon")


#: Where the clients are programs that read Kit's error envelope, not people.
_PROGRAM_PATHS = ("/api/", "/mcp", "/o/")


def server_error(request: HttpRequest) -> HttpResponse:
    """An unexpected failure (``handler500``): in Kit's error envelope for API, MCP and
    OAuth clients, Django's page for people. The failure itself is logged by Django."""
    if request.path.startswith(_PROGRAM_PATHS):
        return JsonResponse(
            {
                "error": {
                    "code": "server_error",
                    "message": "Kit failed to answer this request and logged why. Retry "
                    "later; if it keeps failing, tell the operator.",
                    "details": {},
                }
            },
            status=500,
        )
    return defaults.server_error(request)
