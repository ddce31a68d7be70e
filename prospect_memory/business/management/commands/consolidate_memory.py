"""Consolidate business memory now: purge, demote, merge, and record the run.

The operator sees counts. ``--verbose`` names what changed in the account's shared layer;
keys of a member's own context are theirs alone and are never printed, only counted.
"""

from django.core.management.base import BaseCommand, CommandError

from outreach.models import Account
from prospect_memory.business.models import Layer
from prospect_memory.business.services.consolidate import accounts_to_consolidate, consolidate


class Command(BaseCommand):
    help = (
        "Consolidate business memory (SPEC 13): purge what left over 30 days ago, demote "
        "unused entries, merge near-identical ones into aliases, record a run report. "
        "Idempotent: a second run changes nothing. Prints counts; --verbose also names the "
        "shared layer's keys (members' own keys are never printed)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--account", metavar="SLUG", help="only this account")
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would change; change nothing"
        )
        parser.add_argument(
            "--verbose",
            action="store_true",
            help="name each change of the account's shared layer",
        )

    def handle(self, *args, account=None, dry_run=False, verbose=False, **options):
        if account:
            accounts = list(Account.objects.filter(slug=account))
            if not accounts:
                raise CommandError(f"No account with the slug {account!r}.")
        else:
            accounts = list(accounts_to_consolidate())
        for each in accounts:
            report = consolidate(account=each, dry_run=dry_run)
            shared_demoted = [d for d in report.demoted if d[1] == Layer.ACCOUNT]
            shared_merged = [m for m in report.merged if m[2] == Layer.ACCOUNT]
            verb = "would" if dry_run else "did"
            self.stdout.write(
                f"{each.slug}: {verb} purge {report.purged_shared}, demote "
                f"{len(shared_demoted)}, merge {len(shared_merged)} in the shared layer; "
                f"purge {report.purged - report.purged_shared}, demote "
                f"{len(report.demoted) - len(shared_demoted)}, merge "
                f"{len(report.merged) - len(shared_merged)} in members' own contexts"
            )
            if not verbose:
                continue
            for key, _, before, after in shared_demoted:
                self.stdout.write(f"  demote {key} {before} -> {after}")
            for alias, kept, _, distance in shared_merged:
                self.stdout.write(f"  merge {alias} into {kept} (distance {distance})")
