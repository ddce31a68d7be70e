"""What both memories share: encryption at rest, embeddings, the embedding pipeline,
vector distances and usage metering.

Nothing here knows about dossiers, notes or business memory entries, and nothing here
imports an interface (MCP tools, REST views, pages, admin, tasks): each memory hands its
models and texts in.
"""
