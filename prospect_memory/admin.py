"""Where Django's admin autodiscovery looks: the notes' moderation pages."""

from prospect_memory.notes import admin  # noqa: F401  (registers the model admins)
