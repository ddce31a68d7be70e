"""How well the integrity checks do on a labelled set (SPEC 15, "Measured")."""

from django.core.management.base import BaseCommand, CommandError

from prospect_memory.core.integrity.report import DEFAULT_SET, evaluate, lines, load


class Command(BaseCommand):
    help = (
        "Run the memory-integrity checks over a labelled set of notes and entries and print "
        "poisoned items contained per language (flagged, or refused for a hidden character), "
        "false flags on clean research, invisible characters refused, emoji accepted and the "
        "cost per note. Defaults to the sets shipped with Kit."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--set",
            dest="path",
            action="append",
            metavar="FILE",
            help=f"a JSON-lines set (repeatable; default {DEFAULT_SET.name} and its unseen part)",
        )
        parser.add_argument(
            "--split",
            help="only items of these splits, comma-separated (dev, holdout, unseen): "
            "holdout,unseen are the items no rule was written from",
        )
        parser.add_argument(
            "--show-misses", action="store_true", help="list the ids the checks got wrong"
        )

    def handle(self, *args, path=None, split=None, show_misses=False, **options):
        paths = path or [DEFAULT_SET, *sorted(DEFAULT_SET.parent.glob("integrity_set_*.jsonl"))]
        items = []
        for each in paths:
            try:
                items += load(each)
            except (OSError, ValueError) as error:
                raise CommandError(f"cannot read {each}: {error}") from None
        report = evaluate(items, split=split.split(",") if split else None)
        for line in lines(report):
            self.stdout.write(line)
        if show_misses:
            for name, tallies in (("missed", report.detection), ("false", report.false_flags)):
                for language, tally in sorted(tallies.items()):
                    for item in tally.misses:
                        self.stdout.write(f"{name} {language} {item}")
            for item in report.refused.misses:
                self.stdout.write(f"not refused {item}")
            for item in report.emoji_accepted.misses:
                self.stdout.write(f"emoji refused or flagged {item}")
