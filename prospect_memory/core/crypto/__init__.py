"""Encryption at rest for both memories (note titles and bodies, business memory values).

AES-256-GCM (authenticated) from `cryptography`. Several keys may be configured at once:
the first encrypts, every one decrypts, so keys rotate without downtime
(``manage.py reencrypt`` moves every row to the newest key, after which older keys
can be dropped). Each ciphertext is bound through the GCM associated data to the account,
the row and the field it belongs to, so a ciphertext copied to another row, field or
account fails to decrypt instead of showing the wrong tenant's text.

A model declares an encrypted attribute with :class:`SealedField`; code that reads rows
without model instances (the recall hot path) uses :func:`unseal` with the same binding.

Token layout: ``version (1 byte) | key id (4 bytes) | nonce (12 bytes) | ciphertext+tag``.
The key id is the first four bytes of SHA-256 of the key, so decryption picks the right key
without trying each one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, overload

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from outreach.characters import readable
from prospect_memory.core.conf import core_settings

if TYPE_CHECKING:
    from django.db import models

FORMAT_VERSION = 1
KEY_BYTES = 32
KEY_ID_BYTES = 4
NONCE_BYTES = 12
_KEY_ID_END = 1 + KEY_ID_BYTES
_HEADER_BYTES = _KEY_ID_END + NONCE_BYTES


class KeyConfigurationError(ValueError):
    """The configured encryption keys cannot be used."""


class DecryptionError(Exception):
    """A ciphertext is corrupt, bound to another row or account, or its key is gone."""


def generate_key() -> str:
    """A new random 256-bit key in the form the settings expect (URL-safe base64)."""
    return base64.urlsafe_b64encode(os.urandom(KEY_BYTES)).decode("ascii")


def binding(*, table: str, account_id: object, row_id: object, field: str) -> bytes:
    """The associated data that ties a ciphertext to one field of one row of one account."""
    return row_binding(table=table, account_id=account_id, row_id=row_id) + field.encode()


def row_binding(*, table: str, account_id: object, row_id: object) -> bytes:
    """What the binding of every field of one row starts with (``binding`` adds the field's
    name): a reader of many sealed fields per row makes it once per row."""
    return f"kit/{table}/{account_id}/{row_id}/".encode()


def _decode_key(position: int, text: str) -> bytes:
    try:
        raw = base64.urlsafe_b64decode(text.strip().encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raw = b""
    if len(raw) != KEY_BYTES:
        raise KeyConfigurationError(
            f"encryption key #{position + 1} is not {KEY_BYTES} bytes of URL-safe base64; "
            "generate one with `python manage.py generate_encryption_key`"
        )
    return raw


@dataclass(frozen=True)
class Keyring:
    """The configured keys, newest (encrypting) first."""

    keys: tuple[tuple[bytes, AESGCM], ...]
    #: Each key by its id: a ciphertext names the one that opens it.
    by_id: dict[bytes, AESGCM] = dataclass_field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", dict(self.keys))

    @classmethod
    def from_strings(cls, texts: list[str] | tuple[str, ...]) -> Keyring:
        texts = [t for t in texts if t and t.strip()]
        if not texts:
            raise KeyConfigurationError(
                "no encryption key is configured; set PROSPECT_MEMORY_ENCRYPTION_KEYS"
            )
        keys: list[tuple[bytes, AESGCM]] = []
        seen: set[bytes] = set()
        for position, text in enumerate(texts):
            raw = _decode_key(position, text)
            key_id = hashlib.sha256(raw).digest()[:KEY_ID_BYTES]
            if key_id in seen:
                raise KeyConfigurationError(f"encryption key #{position + 1} is listed twice")
            seen.add(key_id)
            keys.append((key_id, AESGCM(raw)))
        return cls(tuple(keys))

    @property
    def primary_key_id(self) -> bytes:
        return self.keys[0][0]

    def encrypt(self, plaintext: str, *, context: bytes) -> bytes:
        key_id, aead = self.keys[0]
        header = bytes([FORMAT_VERSION]) + key_id
        nonce = os.urandom(NONCE_BYTES)
        return header + nonce + aead.encrypt(nonce, plaintext.encode("utf-8"), header + context)

    def decrypt(self, token: bytes, *, context: bytes) -> str:
        if type(token) is not bytes:  # a memoryview or bytearray from a driver
            token = bytes(token)
        if len(token) < _HEADER_BYTES + 16 or token[0] != FORMAT_VERSION:
            raise DecryptionError("ciphertext is malformed")
        aead = self.by_id.get(token[1:_KEY_ID_END])
        if aead is None:
            raise DecryptionError("ciphertext was made with a key that is no longer configured")
        try:
            plaintext = aead.decrypt(
                token[_KEY_ID_END:_HEADER_BYTES],  # the nonce
                token[_HEADER_BYTES:],
                token[:_KEY_ID_END] + context,  # the header and the binding
            )
        except InvalidTag:
            raise DecryptionError(
                "ciphertext does not belong to this row or account, or was altered"
            ) from None
        return plaintext.decode("utf-8")

    def is_current(self, token: bytes) -> bool:
        """True when ``token`` is already encrypted under the newest key."""
        return bytes(token[1 : 1 + KEY_ID_BYTES]) == self.primary_key_id


@lru_cache(maxsize=8)
def keyring_for(keys: tuple[str, ...]) -> Keyring:
    return Keyring.from_strings(keys)


def keyring() -> Keyring:
    """The keyring of the current settings."""
    return keyring_for(tuple(core_settings.ENCRYPTION_KEYS))


# --- sealed fields ------------------------------------------------------------------------


def seal(
    plaintext: str,
    *,
    table: str,
    account_id: object,
    row_id: object,
    field: str,
    ring: Keyring | None = None,
) -> bytes:
    """Encrypt ``plaintext`` bound to one field of one row of one account."""
    context = binding(table=table, account_id=account_id, row_id=row_id, field=field)
    return (ring or keyring()).encrypt(plaintext, context=context)


def unseal(
    token: bytes | None,
    *,
    table: str,
    account_id: object,
    row_id: object,
    field: str,
    ring: Keyring | None = None,
    as_stored: bool = False,
) -> str:
    """Decrypt a stored ciphertext of one field (``""`` for none), as every reader receives
    stored text: a character the write path refuses, kept from before the check, is a
    visible U+FFFD (``as_stored``: the text as it was written, for re-encryption)."""
    if not token:
        return ""
    return unseal_bound(
        token,
        row=row_binding(table=table, account_id=account_id, row_id=row_id),
        field=field.encode(),
        ring=ring or keyring(),
        as_stored=as_stored,
    )


def unseal_bound(
    token: bytes | None, *, row: bytes, field: bytes, ring: Keyring, as_stored: bool = False
) -> str:
    """:func:`unseal` for a reader of many rows: ``row`` from :func:`row_binding`, ``field``
    the field's name as bytes."""
    if not token:
        return ""
    text = ring.decrypt(token, context=row + field)
    return text if as_stored else readable(text)


def _bound(instance: Any) -> tuple[object, object]:
    return instance.pk, instance.account_id


class SealedField:
    """A model attribute kept only as ciphertext, in the binary column ``<name>_ciphertext``.

    Reading decrypts and assigning encrypts, bound to the row's ``account_id``, its primary
    key and the attribute's name: set both before assigning (a primary key the database
    would only assign on insert cannot be bound, so such models are refused). The binding
    names the table as ``binding`` says, by default the concrete model's
    ``app_label.model_name``;
    keep it when a model is renamed, or its rows no longer decrypt. Assigning ``""`` stores
    NULL when the column allows it.
    """

    def __init__(self, column: str | None = None, *, binding: str | None = None) -> None:
        self._column = column
        self._binding = binding

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.column = self._column or f"{name}_ciphertext"
        # What this instance last sealed or unsealed, with the ciphertext and binding it
        # was for: read again while both are the same, it is not decrypted again (a write
        # reads the value it changes several times: to merge, to compare, to keep). It
        # lives as long as the instance, as the text read with it does; instances are not
        # sent anywhere (tasks take ids), so neither is it.
        self._known = f"_{name}_known"

    def _where(self, instance: Any) -> dict[str, Any]:
        if instance.pk is None or instance.account_id is None:
            raise ValueError(
                f"{type(instance).__name__}.{self.name}: set the row's primary key and "
                "account before its sealed fields (the ciphertext is bound to both)"
            )
        return {
            "table": self.binding_table(type(instance)),
            "account_id": instance.account_id,
            "row_id": instance.pk,
            "field": self.name,
        }

    def binding_table(self, model: type[models.Model]) -> str:
        """The table name the binding of this field on ``model`` uses (a proxy's rows are
        its concrete model's)."""
        return self._binding or (model._meta.concrete_model or model)._meta.label_lower

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> SealedField: ...
    @overload
    def __get__(self, instance: models.Model, owner: type | None = None) -> str: ...
    def __get__(
        self, instance: models.Model | None, owner: type | None = None
    ) -> str | SealedField:
        if instance is None:
            return self
        token = getattr(instance, self.column)
        known = instance.__dict__.get(self._known)
        if known is not None and known[0] is token and known[1] == _bound(instance):
            cached: str = known[2]
            return cached
        text = unseal(token, **self._where(instance))
        instance.__dict__[self._known] = (token, _bound(instance), text)
        return text

    def stored_text(self, instance: models.Model) -> str:
        """The text as it was written (for re-encryption), not as readers receive it."""
        return unseal(getattr(instance, self.column), as_stored=True, **self._where(instance))

    def __set__(self, instance: models.Model, value: str) -> None:
        if not value and instance._meta.get_field(self.column).null:
            setattr(instance, self.column, None)
            instance.__dict__.pop(self._known, None)
            return
        token = seal(value, **self._where(instance))
        setattr(instance, self.column, token)
        instance.__dict__[self._known] = (token, _bound(instance), value)

    def is_current(self, instance: models.Model, ring: Keyring | None = None) -> bool:
        """True when the stored ciphertext is under the newest key (or there is none)."""
        token = getattr(instance, self.column)
        return not token or (ring or keyring()).is_current(token)
