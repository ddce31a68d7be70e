"""The places a process keeps what its recalls made, for the recalls that come back
(``notes.pairs``: companies' overlap pairs; ``notes.answers``: notes' answers).

Each thing is kept under a key whose first part is its account, at a cost against a bound
(one place each, or its bytes), in order: the first goes first when room is needed (its
user decides the order: the least recently used, or the oldest made). One account holds
at most half the bound, so no account can push every other's out. Not thread-safe: each
user holds its own lock around every call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=tuple)  # its first part is the account
V = TypeVar("V")


class Places(Generic[K, V]):
    """Things kept under their keys, in order, with what each costs."""

    def __init__(self) -> None:
        self._kept: dict[K, tuple[V, int]] = {}  # the first to go first
        # Each account's keys in the same order, and what they cost: holding an account to
        # its share looks at its own keys only.
        self._by_account: dict[object, dict[K, None]] = {}
        self._account_cost: dict[object, int] = {}
        self.cost = 0

    def __len__(self) -> int:
        return len(self._kept)

    def __iter__(self) -> Iterator[K]:
        """The keys, the first to go first."""
        return iter(self._kept)

    def get(self, key: K) -> V | None:
        kept = self._kept.get(key)
        return None if kept is None else kept[0]

    def items(self) -> Iterator[tuple[K, V]]:
        """Each key and what is kept under it, the first to go first."""
        return ((key, kept[0]) for key, kept in self._kept.items())

    def first(self) -> K | None:
        """The key that goes first, if anything is kept."""
        return next(iter(self._kept), None)

    def of_account(self, account: object) -> list[K]:
        """The account's keys, the first to go first."""
        return list(self._by_account.get(account, ()))

    def account_cost(self, account: object) -> int:
        return self._account_cost.get(account, 0)

    def to_the_end(self, key: K) -> None:
        """``key`` goes last (it was just used)."""
        if key in self._kept:
            self._kept[key] = self._kept.pop(key)
            own = self._by_account[key[0]]
            del own[key]
            own[key] = None

    def replace(self, key: K, value: V) -> None:
        """What ``key`` keeps, in its place and at its cost (if it keeps anything)."""
        if key in self._kept:
            self._kept[key] = (value, self._kept[key][1])

    def put(self, key: K, value: V, cost: int, bound: int) -> bool:
        """Keep ``value`` under ``key`` (in place of what it kept), last, once the account's
        first and then anyone's first have gone until it fits: its account within its
        share (half the bound, at least 1), everything within the bound. False, keeping
        nothing, when it alone costs more than a share."""
        self.drop(key)
        share = max(1, bound // 2)
        if cost > share:
            return False
        account = key[0]
        self.within(bound, [account], adding=cost)
        self._kept[key] = (value, cost)
        self._by_account.setdefault(account, {})[key] = None
        self._account_cost[account] = self._account_cost.get(account, 0) + cost
        self.cost += cost
        return True

    def within(self, bound: int, accounts, adding: int = 0) -> None:
        """Each of ``accounts`` within its share and everything within ``bound``, with room
        for ``adding`` more (the bound lowered since, or a thing about to be kept)."""
        share = max(1, bound // 2)
        for account in accounts:
            own = self._by_account.get(account, {})
            while own and self._account_cost[account] + adding > share:
                self.drop(next(iter(own)))
        while self._kept and self.cost + adding > bound:
            self.drop(next(iter(self._kept)))

    def drop(self, key: K) -> V | None:
        """Keep nothing under ``key``; what it kept."""
        kept = self._kept.pop(key, None)
        if kept is None:
            return None
        account = key[0]
        own = self._by_account[account]
        del own[key]
        self._account_cost[account] -= kept[1]
        self.cost -= kept[1]
        if not own:
            del self._by_account[account], self._account_cost[account]
        return kept[0]

    def clear(self) -> None:
        self._kept.clear()
        self._by_account.clear()
        self._account_cost.clear()
        self.cost = 0
