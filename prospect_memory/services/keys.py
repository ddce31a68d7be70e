"""Key rotation: re-encrypting every note under the newest key."""

from __future__ import annotations

from django.db import transaction

from prospect_memory.core.crypto import keyring
from prospect_memory.models import Note


def notes_reencrypt(*, batch_size: int = 500) -> tuple[int, int]:
    """Re-encrypt every note title and body not yet under the newest key.

    Runs in batches of short transactions with row locks, so it can run while Kit serves
    traffic. Returns ``(notes seen, notes re-encrypted)``. Afterwards older keys can be
    removed from the configuration.
    """
    ring = keyring()
    sealed = (Note.title, Note.body)
    seen = changed = 0
    last_id = None
    while True:
        with transaction.atomic():
            rows = Note.objects.select_for_update().order_by("id")
            if last_id is not None:
                rows = rows.filter(id__gt=last_id)
            batch = list(rows[:batch_size])
            if not batch:
                break
            for note in batch:
                seen += 1
                if all(field.is_current(note, ring) for field in sealed):
                    continue
                note.title = note.title
                note.body = note.body
                note.save(update_fields=["title_ciphertext", "body_ciphertext"])
                changed += 1
            last_id = batch[-1].id
    return seen, changed
