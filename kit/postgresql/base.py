"""Django's PostgreSQL backend, with a health check that asks the socket before the server.

``CONN_HEALTH_CHECKS`` makes Django check a reused connection before a request's first
query; its PostgreSQL backend does that with a ``SELECT 1``: a round trip on every request,
a tenth of an agent's recall. An idle connection's server has nothing to say unless it is
ending the session: a backend that was terminated or restarted sends its last message and
closes the socket, and either makes the socket readable. So the check looks there first,
without waiting: nothing to read, and the connection is used as it is; anything to read
(that last message, a notice, a notification), and it sends the ``SELECT 1`` as Django
does, and a connection that fails it is closed and opened again. A connection in the
middle of a transaction, or one psycopg no longer counts as open, goes to Django's check
too. What no check catches without waiting for an answer (a network that silently drops
the packets) goes on to the connection's timeouts, as it did with the ``SELECT 1``.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg import pq


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        if connection.info.transaction_status != pq.TransactionStatus.IDLE:
            return super().is_usable()
        try:
            poller = select.poll()
            poller.register(connection.fileno(), select.POLLIN)
            pending = poller.poll(0)
        except (OSError, ValueError):  # the socket is gone
            return False
        return not pending or super().is_usable()
