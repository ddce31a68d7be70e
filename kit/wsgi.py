import os

from django.core.wsgi import get_wsgi_application

from kit import tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kit.settings")

tracing.configure()
application = get_wsgi_application()
