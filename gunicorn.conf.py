"""gunicorn settings for Kit, read from the working directory (``gunicorn kit.wsgi``).

GET operations take their arguments in the query string. gunicorn's default request line
(4 KB) refuses a search query of 1,000 characters once it is percent-encoded beyond
ASCII; ``REQUEST_LINE_MAX_BYTES`` (8,190, gunicorn's largest fixed limit) carries 1,000
characters of Latin text or about 680 of CJK. A longer line is answered 414, which the
OpenAPI document lists for those operations.
"""

from kit.http import REQUEST_LINE_MAX_BYTES

limit_request_line = REQUEST_LINE_MAX_BYTES
