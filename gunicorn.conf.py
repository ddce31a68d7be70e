"""gunicorn settings for Kit, read from the working directory (``gunicorn kit.wsgi``).

GET operations take their arguments in the query string. gunicorn's default request line
(4 KB) refuses a search query of 1,000 characters once it is percent-encoded beyond
ASCII; ``REQUEST_LINE_MAX_BYTES`` (8,190, gunicorn's largest fixed limit) carries 1,000
characters of Latin text or about 680 of CJK. A longer line is answered 414, which the
OpenAPI document lists for those operations.

Each worker counts its own requests for ``GET /metrics``; prometheus-client's multiprocess
mode keeps each worker's figures in a file of ``PROMETHEUS_MULTIPROC_DIR`` (a new folder
per start unless the operator names one), and any worker's scrape adds them all up. A
worker that exits leaves its counts in (they are counts of what happened), and a new start
begins at zero.

Each worker freezes what loading the application made (``gc.freeze``): those objects live
as long as the worker, and out of the collector's reach they stop making full collections
cost up to a hundred milliseconds (a comparison page's p99 went from 121 to 30 ms in
``bench/integrity_bench.py``). Then it sets its collector's thresholds
(``KIT_WEB_GC_THRESHOLDS``, Python's by default: higher ones trade memory for CPU).

The model once per machine (``preload_app``, on unless ``KIT_GUNICORN_PRELOAD=false``): the
master loads the application, checks the embedding model's files against their hashes and
loads its tokenizer and weights before it forks the workers, which share those pages; each
worker makes only its own onnxruntime session (a session's threads do not survive a fork,
so the master never makes one), and it reads the weights where the master put them. With
the default model, 8 workers keep 744 MiB (PSS) where, each loading its own copy, they kept
2,032 (docs/operations.md, "The model once per machine"; ``bench/model_memory.py``). New
code then needs the master restarted, not ``kill -HUP``: a reload forks new workers from
the code the master loaded.
"""

import gc
import os
import tempfile
from pathlib import Path

from kit.http import REQUEST_LINE_MAX_BYTES

# Set before any worker imports prometheus-client: the library picks its storage then.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="kit-metrics-")
_METRICS = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])

limit_request_line = REQUEST_LINE_MAX_BYTES

preload_app = os.environ.get("KIT_GUNICORN_PRELOAD", "true").strip().lower() not in {
    "0",
    "false",
    "no",
    "off",
}

# Access lines as JSON (kit/logs.py), naming the request's id and leaving the query string
# out (a search's words are not logged); gunicorn's own lines as JSON too. Not passed on to
# Django's root logger, which would write each line twice.
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(B)s %(M)sms request_id=%({x-request-id}o)s'
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "kit.logs.JsonFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "stream": "ext://sys.stdout",
        },
        "error_console": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "stream": "ext://sys.stderr",
        },
    },
    "loggers": {
        "gunicorn.error": {"level": "INFO", "handlers": ["error_console"], "propagate": False},
        "gunicorn.access": {"level": "INFO", "handlers": ["console"], "propagate": False},
    },
}


def on_starting(server):
    # A start counts from zero: a previous run's files would be added to this one's (and
    # with preload_app, those the master's own loading of the application made: the
    # master serves nothing, and each worker counts in files of its own).
    _METRICS.mkdir(parents=True, exist_ok=True)
    for stale in _METRICS.glob("*.db"):
        stale.unlink()
    if server.cfg.preload_app:
        _load_for_the_workers(server)


def _load_for_the_workers(server):
    """In the master, the application loaded (``preload_app``), before the first fork:
    what every worker would load the same, loaded once for all of them to share."""
    from django.db import connections

    from prospect_memory.core import integrity
    from prospect_memory.core.embeddings import get_provider

    integrity.warm()
    # As in each worker without preload_app (below): options the provider cannot be built
    # from, or a local model's file that is missing or not the one its manifest pins, stop
    # the server before it serves, naming the file and the hash expected.
    try:
        provider = get_provider()
        provider.verify()
    except Exception as error:  # logged as the reason, and gunicorn exits with status 3
        server.halt(reason=f"the embedding provider cannot run: {error}", exit_status=3)
    try:
        # The checked files, the tokenizer and the weights; no onnxruntime session.
        provider.preload()
    except Exception as error:  # each worker tries again, and serves without it if it must
        server.log.error("the embedding provider could not be loaded: %s", error)
    connections.close_all()  # none should be open: a forked one would be shared
    # Out of the collector's reach in the master too, so that no collection in a worker
    # writes to (and so copies) the pages of what the master loaded.
    gc.freeze()


def post_fork(server, worker):
    # A worker's counters open their files as it loads the application: the folder must be
    # there, even if something removed it while the server ran.
    _METRICS.mkdir(parents=True, exist_ok=True)


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker):
    # Build what the first write would (the integrity check's character class and patterns,
    # 0.2 s; the local embedding model, 0.6 s; with preload_app only its onnxruntime
    # session is left to make here), then freeze it with the rest.
    from prospect_memory.core import integrity
    from prospect_memory.core.embeddings import get_provider

    integrity.warm()
    # Options the provider cannot be built from (a model name mistyped) stop the server too,
    # as the system check says (prospect_memory.E004).
    provider = get_provider()
    # A local model's file that is missing or not the one its manifest pins (another, or
    # cut short) stops the server before it serves, naming the file and the hash expected:
    # Kit never runs another file, and a server that quietly left every note unembedded
    # would hide it (the worker's error halts gunicorn: "Worker failed to boot").
    provider.verify()
    try:
        provider.warm()
    except Exception as error:  # a model that is pinned but cannot load (onnxruntime's own
        # errors): serve pages and store notes pending; the system check says what is wrong.
        worker.log.error("the embedding provider could not be loaded: %s", error)
    gc.freeze()
    from django.conf import settings

    gc.set_threshold(*settings.KIT_WEB_GC_THRESHOLDS)
