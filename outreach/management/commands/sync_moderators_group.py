from django.core.management.base import BaseCommand, CommandError

from outreach.moderation import MODERATORS, moderators_group_sync


class Command(BaseCommand):
    help = (
        f"Create or update the '{MODERATORS}' group with exactly the permissions moderation "
        "needs (view and delete notes, restore compactions, read audit and usage events). "
        "Add staff users to it in the admin. Safe to run again."
    )

    def handle(self, *args, **options):
        group, missing = moderators_group_sync()
        if missing:
            raise CommandError(
                f"permissions missing (run `manage.py migrate` first): {', '.join(missing)}"
            )
        names = sorted(group.permissions.values_list("codename", flat=True))
        self.stdout.write(f"Group '{group.name}' holds: {', '.join(names)}")
