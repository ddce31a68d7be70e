"""The ``moderators`` group: exactly the permissions staff need to moderate in the admin.

Each installed app lists what moderation needs of it as ``moderator_permissions`` on its
AppConfig (codenames of that app), so an app added later brings its own entries and this
module knows no app by name.
"""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.db import transaction

MODERATORS = "moderators"


def moderator_permission_names() -> list[str]:
    """``app_label.codename`` of every permission moderators hold."""
    return sorted(
        f"{config.label}.{codename}"
        for config in apps.get_app_configs()
        for codename in getattr(config, "moderator_permissions", ())
    )


@transaction.atomic
def moderators_group_sync() -> tuple[Group, list[str]]:
    """Create or update the group so it holds exactly :func:`moderator_permission_names`.

    Returns the group and the names that do not exist yet (run ``migrate`` first).
    """
    group, _ = Group.objects.get_or_create(name=MODERATORS)
    wanted = moderator_permission_names()
    found = {
        f"{p.content_type.app_label}.{p.codename}": p
        for p in Permission.objects.select_related("content_type").filter(
            codename__in=[name.split(".", 1)[1] for name in wanted]
        )
    }
    group.permissions.set([found[name] for name in wanted if name in found])
    return group, [name for name in wanted if name not in found]
