"""Prospect memory over REST: the same operations and payloads as the MCP tools.

Inputs are checked against the same JSON Schemas as the MCP tools (unknown fields are
refused), then the service applies every rule. Successful answers are ``{"data": ...}``.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from outreach.access import MEMBER, MODULE_ADMIN
from outreach.api import KitApiView
from outreach.errors import ValidationFailed
from outreach.mcp.registry import READ, WRITE
from prospect_memory import schemas
from prospect_memory.mcp_tools import COMPACT, SAVE
from prospect_memory.selectors import NoteView, dossier_recall, notes_list, recall_data
from prospect_memory.services import (
    compaction_restore,
    dossier_compact,
    note_delete,
    note_save,
    recall_record,
)

ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object"},
            },
            "required": ["code", "message", "details"],
        }
    },
    "required": ["error"],
}


def envelope(schema: dict) -> dict:
    return {
        "type": "object",
        "properties": {"data": schema},
        "required": ["data"],
        "additionalProperties": False,
    }


def errors(*statuses: int) -> dict:
    described = {
        400: "Invalid input (validation_error, invalid_domain)",
        401: "Missing, invalid or expired credentials (unauthenticated)",
        403: "insufficient_scope, not_module_admin, addon_required or subscription_inactive",
        404: "not_found",
        409: "note_count_mismatch or domain_note_limit_reached",
        413: "body_too_large",
        429: "daily_limit_reached or rate_limited (with Retry-After)",
    }
    return {s: OpenApiResponse(ERROR, description=described[s]) for s in statuses}


def _checked(tool, data) -> dict:
    """The request body, checked against the tool's input schema."""
    if not isinstance(data, dict):
        raise ValidationFailed(
            "The request body must be a JSON object.", details={"fields": {"(body)": ["object"]}}
        )
    problems = tool.argument_errors(data)
    if problems:
        field, messages = next(iter(problems.items()))
        raise ValidationFailed(f"{field}: {messages[0]}.", details={"fields": problems})
    return data


class DossierRecallApi(KitApiView):
    required_scope = READ

    @extend_schema(
        operation_id="recall",
        summary="Recall what the account knows about a company",
        parameters=[
            OpenApiParameter("domain", str, required=True, description="Email, URL or domain."),
            OpenApiParameter("query", str, description="Ranks notes when the dossier is large."),
        ],
        responses={200: envelope(schemas.RECALL), **errors(400, 401, 403)},
    )
    def get(self, request):
        recall = dossier_recall(
            actor=self.actor,
            domain=request.query_params.get("domain", ""),
            query=request.query_params.get("query"),
        )
        recall_record(actor=self.actor, recall=recall)
        return Response({"data": recall_data(recall)})


class NotesApi(KitApiView):
    """The collection of notes: list them (read) or save one (write)."""

    page_size = 20
    max_page_size = 100
    max_page = 1_000_000

    def initial(self, request, *args, **kwargs):
        self.required_scope = WRITE if request.method == "POST" else READ
        self.required_role = MODULE_ADMIN if request.method == "POST" else MEMBER
        super().initial(request, *args, **kwargs)

    @extend_schema(
        operation_id="notes_list",
        summary="List active notes, newest observed first",
        parameters=[
            OpenApiParameter(
                "domain", str, description="Only this company (email, URL or domain)."
            ),
            OpenApiParameter(
                "stale", bool, description="true: only stale notes; false: only fresh."
            ),
            OpenApiParameter("page", int),
            OpenApiParameter("page_size", int, description="1-100, default 20."),
        ],
        responses={
            200: envelope(
                {
                    "type": "object",
                    "properties": {
                        "count": {"type": "integer"},
                        "page": {"type": "integer"},
                        "pages": {"type": "integer"},
                        "page_size": {"type": "integer"},
                        "notes": {
                            "type": "array",
                            "items": {
                                **schemas.NOTE,
                                "properties": {
                                    **schemas.NOTE["properties"],
                                    "domain": {"type": "string"},
                                },
                                "required": [*schemas.NOTE["required"], "domain"],
                            },
                        },
                    },
                    "required": ["count", "page", "pages", "page_size", "notes"],
                }
            ),
            **errors(400, 401, 403),
        },
    )
    def get(self, request):
        params = request.query_params
        stale = {"true": True, "false": False, None: None}.get(params.get("stale"), "bad")
        page, size = _positive(params, "page", 1), _positive(params, "page_size", self.page_size)
        if (
            stale == "bad"
            or page is None
            or size is None
            or size > self.max_page_size
            or page > self.max_page
        ):
            raise ValidationFailed(
                f"Use stale=true|false, page 1-{self.max_page:,} and page_size 1-100.",
                details={"fields": {"query": ["stale, page or page_size is invalid"]}},
            )
        rows = notes_list(actor=self.actor, domain=params.get("domain"), stale=stale)
        count = rows.count()
        notes = list(rows[(page - 1) * size : page * size]) if (page - 1) * size < count else []
        return Response(
            {
                "data": {
                    "count": count,
                    "page": page,
                    "pages": max(-(-count // size), 1),
                    "page_size": size,
                    "notes": [
                        {
                            **NoteView.of(n, domain=n.dossier.domain).as_data(),
                            "domain": n.dossier.domain,
                        }
                        for n in notes
                    ],
                }
            }
        )

    @extend_schema(
        operation_id="notes_save",
        summary="Save one research finding",
        request={"application/json": schemas.SAVE_INPUT},
        responses={201: envelope(schemas.SAVE), **errors(400, 401, 403, 409, 413, 429)},
    )
    def post(self, request):
        args = _checked(SAVE, request.data)
        result = note_save(
            actor=self.actor,
            domain=args["domain"],
            body=args["body"],
            title=args.get("title"),
            source_urls=args["source_urls"],
            observed_at=args["observed_at"],
        )
        return Response({"data": result.as_data()}, status=status.HTTP_201_CREATED)


def _positive(params, name: str, default: int) -> int | None:
    value = params.get(name)
    if value is None:
        return default
    if not value.isdigit() or len(value) > 9:
        return None
    return int(value) if int(value) >= 1 else None


class NoteDeleteApi(KitApiView):
    required_scope = WRITE
    required_role = MODULE_ADMIN

    @extend_schema(
        operation_id="notes_delete",
        summary="Delete a note from the dossier and every future recall",
        responses={200: envelope(schemas.DELETE), **errors(400, 401, 403, 404, 429)},
    )
    def delete(self, request, note_id: str):
        return Response({"data": note_delete(actor=self.actor, note_id=note_id).as_data()})


class DossierCompactApi(KitApiView):
    required_scope = WRITE
    required_role = MODULE_ADMIN

    @extend_schema(
        operation_id="compactions_create",
        summary="Merge a company's notes into one (only when a person asks)",
        request={"application/json": schemas.COMPACT_INPUT},
        responses={201: envelope(schemas.COMPACT), **errors(400, 401, 403, 404, 409, 413, 429)},
    )
    def post(self, request):
        args = _checked(COMPACT, request.data)
        result = dossier_compact(
            actor=self.actor,
            domain=args["domain"],
            expected_note_count=args["expected_note_count"],
            body=args["body"],
            title=args.get("title"),
            note_ids=args.get("note_ids"),
        )
        return Response({"data": result.as_data()}, status=status.HTTP_201_CREATED)


class CompactionRestoreApi(KitApiView):
    required_scope = WRITE
    required_role = MODULE_ADMIN

    @extend_schema(
        operation_id="compactions_restore",
        summary="Undo a compaction",
        request=None,
        responses={200: envelope(schemas.RESTORE), **errors(400, 401, 403, 404, 409, 429)},
    )
    def post(self, request, compaction_id: str):
        result = compaction_restore(actor=self.actor, compaction_id=compaction_id)
        return Response({"data": result.as_data()})
