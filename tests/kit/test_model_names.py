"""What the admin calls each kind of row, in the singular and the plural, is English."""

import re

from django.apps import apps


def test_every_plural_is_spelled():
    wrong = [
        f"{model._meta.label}: {model._meta.verbose_name_plural}"
        for model in apps.get_models()
        if re.search(r"[^aeiou]ys$|[sxz]s$|(ch|sh)s$", str(model._meta.verbose_name_plural))
    ]
    assert not wrong
