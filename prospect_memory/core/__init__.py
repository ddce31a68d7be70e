"""What every memory shares: encryption at rest and key rotation, embedding providers (the
local semantic model among them), their thresholds and calibration, the embedding pipeline,
vector distances, memory integrity, the model bases (embedded, flagged, events), usage
metering, settings and system checks, the admin's shared rules and the memory health page.

Nothing here knows about dossiers, notes or business memory entries, and nothing here
imports a memory: each memory hands its models and texts in, and registers what the core
serves for it (its health section).
"""
