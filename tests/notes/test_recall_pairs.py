"""The overlap pairs a process keeps between recalls (``notes.pairs``): reused only while a
company's window of newest notes is the same, computed again after any change made
anywhere, never another account's, bounded."""

import math
import time
from collections import Counter

import pytest
from django.db import connection, transaction

from pgstatements import run
from prospect_memory.core.embeddings import get_provider
from prospect_memory.notes import pairs
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.models import Note
from prospect_memory.notes.selectors import dossier_recall
from prospect_memory.notes.services.notes import note_delete
from tests.factories import save_note
from tests.helpers import recalled_in_threads

pytestmark = pytest.mark.django_db

BODY = "Acme raised a Series B of 40M led by Example Ventures."


@pytest.fixture(autouse=True)
def nothing_kept():
    pairs.forget()
    yield
    pairs.forget()


def pairs_of(actor, domain="acme.dev") -> dict:
    recall = dossier_recall(actor=actor, domain=domain)
    return {frozenset(p["note_ids"]): p["distance"] for p in recall.overlap_pairs}


def computed(actor, domain="acme.dev") -> dict:
    """The pairs as a process that kept nothing computes them."""
    pairs.forget()
    return pairs_of(actor, domain)


def held_by_account() -> Counter:
    """How many of the kept places each account holds (and each account's own list of its
    keys, in the same order, and its count say the same)."""
    held = Counter(key[0] for key in pairs._kept)
    for account in held:
        assert pairs._kept.of_account(account) == [k for k in pairs._kept if k[0] == account]
        assert pairs._kept.account_cost(account) == held[account]
    return held


def companies_with_a_pair(actor, domains) -> None:
    """Two overlapping notes at each of ``domains``: one pair each to keep."""
    for domain in domains:
        for _ in range(2):
            save_note(actor, domain=domain, body=BODY)


def plant(key, kept) -> None:
    """Put ``kept`` where this process keeps ``key``'s pairs, as if it had computed it."""
    with pairs._lock:
        pairs._kept.put(key, kept, 1, notes_settings.OVERLAP_PAIRS_KEPT)


def key_of(actor, domain="acme.dev"):
    return pairs.company_key(actor.account.pk, domain)


def test_a_second_recall_of_the_same_window_reuses_the_pairs(admin_actor):
    ids = [str(save_note(admin_actor, body=BODY).note.id) for _ in range(3)]
    first = pairs_of(admin_actor)
    kept = pairs.kept_for(key_of(admin_actor))
    assert kept is not None
    assert set(first) == {frozenset(p) for p in ((ids[0], ids[1]), (ids[0], ids[2]),
                                                  (ids[1], ids[2]))}  # fmt: skip
    assert pairs_of(admin_actor) == first
    assert pairs.kept_for(key_of(admin_actor)) is kept  # reused, not computed again


def statement_params(actor, known):
    provider = get_provider()
    return {
        "account": actor.account.pk,
        "domain": "acme.dev",
        "active": Note.Status.ACTIVE,
        "ready": "ready",
        "model": provider.model,
        "window": 20,
        "threshold": provider.overlap_distance,
        "known": known,
    }


def test_the_statement_compares_nothing_when_the_window_is_the_known_one(admin_actor):
    for _ in range(3):
        save_note(admin_actor, body=BODY)
    pairs_of(admin_actor)
    known = pairs.kept_for(key_of(admin_actor)).versions
    (rows,) = run((pairs.pairs_statement(), statement_params(admin_actor, known)))
    assert rows == [(None, True, None, None, None, None)]
    (fresh,) = run((pairs.pairs_statement(), statement_params(admin_actor, None)))
    assert len(fresh) == 3
    assert fresh[0][:2] == (known, False)
    assert [row[:2] for row in fresh[1:]] == [(None, False), (None, False)]


def test_after_a_save_only_the_new_notes_pairs_are_compared(admin_actor):
    for _ in range(3):
        save_note(admin_actor, body=BODY)
    save_note(admin_actor, body="Acme runs its billing on Django and PostgreSQL.")
    pairs_of(admin_actor)
    known = pairs.kept_for(key_of(admin_actor)).versions
    new = str(save_note(admin_actor, body=BODY).note.id)
    (rows,) = run((pairs.pairs_statement(), statement_params(admin_actor, known)))
    assert len(rows) == 3  # the new note against the three it overlaps, no other pair
    assert all(new in (row[2], row[3]) for row in rows)
    assert len(rows[0][0].split()) == 5  # the window's five versions
    assert pairs_of(admin_actor) == computed(admin_actor)
    assert len(pairs_of(admin_actor)) == 6


def test_after_two_saves_their_pair_is_computed_once_and_each_against_the_rest(admin_actor):
    for _ in range(2):
        save_note(admin_actor, body=BODY)
    pairs_of(admin_actor)
    known = pairs.kept_for(key_of(admin_actor)).versions
    new = {str(save_note(admin_actor, body=BODY).note.id) for _ in range(2)}
    (rows,) = run((pairs.pairs_statement(), statement_params(admin_actor, known)))
    computed_pairs = [frozenset(row[2:4]) for row in rows]
    # Each new note against the two kept ones, and the new two once: five, none kept.
    assert len(computed_pairs) == len(set(computed_pairs)) == 5
    assert all(pair & new for pair in computed_pairs)
    assert all(row[2] < row[3] for row in rows)  # the first id the lower, as kept ones
    assert pairs_of(admin_actor) == computed(admin_actor)
    assert len(pairs_of(admin_actor)) == 6


def test_a_known_version_is_matched_whole_never_as_part_of_another(admin_actor):
    a = save_note(admin_actor, body=BODY).note
    save_note(admin_actor, body=BODY)
    pairs_of(admin_actor)
    kept = pairs.kept_for(key_of(admin_actor))
    # A version that only begins like one of the window's is not known: both pairs'
    # distances are computed again.
    mine = next(v for v in kept.versions.split() if v.startswith(str(a.id)))
    other = next(v for v in kept.versions.split() if v != mine)
    (rows,) = run((pairs.pairs_statement(), statement_params(admin_actor, f"{mine}0 {other}")))
    assert len(rows) == 1
    assert rows[0][2] is not None


def test_kept_pairs_merge_with_new_ones_in_the_order_computed_afresh(admin_actor, limits):
    limits(OVERLAP_PAIR_WINDOW=4)
    bodies = [
        BODY,
        "Acme raised a Series B of 40M, led by Example Ventures, to hire.",
        "Acme closed a 40M Series B round; Example Ventures led it.",
        "Acme runs its billing on Django and PostgreSQL.",
        "Acme's billing runs on Django with a PostgreSQL database.",
        BODY,
    ]
    counts = []
    for day, body in enumerate(bodies, start=1):
        save_note(admin_actor, body=body, observed_at=f"2026-01-{day:02d}")
        merged = dossier_recall(actor=admin_actor, domain="acme.dev").overlap_pairs
        pairs.forget()
        assert merged == dossier_recall(actor=admin_actor, domain="acme.dev").overlap_pairs
        counts.append(len(merged))
    assert counts == [0, 1, 2, 2, 1, 2]  # the last from one kept pair and one new


def test_pairs_are_computed_again_after_every_change_to_the_window(admin_actor):
    a = str(save_note(admin_actor, body=BODY).note.id)
    b = str(save_note(admin_actor, body=BODY).note.id)
    assert set(pairs_of(admin_actor)) == {frozenset((a, b))}

    # Each change as another process would make it: nothing here is told of it.
    c = save_note(admin_actor, body=BODY).note.id
    assert pairs_of(admin_actor) == computed(admin_actor)
    assert len(pairs_of(admin_actor)) == 3

    Note.objects.filter(id=c).update(embedding_status="pending")  # its vector is remade
    assert set(pairs_of(admin_actor)) == {frozenset((a, b))}
    Note.objects.filter(id=c).update(embedding_status="ready")
    assert len(pairs_of(admin_actor)) == 3

    Note.objects.filter(id=c).update(embedding_model="an-older-model")
    assert set(pairs_of(admin_actor)) == {frozenset((a, b))}

    # A vector rewritten in place under the same model (as two embedders racing could)
    # changes the row's version, and with it the note's known pairs.
    Note.objects.filter(id=c).update(embedding_model=get_provider().model)
    assert len(pairs_of(admin_actor)) == 3
    Note.objects.filter(id=c).update(embedding=[1.0] + [0.0] * (get_provider().dimensions - 1))
    assert pairs_of(admin_actor) == computed(admin_actor)
    assert len(pairs_of(admin_actor)) == 1

    note_delete(actor=admin_actor, note_id=b)
    assert pairs_of(admin_actor) == {}
    assert pairs_of(admin_actor) == computed(admin_actor)


def test_a_note_beyond_the_window_changes_nothing_and_one_within_it_does(admin_actor, limits):
    limits(OVERLAP_PAIR_WINDOW=2)
    a = str(save_note(admin_actor, body=BODY, observed_at="2026-01-02").note.id)
    b = str(save_note(admin_actor, body=BODY, observed_at="2026-01-03").note.id)
    assert set(pairs_of(admin_actor)) == {frozenset((a, b))}
    kept = pairs.kept_for(key_of(admin_actor))
    assert kept is not None
    save_note(admin_actor, body=BODY, observed_at="2025-06-01")  # older than the window
    assert set(pairs_of(admin_actor)) == {frozenset((a, b))}
    assert pairs.kept_for(key_of(admin_actor)) is kept
    c = str(save_note(admin_actor, body=BODY, observed_at="2026-01-04").note.id)
    assert set(pairs_of(admin_actor)) == {frozenset((b, c))}


def test_other_accounts_pairs_are_never_reused_even_when_kept_under_their_key(
    admin_actor, rival_actor
):
    ours = {str(save_note(admin_actor, body=BODY).note.id) for _ in range(2)}
    theirs = {str(save_note(rival_actor, body=BODY).note.id) for _ in range(2)}
    assert set(pairs_of(admin_actor)) == {frozenset(ours)}
    # Even what this process kept for one account, put under the other's key, is not
    # served: the versions name the other account's notes, none in this window.
    plant(key_of(rival_actor), pairs.kept_for(key_of(admin_actor)))
    assert set(pairs_of(rival_actor)) == {frozenset(theirs)}
    assert set(pairs_of(admin_actor)) == {frozenset(ours)}


def test_every_member_of_the_account_gets_the_same_pairs(admin_actor, member_actor):
    for _ in range(2):
        save_note(admin_actor, body=BODY)
    assert pairs_of(member_actor) == pairs_of(admin_actor) == computed(member_actor)


def test_what_a_process_keeps_is_bounded_and_can_be_nothing(admin_actor, limits):
    domains = [f"acme{i}.dev" for i in range(4)]
    companies_with_a_pair(admin_actor, domains)
    limits(OVERLAP_PAIRS_KEPT=4)
    answers = [pairs_of(admin_actor, d) for d in domains]
    assert len(pairs._kept) == 2  # one account holds half the places at most
    assert pairs.kept_for(key_of(admin_actor, domains[-1])) is not None
    limits(OVERLAP_PAIRS_KEPT=0)
    pairs.forget()
    assert [pairs_of(admin_actor, d) for d in domains] == answers
    assert len(pairs._kept) == 0
    assert all(len(a) == 1 for a in answers)


def test_a_new_threshold_computes_the_pairs_again(admin_actor, settings):
    for _ in range(2):
        save_note(admin_actor, body=BODY)
    save_note(admin_actor, body="Acme runs its billing on Django and PostgreSQL.")
    before = pairs_of(admin_actor)
    assert len(before) == 1
    # The key changes with the threshold; even under the old key, what was kept is not
    # used, for it names the threshold it was computed under.
    old_key = key_of(admin_actor)
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_OPTIONS": {
            **settings.PROSPECT_MEMORY.get("EMBEDDING_OPTIONS", {}),
            "overlap_distance": 1.99,
            "near_duplicate_distance": 0.01,
        },
    }
    assert get_provider().overlap_distance == 1.99
    plant(key_of(admin_actor), pairs.kept_for(old_key))
    after = pairs_of(admin_actor)
    assert len(after) == 3
    assert after == computed(admin_actor)


def test_a_window_with_nothing_to_compare_is_not_kept(admin_actor):
    assert pairs_of(admin_actor, "unknown.dev") == {}
    save_note(admin_actor, body=BODY)
    assert pairs_of(admin_actor) == {}
    assert len(pairs._kept) == 0


def test_the_least_recently_used_is_dropped_first(admin_actor, limits):
    domains = ["a.dev", "b.dev", "c.dev"]
    companies_with_a_pair(admin_actor, domains)
    limits(OVERLAP_PAIRS_KEPT=4)
    pairs_of(admin_actor, "a.dev")
    pairs_of(admin_actor, "b.dev")
    pairs_of(admin_actor, "a.dev")  # used again: b.dev is now the least recent
    pairs_of(admin_actor, "c.dev")
    assert pairs.kept_for(key_of(admin_actor, "a.dev")) is not None
    assert pairs.kept_for(key_of(admin_actor, "b.dev")) is None
    assert held_by_account() == {admin_actor.account.pk: 2}


def test_no_account_pushes_every_other_out(admin_actor, rival_actor, limits):
    for _ in range(2):
        save_note(rival_actor, domain="theirs.dev", body=BODY)
    domains = [f"ours{i}.dev" for i in range(6)]
    companies_with_a_pair(admin_actor, domains)
    limits(OVERLAP_PAIRS_KEPT=4)
    pairs_of(rival_actor, "theirs.dev")
    for domain in domains:  # one account recalling many companies
        pairs_of(admin_actor, domain)
    assert pairs.kept_for(key_of(rival_actor, "theirs.dev")) is not None
    assert sum(1 for key in pairs._kept if key[0] == admin_actor.account.pk) == 2
    assert held_by_account() == {admin_actor.account.pk: 2, rival_actor.account.pk: 1}


def test_a_lowered_limit_holds_an_account_to_its_new_share(admin_actor, limits):
    domains = [f"ours{i}.dev" for i in range(5)]
    companies_with_a_pair(admin_actor, domains)
    limits(OVERLAP_PAIRS_KEPT=20)
    for domain in domains[:4]:
        pairs_of(admin_actor, domain)
    assert held_by_account() == {admin_actor.account.pk: 4}
    limits(OVERLAP_PAIRS_KEPT=4)  # changed while the process runs
    pairs_of(admin_actor, domains[4])
    assert held_by_account() == {admin_actor.account.pk: 2}
    assert pairs.kept_for(key_of(admin_actor, domains[4])) is not None


@pytest.mark.parametrize("value", ["512", True, -1, 2.5])
def test_a_kept_count_that_is_no_whole_number_stops_the_start(limits, value):
    from prospect_memory.notes.checks import check_what_a_process_keeps

    limits(OVERLAP_PAIRS_KEPT=value)
    [error] = check_what_a_process_keeps(None)
    assert error.id == "prospect_memory.E008"
    assert "OVERLAP_PAIRS_KEPT" in error.msg


@pytest.mark.django_db(transaction=True)
def test_recalls_in_threads_share_what_is_kept_and_answer_right(admin_actor, limits):
    domains = [f"acme{i}.dev" for i in range(6)]
    for domain in domains:
        for _ in range(3):
            save_note(admin_actor, domain=domain, body=BODY)
    expected = {d: computed(admin_actor, d) for d in domains}
    limits(OVERLAP_PAIRS_KEPT=6)  # threads keep and drop entries under one another
    wrong = recalled_in_threads(lambda domain: pairs_of(admin_actor, domain), domains, expected)
    assert wrong == []
    assert len(pairs._kept) <= 3  # this account's half of the places
    assert held_by_account() == {admin_actor.account.pk: len(pairs._kept)}


def test_what_a_recall_does_with_its_pairs_leaves_the_kept_ones_alone(admin_actor):
    for _ in range(3):
        save_note(admin_actor, body=BODY)
    first = dossier_recall(actor=admin_actor, domain="acme.dev").overlap_pairs
    expected = [dict(pair) for pair in first]
    first.clear()  # the list is the caller's: a payload cap, a filter
    again = dossier_recall(actor=admin_actor, domain="acme.dev").overlap_pairs
    assert again == expected
    assert again is not dossier_recall(actor=admin_actor, domain="acme.dev").overlap_pairs


def _unit(degrees: float) -> list[float]:
    vector = [0.0] * get_provider().dimensions
    vector[0], vector[1] = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return vector


def _row_place(note_id) -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT xmin::text, ctid::text FROM {Note._meta.db_table} WHERE id = %s",  # noqa: S608
            [note_id],
        )
        return cursor.fetchone()


def _vacuum_full() -> None:
    """``VACUUM FULL`` of the notes once no other session on the server holds back which
    row versions it may drop: another test database created or dropped on the same server
    (another xdist worker starting or ending) kept the replaced versions as recently dead,
    and the layout the test stages came out otherwise (its first update on the second
    page). A session may start in between: rare enough, and the test then fails on its
    layout, not on what it checks."""
    with connection.cursor() as cursor:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                " AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)"
            )
            if cursor.fetchone()[0] == 0:
                break
            time.sleep(0.05)
        cursor.execute(f"VACUUM FULL {Note._meta.db_table}")


@pytest.mark.django_db(transaction=True)
def test_a_row_version_renumbered_by_vacuum_full_is_not_taken_for_the_one_kept(admin_actor):
    # VACUUM FULL keeps xmin and renumbers ctid: a note updated twice in one transaction,
    # recalled between, can end where its first version stood, same id, xmin and ctid,
    # with another vector. The table's file in the version tells the two apart.
    m = save_note(admin_actor, observed_at="2026-01-02").note.id
    n = save_note(admin_actor, observed_at="2026-01-03").note.id
    Note.objects.filter(id__in=[m, n]).update(embedding=_unit(0))
    _vacuum_full()
    with transaction.atomic():
        Note.objects.filter(id=n).update(embedding=_unit(10))  # overlaps m
        assert len(dossier_recall(actor=admin_actor, domain="acme.dev").overlap_pairs) == 1
        seen = _row_place(n)
        slot = int(seen[1].strip("()").split(",")[1])
        for _ in range(slot - 2):  # another company's notes, to fill the page up to it
            save_note(admin_actor, domain="other.dev", observed_at="2026-01-03")
        Note.objects.filter(id=n).update(embedding=_unit(90))  # overlaps nothing
    _vacuum_full()
    assert _row_place(n) == seen  # the same id, xmin and ctid
    assert dossier_recall(actor=admin_actor, domain="acme.dev").overlap_pairs == []
    assert computed(admin_actor) == {}


def test_a_forgotten_note_that_then_leaves_the_window_takes_its_pairs_along(admin_actor):
    notes = [save_note(admin_actor, body=BODY, observed_at=f"2026-01-0{day}").note
             for day in (1, 2, 3)]  # fmt: skip
    assert len(pairs_of(admin_actor)) == 3
    pairs.forget_note(key_of(admin_actor), str(notes[2].id))
    # Its vector no longer ready: the window's versions are now those still kept.
    Note.objects.filter(id=notes[2].id).update(embedding_status="pending")
    assert pairs_of(admin_actor) == computed(admin_actor)
    assert len(pairs_of(admin_actor)) == 1
