"""gunicorn settings for Kit, read from the working directory (``gunicorn kit.wsgi``).

GET operations take their arguments in the query string: a search query of 1,000
characters of any script is up to 12 KB percent-encoded, past gunicorn's default request
line of 4 KB (and past its largest fixed limit, 8 KB). 0 lifts the fixed limit to
gunicorn's own ceiling of 1 MB; Django still refuses anything outside an operation's
schema. Put a proxy with its own limits in front, as for any gunicorn.
"""

limit_request_line = 0
