from django.apps import AppConfig


class PgReplicasConfig(AppConfig):
    name = "pgreplicas"
    verbose_name = "Read replicas"
