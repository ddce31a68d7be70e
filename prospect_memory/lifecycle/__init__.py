"""The data lifecycle of both memories (SPEC 16): export and import, erasing a company, a
member who leaves and an account after its retention, and the retention of events,
evictions and archived notes. It reads and erases both memories, so it stands beside
knowledge search, above them."""
