"""The overlap pairs a recall reports, and what each process keeps of them.

The pairs are the notes among a company's newest (``OVERLAP_PAIR_WINDOW``) whose vectors
of the current model lie within its overlap distance. Computing them compares every two
notes of the window (190 distances for 20 notes): half of what a recall asked of the
database. So the statement first states the window as a digest: the model, the threshold,
and each note's id, row version (``xmin`` and ``ctid``, which any update of the row
changes, within one transaction too: a vector made, remade or cleared, a status, a flag)
and whether it has a vector of the model. It compares that with the digest of the pairs
this process last computed for the company, and compares vectors only when the two
differ: a recall after any change to the window, made in any process, computes the
pairs again in the same round trip.

What a process keeps is keyed by account, company, model, threshold and window (a hit
needs the same account's same rows), bounded (``OVERLAP_PAIRS_KEPT``, the least recently
used dropped first, one account holding at most half), and only where there was
something to compare (two notes with vectors or more). It holds ids and distances, never
a note's text; what an erasure removed stays here, unreachable, until it is dropped.
"""

from __future__ import annotations

import threading
from functools import cache

from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.models import Dossier, Note
from prospect_memory.notes.rules import ACTIVE_IN_DOSSIER, IN_ITS_DOSSIER, NEWEST_FIRST

Key = tuple[int, str, str, float, int]
Pairs = list[tuple[str, str, float]]


@cache
def pairs_statement() -> str:
    """The window's digest, whether it is ``%(known)s``, how many of its notes have a
    vector of the model, and, unless the digest is the known one, the pairs: every row
    carries the first three; without pairs there is one row with none.

    Only one model's vectors are compared: a note whose vector is not ready, or of another
    model, is in the window but has no vector here (vectors are read only when the pairs
    are computed). Each distance is computed once (the subquery is kept whole by its
    OFFSET), compared, ordered by (then the ids as UUIDs: named through the subquery, not
    the output's text columns), and rounded to the answer's 4 decimals here, where it
    costs least. A known digest skips the comparison whole (a one-time filter).
    """
    note, dossier = Note._meta.db_table, Dossier._meta.db_table
    return f"""
    WITH recent AS MATERIALIZED (
        SELECT n.id, n.xmin, n.ctid,
               n.embedding_status = %(ready)s AND n.embedding_model = %(model)s AS comparable
          FROM {note} n
          JOIN {dossier} d ON {IN_ITS_DOSSIER}
         WHERE {ACTIVE_IN_DOSSIER}
         ORDER BY {NEWEST_FIRST}
         LIMIT %(window)s
    ), digest AS MATERIALIZED (
        SELECT sha256(convert_to(concat_ws(' ', %(model)s::text, %(threshold)s::text,
                   string_agg(id::text || ':' || xmin::text || ctid::text
                              || CASE WHEN comparable THEN '+' ELSE '-' END,
                              ',' ORDER BY id)), 'UTF8')) AS value,
               count(*) FILTER (WHERE comparable) AS comparable
          FROM recent
    ), vectors AS MATERIALIZED (
        SELECT n.id, n.embedding
          FROM {note} n
         WHERE n.account_id = %(account)s
           AND n.id IN (SELECT id FROM recent WHERE comparable)
    )
    SELECT digest.value, (digest.value = %(known)s::bytea) IS TRUE, digest.comparable,
           pair.a::text, pair.b::text, round(pair.distance * 10000) / 10000
      FROM digest
      LEFT JOIN (
          SELECT compared.a, compared.b, compared.distance
            FROM (SELECT a.id AS a, b.id AS b, a.embedding <=> b.embedding AS distance
                    FROM vectors a JOIN vectors b ON a.id < b.id
                   WHERE (SELECT value FROM digest) IS DISTINCT FROM %(known)s::bytea
                  OFFSET 0) compared
           WHERE compared.distance <= %(threshold)s
      ) pair ON true
     ORDER BY pair.distance, pair.a, pair.b
    """  # noqa: S608  (names from the models, values are parameters)


def key_for(*, account_id: int, domain: str, model: str, threshold: float, window: int) -> Key:
    """What the pairs of one company's window are kept under."""
    return (account_id, domain, model, threshold, window)


_kept: dict[Key, tuple[bytes, Pairs]] = {}
_lock = threading.Lock()


def kept_for(key: Key) -> tuple[bytes, Pairs] | None:
    """The digest and pairs this process last computed for ``key``'s window, if any."""
    return _kept.get(key)


def answer_and_keep(key: Key, kept: tuple[bytes, Pairs] | None, rows: list[tuple]) -> list[dict]:
    """The answer's pairs from the rows of :func:`pairs_statement` sent with ``kept``'s
    digest: those kept when the window is the same, else those just computed, which are
    kept in their place."""
    digest, same, comparable = rows[0][0], rows[0][1], rows[0][2]
    if same and kept is not None:
        pairs = kept[1]
        _touch(key)
    else:
        ids: dict[str, str] = {}  # each id kept once, however many pairs name it
        pairs = [
            (ids.setdefault(a, a), ids.setdefault(b, b), distance)
            for _, _, _, a, b, distance in rows
            if a is not None
        ]
        _keep(key, digest, pairs, worth_keeping=comparable >= 2)
    return [{"note_ids": [a, b], "distance": distance} for a, b, distance in pairs]


def _touch(key: Key) -> None:
    with _lock:
        entry = _kept.pop(key, None)
        if entry is not None:
            _kept[key] = entry  # the most recently used last


def _keep(key: Key, digest: bytes, pairs: Pairs, *, worth_keeping: bool) -> None:
    limit = notes_settings.OVERLAP_PAIRS_KEPT
    with _lock:
        _kept.pop(key, None)
        if not worth_keeping or limit <= 0:
            return  # fewer than two vectors: nothing a kept answer would save
        # One account holds at most half the places: its own least recently used goes
        # first, so no account can push every other's out.
        own = [k for k in _kept if k[0] == key[0]]  # least recently used first
        if len(own) >= max(1, limit // 2):
            del _kept[own[0]]
        while len(_kept) >= limit:
            del _kept[next(iter(_kept))]  # the least recently used
        _kept[key] = (digest, pairs)


def forget(key: Key | None = None) -> None:
    """Keep nothing of ``key`` (of any company without one): its next recall computes its
    pairs (tests, benchmarks)."""
    with _lock:
        if key is None:
            _kept.clear()
        else:
            _kept.pop(key, None)
