"""System checks: business memory's limits must fit the columns that store them."""

from __future__ import annotations

from django.core.checks import Error, register

from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import Entry

#: A limit (a BUSINESS_MEMORY key) and the column whose width bounds it.
_BOUNDED_BY_COLUMN = {
    "KEY_MAX_CHARS": "key",
    "SOURCE_ID_MAX_CHARS": "source_pipeline_id",
}


@register()
def check_limits_fit_the_columns(app_configs, **kwargs):
    errors = []
    for setting, column in _BOUNDED_BY_COLUMN.items():
        width = Entry._meta.get_field(column).max_length
        if getattr(business_settings, setting) > width:
            errors.append(
                Error(
                    f"BUSINESS_MEMORY['{setting}'] is {getattr(business_settings, setting)}, "
                    f"wider than the {column} column ({width} characters).",
                    hint=f"Set it to {width} or less, or widen the column in a migration.",
                    id="business_memory.E001",
                )
            )
    return errors
