"""Prospect notes: what the account knows about each company (SPEC 3-11)."""
