"""Encryption at rest: authenticated, bound to account and row, with key rotation."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from prospect_memory.core.crypto import (
    DecryptionError,
    KeyConfigurationError,
    Keyring,
    binding,
    generate_key,
)
from prospect_memory.notes.models import Dossier, Note


def _ctx(account=1, row="n1", field="body"):
    return binding(table="prospect_memory.note", account_id=account, row_id=row, field=field)


def test_round_trip_and_fresh_nonce_each_time():
    ring = Keyring.from_strings([generate_key()])
    a = ring.encrypt("Acme raised a Series B", context=_ctx())
    b = ring.encrypt("Acme raised a Series B", context=_ctx())
    assert a != b
    assert b"Series" not in a
    assert ring.decrypt(a, context=_ctx()) == "Acme raised a Series B"


@pytest.mark.parametrize(
    "other",
    [_ctx(row="n2"), _ctx(account=2), _ctx(field="title")],
    ids=["other row", "other account", "other field"],
)
def test_ciphertext_bound_to_its_context(other):
    ring = Keyring.from_strings([generate_key()])
    token = ring.encrypt("secret", context=_ctx())
    with pytest.raises(DecryptionError, match="does not belong"):
        ring.decrypt(token, context=other)


def test_tampered_ciphertext_fails():
    ring = Keyring.from_strings([generate_key()])
    token = bytearray(ring.encrypt("secret", context=_ctx()))
    token[-1] ^= 1
    with pytest.raises(DecryptionError):
        ring.decrypt(bytes(token), context=_ctx())
    with pytest.raises(DecryptionError, match="malformed"):
        ring.decrypt(b"\x01abc", context=_ctx())


def test_several_keys_first_encrypts_all_decrypt():
    old, new = generate_key(), generate_key()
    token = Keyring.from_strings([old]).encrypt("hello", context=_ctx())
    rotated = Keyring.from_strings([new, old])
    assert rotated.decrypt(token, context=_ctx()) == "hello"
    assert not rotated.is_current(token)
    assert rotated.is_current(rotated.encrypt("hello", context=_ctx()))
    with pytest.raises(DecryptionError, match="no longer configured"):
        Keyring.from_strings([new]).decrypt(token, context=_ctx())


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ([], "no encryption key"),
        (["not base64!"], "key #1"),
        (["c2hvcnQ="], "key #1"),
        ([generate_key(), "AAAA"], "key #2"),
    ],
)
def test_bad_key_configuration_is_refused(keys, message):
    with pytest.raises(KeyConfigurationError, match=message):
        Keyring.from_strings(keys)


def test_duplicate_key_is_refused():
    key = generate_key()
    with pytest.raises(KeyConfigurationError, match="listed twice"):
        Keyring.from_strings([key, key])


# --- stored notes -----------------------------------------------------------------------


def _note(account, domain, title, body):
    dossier, _ = Dossier.objects.get_or_create(account=account, domain=domain)
    note = Note(account=account, dossier=dossier, observed_at="2026-11-01")
    note.title, note.body = title, body
    note.body_bytes = len(note.body.encode())
    note.save()
    return note


def _raw(note_id):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT title_ciphertext, body_ciphertext FROM prospect_memory_note WHERE id = %s",
            [note_id],
        )
        return cursor.fetchone()


@pytest.mark.django_db
def test_stored_note_holds_no_plaintext(account):
    note = _note(account, "acme.dev", "Funding", "Acme raised 40M in a Series B")
    title, body = _raw(note.id)
    assert b"Series B" not in bytes(body)
    assert b"Funding" not in bytes(title)
    assert Note.objects.get(id=note.id).body == "Acme raised 40M in a Series B"


@pytest.mark.django_db
def test_ciphertext_copied_row_to_row_or_account_to_account_fails(account, other_account):
    mine = _note(account, "acme.dev", "Mine", "Acme is hiring 12 engineers")
    sibling = _note(account, "acme.dev", "Sibling", "Acme opened a Berlin office")
    theirs = _note(other_account, "acme.dev", "Theirs", "Another account's research")
    body = bytes(_raw(mine.id)[1])
    for target in (sibling, theirs):
        Note.objects.filter(id=target.id).update(body_ciphertext=body)
        with pytest.raises(DecryptionError):
            Note.objects.get(id=target.id).body  # noqa: B018
    # The original still reads.
    assert Note.objects.get(id=mine.id).body == "Acme is hiring 12 engineers"


@pytest.mark.django_db
def test_rotation_command_reencrypts_then_old_key_can_go(account, settings, capsys):
    old, new = generate_key(), generate_key()
    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "ENCRYPTION_KEYS": [old]}
    notes = [_note(account, "acme.dev", f"t{i}", f"body {i}") for i in range(5)]
    untitled = _note(account, "acme.dev", "", "no title")

    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "ENCRYPTION_KEYS": [new, old]}
    call_command("reencrypt", "--batch-size", "2")
    assert "Re-encrypted 6 of 6 notes" in capsys.readouterr().out
    call_command("reencrypt")
    assert "Re-encrypted 0 of 6 notes" in capsys.readouterr().out

    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "ENCRYPTION_KEYS": [new]}
    for i, note in enumerate(notes):
        fresh = Note.objects.get(id=note.id)
        assert (fresh.title, fresh.body) == (f"t{i}", f"body {i}")
    assert Note.objects.get(id=untitled.id).title == ""


@pytest.mark.django_db
def test_rotation_command_explains_a_missing_key(account, settings):
    old, new = generate_key(), generate_key()
    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "ENCRYPTION_KEYS": [old]}
    _note(account, "acme.dev", "t", "b")
    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "ENCRYPTION_KEYS": [new]}
    with pytest.raises(CommandError, match="keep every key"):
        call_command("reencrypt")
    with pytest.raises(CommandError, match="at least 1"):
        call_command("reencrypt", "--batch-size", "0")


@pytest.mark.django_db
def test_a_sealed_field_refuses_a_row_without_its_key_or_account(account):
    note = Note(account=account, observed_at="2026-11-01")
    note.pk = None
    with pytest.raises(ValueError, match="primary key and account"):
        note.body = "text"
    orphan = Note(observed_at="2026-11-01")
    with pytest.raises(ValueError, match="primary key and account"):
        orphan.body = "text"
