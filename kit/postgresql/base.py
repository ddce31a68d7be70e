"""Django's PostgreSQL backend, with a health check that asks the socket before the server.

``CONN_HEALTH_CHECKS`` makes Django check a reused connection before a request's first
query; its PostgreSQL backend does that with a ``SELECT 1``: a round trip on every request,
a tenth of an agent's recall. A busy connection's server has nothing to say unless it is
ending the session: a backend that was terminated or a server that stopped sends its last
message or closes the socket, and either makes the socket readable. So when the connection
was in use moments ago (within ``DATABASE_HEALTH_CHECK_IDLE_SECONDS``), the check looks
there first, without waiting: nothing to read, and the connection is used as it is;
anything to read (that last message, a notice, a notification), and it sends the ``SELECT
1`` as Django does, and a connection that fails it is closed and opened again.

A connection that sat idle longer gets the ``SELECT 1`` whatever its socket says: a server
that went away without closing it (a host rebooted, a failover to another machine, a
firewall that forgot the connection) answers the first packet with a reset, and that
packet is the check's, not the request's. So is a connection in the middle of a
transaction, and one psycopg no longer counts as open.
"""

from __future__ import annotations

import select
import time

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base
from psycopg import pq


class DatabaseWrapper(base.DatabaseWrapper):
    #: When the connection was last seen between two uses (a request's start or end, a
    #: Celery task's), and whether it sat idle longer than the setting before this use.
    _seen_at: float | None = None
    _quiet_too_long = True

    def close_if_unusable_or_obsolete(self) -> None:
        # Called when a request (or a task) starts and when it ends: the time between an
        # end and the next start is how long the connection sat unused.
        now = time.monotonic()
        idle_limit = settings.DATABASE_HEALTH_CHECK_IDLE_SECONDS
        self._quiet_too_long = self._seen_at is None or now - self._seen_at > idle_limit
        self._seen_at = now
        super().close_if_unusable_or_obsolete()

    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        if self._quiet_too_long or connection.info.transaction_status != pq.TransactionStatus.IDLE:
            return super().is_usable()
        try:
            poller = select.poll()
            poller.register(connection.fileno(), select.POLLIN)
            pending = poller.poll(0)
        except (OSError, ValueError, psycopg.Error):  # the socket is gone
            return False
        return not pending or super().is_usable()
