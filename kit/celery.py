"""Kit's Celery application: configuration from Django settings (CELERY_ namespace)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kit.settings")

app = Celery("kit")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
