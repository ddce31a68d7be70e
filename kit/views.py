from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET


@require_GET
def healthz(request):
    """Liveness for load balancers: the database answers and pgvector is installed."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    return JsonResponse(
        {
            "status": "ok" if row else "degraded",
            "database": "ok",
            "pgvector": row[0] if row else None,
        },
        status=200 if row else 503,
    )
