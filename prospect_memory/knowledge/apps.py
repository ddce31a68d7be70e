from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "prospect_memory.knowledge"
    label = "knowledge"
    verbose_name = "Knowledge search"

    def ready(self) -> None:
        from prospect_memory.knowledge import mcp_tools

        mcp_tools.register()
