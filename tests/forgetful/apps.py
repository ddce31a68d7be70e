from django.apps import AppConfig


class ForgetfulConfig(AppConfig):
    name = "tests.forgetful"
    label = "forgetful"
    default_auto_field = "django.db.models.BigAutoField"
