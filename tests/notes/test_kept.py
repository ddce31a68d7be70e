"""The places a process keeps what its recalls made (``notes.kept``): the first goes first,
an account holds at most half the bound, the costs add up."""

from prospect_memory.notes.kept import Places


def consistent(places: Places) -> dict[int, int]:
    """Each account's cost, its keys in the same order as all the keys."""
    costs = {key[0]: places.account_cost(key[0]) for key in places}
    for account in costs:
        assert places.of_account(account) == [key for key in places if key[0] == account]
    assert sum(costs.values()) == places.cost
    return costs


def test_the_first_goes_first_and_an_account_holds_half():
    places: Places[tuple[int, str], str] = Places()
    for i in range(4):
        assert places.put((1, f"a{i}"), f"A{i}", 10, 60)
    assert list(places) == [(1, "a1"), (1, "a2"), (1, "a3")]  # 30 of 60: its half
    places.to_the_end((1, "a1"))  # used: goes last
    for i in range(4):
        places.put((2, f"b{i}"), f"B{i}", 10, 60)
    assert list(places) == [(1, "a2"), (1, "a3"), (1, "a1"), (2, "b1"), (2, "b2"), (2, "b3")]
    places.put((3, "c"), "C", 25, 60)  # room made from the first of all, in order
    assert list(places) == [(2, "b1"), (2, "b2"), (2, "b3"), (3, "c")]
    assert consistent(places) == {2: 30, 3: 25}


def test_a_thing_larger_than_a_share_is_never_kept_and_a_share_is_at_least_one():
    places: Places[tuple[int, str], str] = Places()
    assert not places.put((1, "big"), "x", 31, 60)
    assert places.put((1, "one"), "x", 1, 1)  # a bound of one keeps one
    assert consistent(places) == {1: 1}


def test_put_again_replace_drop_and_a_lowered_bound():
    places: Places[tuple[int, str], str] = Places()
    places.put((1, "a"), "old", 10, 100)
    places.put((2, "b"), "B", 20, 100)
    places.put((1, "a"), "new", 15, 100)  # in place of what it kept: last, at its new cost
    assert (list(places), places.get((1, "a"))) == ([(2, "b"), (1, "a")], "new")
    places.replace((2, "b"), "B2")  # its place and cost kept
    assert (places.first(), places.get((2, "b")), consistent(places)) == (
        (2, "b"),
        "B2",
        {1: 15, 2: 20},
    )
    places.within(30, [2])  # lowered: account 2 over its 15, then all within 30
    assert consistent(places) == {1: 15}
    assert places.drop((1, "a")) == "new"
    assert (len(places), places.cost, places.first(), places.drop((1, "a"))) == (0, 0, None, None)
