"""Limits of the HTTP server in front of Kit, read by ``gunicorn.conf.py`` and by the docs
Kit serves (so both say the same number). Imports nothing: gunicorn reads it at start-up."""

#: The longest request line (method, address with its query string, protocol) gunicorn
#: takes: its largest fixed limit (0 would mean none at all with its Python parser).
REQUEST_LINE_MAX_BYTES = 8190
