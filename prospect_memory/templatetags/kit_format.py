from django import template

register = template.Library()


@register.filter
def percent(value) -> str:
    """0.4267 -> '43%'; no data -> an en dash."""
    if value is None:
        return "\u2013"
    return f"{round(value * 100)}%"
