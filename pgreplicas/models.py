"""Where each writer's last write reached in the primary's WAL, for read-your-writes."""

from __future__ import annotations

from django.db import models

from pgreplicas.routing import POSITIONS


class WritePosition(models.Model):
    """The primary's WAL position (as a number of bytes) after a member's last write.

    A read of that member goes to a replica only once the replica has replayed this far.
    Kept on the primary: every web node sees it. No foreign keys: plumbing names no app's
    model, and a position left by a member who has gone forces nothing but a read of the
    primary.
    """

    pk = models.CompositePrimaryKey("account_id", "member_id")
    account_id = models.BigIntegerField()
    member_id = models.BigIntegerField()
    lsn = models.BigIntegerField()

    class Meta:
        db_table = POSITIONS

    def __str__(self) -> str:
        return f"member {self.member_id} of account {self.account_id}: {self.lsn}"
