"""The four entries every account's business memory starts from (SPEC 12): the ideal
customer profile, the deal scoring rubric, the brand voice and the product catalog. An
account without them is offered these shapes to fill in, as forms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prospect_memory.business.models import Category


@dataclass(frozen=True)
class Starter:
    key: str
    title: str
    about: str
    category: str
    value: Any


STARTERS = (
    Starter(
        "icp_definition",
        "Ideal customer profile",
        "Who the account sells to: industries, size, places, buying signals, who not to contact.",
        Category.FACT,
        {
            "industry": [""],
            "headcount": "",
            "geography": [""],
            "signals": [""],
            "disqualifiers": [""],
        },
    ),
    Starter(
        "deal_score_rubric",
        "Deal scoring rubric",
        "How agents score a prospect: the criteria, their weights, and what a score has meant.",
        Category.FACT,
        {
            "criteria": ["fit", "timing", "budget", "champion"],
            "weights": [0.4, 0.2, 0.2, 0.2],
            "calibration": "",
        },
    ),
    Starter(
        "brand_voice",
        "Brand voice",
        "How messages sound: tone, length, phrases never to use, the sign-off.",
        Category.PREFERENCE,
        {"tone": "", "length": "", "banned_phrases": [""], "sign_off": ""},
    ),
    Starter(
        "product_catalog",
        "Product catalog",
        "What the account sells: plans with prices and seats, and what sets it apart.",
        Category.FACT,
        {
            "plans": [{"name": "", "price_eur_month": 0, "seats": 1}],
            "differentiators": [""],
        },
    ),
)

BY_KEY = {starter.key: starter for starter in STARTERS}
