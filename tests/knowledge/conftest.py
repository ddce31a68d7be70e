import pytest


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run what a write schedules for after its commit (promotion), as a real commit would."""

    def write(call, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return call(*args, **kwargs)

    return write
