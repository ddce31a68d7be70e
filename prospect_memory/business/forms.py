"""The form a business memory entry is written with on its pages: the value as JSON (the
page's script shows it as a form built from its shape), its kind and confidence, and the
version the page was opened at; and where a refusal of the store is shown on it."""

from __future__ import annotations

import json

from django import forms

from outreach.errors import KitError, ValidationFailed
from outreach.jsonbody import BadJSON, loads
from prospect_memory.business.conf import business_settings
from prospect_memory.business.errors import ValueTooLarge, VersionMismatch
from prospect_memory.business.models import KEY_HINT, Category
from prospect_memory.business.records import EntryView


class RepeatedName(ValueError):
    pass


def _names_once(pairs: list[tuple[str, object]]) -> dict:
    seen = set()
    for name, _ in pairs:
        if name in seen:
            raise RepeatedName(
                f"The name {name!r} appears twice in one object (JSON would keep only the "
                "last); keep one."
            )
        seen.add(name)
    return dict(pairs)


class EntryForm(forms.Form):
    key = forms.CharField(
        max_length=business_settings.KEY_MAX_CHARS, required=False, help_text=KEY_HINT
    )
    value = forms.CharField(
        widget=forms.Textarea(
            attrs={
                "rows": 14,
                "spellcheck": "false",
                "data-value-editor": "",
                "aria-label": "Value",
            }
        )
    )
    category = forms.ChoiceField(choices=Category.choices)
    confidence = forms.IntegerField(min_value=0, max_value=100)
    expected_version = forms.IntegerField(
        widget=forms.HiddenInput, required=False, min_value=1, max_value=2**31 - 1
    )

    def clean_value(self):
        try:
            json.loads(self.cleaned_data["value"], object_pairs_hook=_names_once)
        except ValueError as error:
            if isinstance(error, RepeatedName):
                raise forms.ValidationError(str(error)) from None
        try:
            value = loads(self.cleaned_data["value"])
        except BadJSON as error:
            raise forms.ValidationError(f"This is not valid JSON: {error}.") from None
        if value is None:
            raise forms.ValidationError("A value may be any JSON but null.")
        return value

    def clean(self):
        # The version the page was opened at travels hidden: a page that sends a version no
        # entry can have was not one of ours, and the member is told so where they look.
        if self.errors.pop("expected_version", None):
            self.add_error(None, "This page sent a version no entry has; open the entry again.")
        return super().clean()


def form_errors(form: EntryForm, error: KitError, *, creating: bool) -> None:
    """Put a service's refusal beside the field it is about: a problem inside the value
    (``value.plans[0].name``) also beside that part of the value's form."""
    if isinstance(error, ValueTooLarge):
        form.add_error("value", error.message)
    elif isinstance(error, VersionMismatch) and creating:
        form.add_error("key", "An entry with this key exists already; open it to change it.")
    elif isinstance(error, VersionMismatch):
        form.add_error(None, "Someone changed this entry while you were editing it.")
    elif isinstance(error, ValidationFailed) and error.details.get("fields"):
        inside: dict[str, list[str]] = {}
        for field, problems in error.details["fields"].items():
            in_value = field == "value" or field.startswith(("value.", "value["))
            target = "value" if in_value else field if field in form.fields else None
            for problem in problems:
                form.add_error(target, problem)
            if in_value:
                inside.setdefault(field, []).extend(problems)
        form.fields["value"].widget.attrs["data-errors"] = json.dumps(inside)
    else:
        form.add_error(None, error.message)


def editable_json(value) -> str:
    """A value as the edit form starts from it: indented, its names in their stored order
    (saving the form unchanged must not reorder what agents read)."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def unchanged(form: EntryForm, current: EntryView) -> bool:
    data = form.cleaned_data
    return (data["value"], data["category"], data["confidence"]) == (
        current.value,
        current.category,
        current.confidence,
    )
