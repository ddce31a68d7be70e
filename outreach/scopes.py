"""The OAuth scopes of Kit's agent surface, named and described once.

Every tool, REST operation, token and document takes its scope names and descriptions from
here (the OAuth settings, the OpenAPI security scheme, the consent page, ``issue_token``).
This module imports nothing from Django, so the settings can read it.
"""

READ = "outreach_read"
WRITE = "outreach_write"

DESCRIPTIONS = {
    READ: "Read prospect research, relationships and writing guides",
    WRITE: "Save and compact prospect research",
}

#: Every scope, in the order tokens and challenges list them.
ALL = tuple(DESCRIPTIONS)
