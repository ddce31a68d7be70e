from django.db import models

from outreach.models import Account


class Remembered(models.Model):
    """What a careless feature might keep: an account's row naming a company."""

    account = models.ForeignKey(Account, on_delete=models.DO_NOTHING, db_constraint=False)
    text = models.CharField(max_length=253)

    def __str__(self) -> str:
        return self.text
