"""The model once per machine, through a real gunicorn (``gunicorn.conf.py``): the master
loads the application and the embedding model's files, tokenizer and weights before it
forks (``preload_app``); each worker makes its own onnxruntime session over them and embeds
as a process on its own would. ``KIT_GUNICORN_PRELOAD=false`` gives each worker its own copy
of everything, as before. The memory each way keeps: ``bench/model_memory.py``."""

from __future__ import annotations

import concurrent.futures
import json
import re
import urllib.request
from pathlib import Path

import numpy
import pytest

from prospect_memory.core.embeddings import SemanticProvider
from prospect_memory.notes.rules import embedding_input
from tests import factories
from tests.helpers import token as issue_token
from tests.live import LiveServer

pytestmark = [pytest.mark.live, pytest.mark.slow]

#: Each access line names the worker that answered (gunicorn's ``%(p)s``).
BY_WORKER = ("--access-logfile", "-", "--access-logformat", "pid=%(p)s %(m)s %(U)s %(s)s")
SEMANTIC = {
    "PROSPECT_MEMORY_EMBEDDING_PROVIDER": "semantic",
    "PROSPECT_MEMORY_EMBEDDING_OPTIONS": "{}",
}


def save(server: LiveServer, bearer: str, domain: str, body: str) -> None:
    request = urllib.request.Request(  # noqa: S310  (the test's own server on loopback)
        f"{server.url}/api/v1/notes",
        data=json.dumps(
            {
                "domain": domain,
                "title": "Hiring",
                "body": body,
                "source_urls": [f"https://{domain}/jobs"],
                "observed_at": "2026-11-29",
            }
        ).encode(),
        headers={"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310
        assert answer.status == 201


def workers_that_saved(log: Path) -> set[str]:
    return set(re.findall(r"pid=<?(\d+)>? POST /api/v1/notes 201", log.read_text()))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("preload", ["true", "false"])
def test_every_worker_embeds_as_a_process_on_its_own_would(preload):
    """Two workers, each made to save (two clients at once, until both have): every note's
    vector is the one this process computes for its text."""
    from django.db import connection

    from kit.db import database_url
    from prospect_memory.notes.models import Note

    server = LiveServer(
        database_url(connection.settings_dict),
        workers=2,
        extra_env={
            **SEMANTIC,
            "KIT_GUNICORN_PRELOAD": preload,
            "KIT_WRITES_PER_MINUTE_PER_CLIENT": "0",
        },
        gunicorn_args=BY_WORKER,
    )
    account = factories.account("preloaded")
    bearers = [
        issue_token(
            factories.member(account, f"agent{k}@preloaded.example", admin=True),
            base_url=server.url,
        )
        for k in range(2)
    ]
    bodies = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as clients:
            for turn in range(20):
                domains = [f"n{turn}-{k}-preloaded.com" for k in range(2)]
                for domain in domains:
                    bodies[domain] = f"{domain.split('.')[0]} is hiring {turn} engineers in Lyon."
                list(
                    clients.map(
                        save, [server, server], bearers, domains, [bodies[d] for d in domains]
                    )
                )
                if len(workers_that_saved(server.log)) == 2:
                    break
    finally:
        server.stop()
    log = server.log.read_text()
    assert len(workers_that_saved(server.log)) == 2, log[-3000:]
    assert "could not be loaded" not in log
    provider = SemanticProvider()
    notes = Note.objects.filter(account=account).select_related("dossier")
    assert len(notes) == len(bodies)
    for note in notes:
        assert note.embedding_model == provider.model
        expected = provider.embed_documents(
            [embedding_input("Hiring", bodies[note.dossier.domain])]
        )
        assert numpy.allclose(note.embedding, expected[0], atol=1e-6), note.dossier.domain
