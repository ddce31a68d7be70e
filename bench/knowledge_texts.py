"""What the knowledge search benchmark writes and asks: company notes and questions, as
sentences for a semantic model or as made-up words for the hashing provider."""

from __future__ import annotations

import random

from bench.memory_bench import FACTS

QUESTIONS = [
    "which companies are hiring engineers for their data platform",
    "who raised a Series B round",
    "companies that moved their headquarters",
    "self-serve plan priced per seat",
    "new VP of Sales from a competitor",
    "companies running Django and PostgreSQL",
    "partnership with a logistics provider",
    "opened a subsidiary in Warsaw",
    "European fund led the round",
    "larger office in Lyon",
]


def _vocabulary(size: int = 5000) -> list[str]:
    """Made-up words, so that notes differ as real findings do (a handful of templates
    would make thousands of notes equally near any question, and "the 10 nearest" a lottery
    for any index)."""
    rng = random.Random(5)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "qua", "bri", "dro"]
    return sorted({"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(size)})


VOCABULARY = _vocabulary()


ROLES = [
    "account executives",
    "data engineers",
    "nurses",
    "warehouse operators",
    "SDRs",
    "a CFO",
    "a head of security",
    "backend engineers",
    "field technicians",
    "a VP Sales",
]
PLACES = [
    "Berlin",
    "Lisbon",
    "Warsaw",
    "Lyon",
    "Austin",
    "Rotterdam",
    "Madrid",
    "Dublin",
    "Toronto",
    "Singapore",
    "the DACH region",
    "the Nordics",
]
THINGS = [
    "Salesforce",
    "HubSpot",
    "Snowflake",
    "AWS",
    "Azure",
    "SAP",
    "Oracle",
    "Shopify",
    "Zendesk",
    "Workday",
    "a home-grown CRM",
    "Kubernetes",
]
EVENTS = [
    "raised a Series {l} of {n}M led by {investor}",
    "is hiring {n} {role} in {place}",
    "moved its data warehouse from {thing} to {other}",
    "opened an office in {place} with {n} people",
    "signed {investor} as a reseller in {place}",
    "cut {n} jobs in {place} after a weak quarter",
    "passed its ISO 27001 audit and lists {thing} as a subprocessor",
    "raised prices of its team plan by {n} percent",
    "is piloting {thing} for its sales team in {place}",
    "named {role} who joined from {investor}",
    "acquired a {n}-person startup in {place}",
    "launched a self-serve plan on {thing} Marketplace",
    "is building a factory in {place} for {n} million euros",
    "won a public tender in {place} worth {n} million",
    "reported {n} percent revenue growth, driven by {place}",
]
INVESTORS = [
    "Northgate Ventures",
    "Index",
    "Balderton",
    "a European fund",
    "Accel",
    "a competitor",
    "Flexport",
    "Google",
    "a family office",
    "Point Nine",
]


def _sentence(rng: random.Random) -> str:
    return rng.choice(EVENTS).format(
        l=rng.choice("ABCD"),
        n=rng.randint(2, 400),
        investor=rng.choice(INVESTORS),
        role=rng.choice(ROLES),
        place=rng.choice(PLACES),
        thing=rng.choice(THINGS),
        other=rng.choice(THINGS),
    )


#: Set from --provider: sentences for a semantic model, made-up words for hashing.
SENTENCES = True


def body_for(rng: random.Random, company: str) -> str:
    if SENTENCES:
        return f"{company} {_sentence(rng)}. It also {_sentence(rng)}."
    fact = rng.choice(FACTS).format(n=rng.randint(2, 400))
    return f"{company} {fact}: " + " ".join(rng.choices(VOCABULARY, k=14)) + "."


def question_for(rng: random.Random) -> str:
    if SENTENCES:
        return f"Which companies {_sentence(rng).replace(' its ', ' their ')}?"
    return f"{rng.choice(QUESTIONS)} " + " ".join(rng.choices(VOCABULARY, k=4))
