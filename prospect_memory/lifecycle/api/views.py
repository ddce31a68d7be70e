"""The data lifecycle over REST: an account's export, and erasing a company."""

from __future__ import annotations

from collections.abc import Iterator

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema

from outreach import scopes
from outreach.access import require_module_admin
from outreach.api import OperationApi, serve
from outreach.errors import InsufficientScope
from outreach.schema import ERROR_ENVELOPE
from pgreplicas import routing as replicas
from prospect_memory.lifecycle import operations
from prospect_memory.lifecycle.export import export_filename, export_lines

EXPORT_TYPE = "application/x-ndjson"


class ExportApi(OperationApi):
    """The account's memories as one NDJSON file (SPEC 16), for a module admin."""

    @extend_schema(
        operation_id="export",
        summary="Export the account's memories",
        description=(
            "The account's notes (active and archived), compactions and business memory "
            "(the shared layer in every status, with its kept versions; the caller's own "
            "layer, never another member's), decrypted, with their provenance, as NDJSON: a "
            "header line, one record a line, and a manifest with counts and a SHA-256 "
            "checksum of the lines before it. Events and embeddings are not included. "
            "Streamed; import it with `manage.py import_memory`. Needs outreach_read and a "
            "module admin."
        ),
        responses={
            (200, EXPORT_TYPE): OpenApiResponse(
                OpenApiTypes.BINARY, description="The export (NDJSON), streamed."
            ),
            401: OpenApiResponse(
                ERROR_ENVELOPE, description="Missing, invalid or expired credentials"
            ),
            403: OpenApiResponse(
                ERROR_ENVELOPE,
                description="Not allowed: insufficient_scope, addon_required, "
                "subscription_inactive, not_module_admin",
            ),
        },
    )
    def get(self, request):
        actor, granted = self.caller(request)
        if scopes.READ not in granted:
            raise InsufficientScope(
                f"export needs the {scopes.READ} scope, which this token lacks. Authorize "
                f"again and grant {scopes.READ}.",
                details={"required_scope": scopes.READ},
            )
        require_module_admin(actor)

        def lines() -> Iterator[bytes]:
            return export_lines(actor.account, member=actor.member)

        # A member's read: a replica that has replayed their writes may serve it.
        member = actor.member
        body = replicas.streamed(actor.account.pk, member.pk, lines) if member else lines()
        response = StreamingHttpResponse(body, content_type=EXPORT_TYPE)
        response["Content-Disposition"] = f'attachment; filename="{export_filename(actor.account)}"'
        response["Cache-Control"] = "no-store"
        return response


class CompanyErasureApi(OperationApi):
    post = serve(operations.ERASE_COMPANY, operation_id="erasures_company")
