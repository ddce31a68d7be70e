"""Kit's MCP server: transport view -> JSON-RPC protocol -> tool registry."""
