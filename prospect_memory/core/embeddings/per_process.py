"""What each process must make for itself: an onnxruntime session.

A session's thread pools do not survive a fork (the child has the pool's memory, not its
threads), so a session is never handed from a process to the processes it forks. What a
model loads besides (its checked files, its tokenizer, its weights) holds no thread and is
shared with them: gunicorn's master loads it before it forks its workers
(``preload_app``), and each worker then makes its own session over the same weights, on its
first call.

A session a process inherits all the same (made before a fork that nothing here
prevented) is kept, never used and never freed: freeing it would wait for threads that are
not in this process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

_lock = threading.Lock()


def _new_lock() -> None:
    # A child is forked with the lock as it was: held, if another thread of the parent was
    # making a session just then.
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock)


class PerProcess(Generic[T]):
    """``make()``'s result, made once in each process that asks for it."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        #: The process that made it, and what it made (one tuple, read in one step).
        self._made: tuple[int, T] | None = None
        self._inherited: list[T] = []

    def get(self) -> T:
        pid = os.getpid()
        made = self._made
        if made is None or made[0] != pid:
            with _lock:
                made = self._made
                if made is None or made[0] != pid:
                    if made is not None:
                        self._inherited.append(made[1])
                    made = self._made = (pid, self._make())
        return made[1]

    @property
    def made_here(self) -> bool:
        """Whether this process has made its own."""
        return self._made is not None and self._made[0] == os.getpid()
