"""Kit's Celery application: configuration from Django settings (CELERY_ namespace)."""

import os
from typing import Any

from celery import Celery
from celery.signals import setup_logging

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kit.settings")

app = Celery("kit")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@setup_logging.connect
def _logging_is_djangos(**kwargs: Any) -> None:
    """A worker logs as the web does: Django's ``LOGGING`` (JSON lines naming what they are
    about, kit/logs.py), configured when Django starts in the worker. With a receiver here
    Celery adds no handler of its own (``--logfile`` then has no effect: a worker writes to
    its standard error, where its supervisor collects it)."""
