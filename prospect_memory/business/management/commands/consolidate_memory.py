"""Consolidate business memory now: purge, demote, merge, and record the run."""

from django.core.management.base import BaseCommand, CommandError

from outreach.models import Account
from prospect_memory.business.consolidation import accounts_to_consolidate, consolidate


class Command(BaseCommand):
    help = (
        "Consolidate business memory (SPEC 13): purge what left over 30 days ago, demote "
        "unused entries, merge near-identical ones into aliases, record a run report. "
        "Idempotent: a second run changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--account", metavar="SLUG", help="only this account")
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would change; change nothing"
        )

    def handle(self, *args, account=None, dry_run=False, **options):
        if account:
            accounts = list(Account.objects.filter(slug=account))
            if not accounts:
                raise CommandError(f"No account with the slug {account!r}.")
        else:
            accounts = list(accounts_to_consolidate())
        for each in accounts:
            report = consolidate(account=each, dry_run=dry_run)
            verb = "would" if dry_run else "did"
            self.stdout.write(
                f"{each.slug}: {verb} purge {report.purged}, demote {len(report.demoted)}, "
                f"merge {len(report.merged)}"
            )
            for key, layer, before, after in report.demoted:
                self.stdout.write(f"  demote {layer}:{key} {before} -> {after}")
            for alias, kept, layer, distance in report.merged:
                self.stdout.write(f"  merge {layer}:{alias} into {kept} (distance {distance})")
