"""Where Celery's autodiscovery looks: the notes' tasks (their names stay
``prospect_memory.tasks.*``, so tasks queued before they moved still run)."""

from prospect_memory.notes import tasks  # noqa: F401  (registers the tasks)
