"""A table that keeps a company's domain and a member's name, and that no erasure knows
about: the erasure scan must find what it keeps (tests/lifecycle/test_scan.py)."""
