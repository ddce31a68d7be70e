"""Calibrate the configured embedding model's distances on labelled note pairs (SPEC 14)."""

from datetime import date
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from prospect_memory.core.embeddings import EmbeddingError, calibration, get_provider, thresholds
from prospect_memory.notes.rules import embedding_input


class Command(BaseCommand):
    help = (
        "Embed a labelled set of note pairs (restated, paraphrase, same topic, unrelated) "
        "with the configured provider and print each class's distances and the precision, "
        "recall and F1 of near duplicates and overlaps, at the thresholds in force and at the "
        "best ones. --write stores the best ones as this model's thresholds."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--pairs",
            type=Path,
            default=calibration.SHIPPED_PAIRS,
            metavar="FILE",
            help=f"JSON-lines pairs (default: the {calibration.SHIPPED_PAIRS.name} Kit ships)",
        )
        parser.add_argument(
            "--fit",
            metavar="LANGUAGES",
            help="fit the best thresholds on these languages' pairs only (comma-separated, "
            "e.g. en); default every pair",
        )
        parser.add_argument(
            "--fit-split",
            default="dev",
            metavar="SPLITS",
            help="fit on the pairs of these splits (comma-separated among dev, holdout; "
            "default dev: the holdout pairs are only measured)",
        )
        parser.add_argument(
            "--write",
            action="store_true",
            help="store the best thresholds for this model (in EMBEDDING_THRESHOLDS_FILE, or "
            "the file Kit ships when none is set)",
        )

    def handle(self, *args, pairs, fit=None, fit_split="dev", write=False, **options):
        splits = fit_split.split(",")
        if not set(splits) <= set(calibration.SPLITS):
            raise CommandError(f"--fit-split takes {', '.join(calibration.SPLITS)}")
        try:
            labelled = calibration.load_pairs(pairs)
        except (OSError, ValueError, KeyError) as error:
            raise CommandError(f"cannot read {pairs}: {error}") from None
        if not labelled:
            raise CommandError(f"{pairs} holds no pairs")
        provider = get_provider()
        in_force = provider.thresholds
        try:
            report = calibration.calibrate(
                labelled,
                model=provider.model,
                embed=provider.embed_documents,
                text_of=lambda note: embedding_input(note.get("title", ""), note["body"]),
                current=(in_force.near_duplicate, in_force.overlap),
                fit_languages=fit.split(",") if fit else None,
                fit_splits=splits,
            )
        except EmbeddingError as error:
            raise CommandError(f"the provider could not embed the pairs: {error}") from None
        except calibration.TooFewPairs as error:
            raise CommandError(str(error)) from None
        self.stdout.write(calibration.markdown(report))
        self.stdout.write(f"In force: {in_force.source}.")
        if write:
            near, overlap = report.best["near_duplicate"], report.best["overlap"]
            merge = report.best["merge"]
            try:
                where = thresholds.write(
                    provider.model,
                    {
                        "near_duplicate": near.threshold,
                        "overlap": overlap.threshold,
                        "merge": merge.threshold,
                        "source": f"calibrate_embeddings on {report.pairs} pairs, "
                        f"{date.today().isoformat()}",
                        "near_duplicate_precision_recall": [
                            round(near.precision, 3),
                            round(near.recall, 3),
                        ],
                        "overlap_precision_recall": [
                            round(overlap.precision, 3),
                            round(overlap.recall, 3),
                        ],
                        "fitted_on": report.fitted_on,
                    },
                )
            except (OSError, ValueError) as error:
                raise CommandError(f"the thresholds could not be written: {error}") from None
            self.stdout.write(
                f"Wrote {provider.model}: near duplicate {near.threshold:.3f}, overlap "
                f"{overlap.threshold:.3f} to {where}. Running processes read it on their "
                "next save."
            )
            if provider._given and any(v is not None for v in provider._given.values()):
                self.stderr.write(
                    "EMBEDDING_OPTIONS sets thresholds of its own, which stay in force over "
                    "what was written; remove them to use the calibrated ones."
                )
