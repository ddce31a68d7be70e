"""The OAuth scopes of Kit's agent surface, named and described once.

Every tool, REST operation, token and document takes its scope names and descriptions from
here (the OAuth settings, the OpenAPI security scheme, the consent page, ``issue_token``).
This module imports nothing from Django, so the settings can read it.
"""

READ = "outreach_read"
WRITE = "outreach_write"

#: In plain words, everything a scope allows: the consent page lists these (SPEC 18).
DESCRIPTIONS = {
    READ: (
        "Read what your account knows: the research saved about companies and your "
        "campaigns' contact with them, the account's business memory and your own private "
        "context, search across all of it, and Kit's writing guides; if you administer "
        "Outreach, export all of it"
    ),
    WRITE: (
        "Save, merge, delete and restore research about companies, and store, delete and "
        "restore business memory: your own private context, and the account's shared "
        "memory if you administer Outreach"
    ),
}

#: Every scope, in the order tokens and challenges list them.
ALL = tuple(DESCRIPTIONS)
