"""The model once per machine: what a process loads of the model is shared with the
processes it forks, and each makes its own onnxruntime session (``per_process.py``).

A session's thread pools do not survive a fork, so a session is never handed on: gunicorn's
master (``preload_app``) loads the files, the tokenizer and the weights and never a session;
a Celery worker's pool, or any process that forks after embedding, gives each child its own.
"""

import json
import os

import numpy
import pytest

from prospect_memory.core.embeddings import SemanticProvider, local_model
from prospect_memory.core.embeddings.per_process import PerProcess

NOTE = "Nordlicht Software is hiring eight account executives in Munich for new business."


def in_a_child(work) -> object:
    """``work()``'s answer (JSON) from a process forked from this one."""
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer, and leave without running the parent's exit handlers
        status = 1
        try:
            os.close(reading)
            with os.fdopen(writing, "w") as out:
                json.dump(work(), out)
            status = 0
        finally:
            os._exit(status)
    os.close(writing)
    with os.fdopen(reading) as answer:
        text = answer.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, text
    return json.loads(text)


def test_each_process_makes_its_own_and_keeps_what_it_inherited():
    made = []
    per_process = PerProcess(lambda: made.append(os.getpid()) or object())
    mine = per_process.get()
    assert per_process.get() is mine
    assert per_process.made_here

    def child():
        inherited = per_process.made_here
        own = per_process.get()
        return {
            "inherited_made_here": inherited,
            "new": own is not mine,
            "again": per_process.get() is own,
            "kept": per_process._inherited == [mine],
            "made_by": made[-1] == os.getpid(),
        }

    assert in_a_child(child) == {
        "inherited_made_here": False,
        "new": True,
        "again": True,
        "kept": True,
        "made_by": True,
    }
    assert per_process.get() is mine  # the parent's is its own still


@pytest.mark.slow  # the real model: about a second
def test_a_process_forked_after_the_model_is_preloaded_embeds_with_its_own_session():
    """What gunicorn's master does before it forks: the files checked, the tokenizer and
    the weights loaded, no session. A child embeds with a session of its own over the
    parent's weights (the same buffer, not a copy), and gets the vector the parent gets."""
    provider = SemanticProvider(model="multilingual-e5-small")
    local_model._runners.clear()  # loaded here, now, as a master would
    provider.preload()
    runner = local_model.runner(provider.manifest, provider.threads)
    assert not runner._session.made_here  # no session before the fork
    weights_at = runner.encoder.ctypes.data

    def child():
        vector = provider.embed_documents([NOTE])[0]
        shared = local_model.runner(provider.manifest, provider.threads)
        return {
            "vector": vector,
            "same_runner": shared is runner,
            "same_weights": shared.encoder.ctypes.data == weights_at,
            "own_session": shared._session.made_here,
        }

    answer = in_a_child(child)
    assert answer["same_runner"]
    assert answer["same_weights"]
    assert answer["own_session"]
    assert not runner._session.made_here  # the child's session stayed in the child
    assert numpy.allclose(answer["vector"], provider.embed_documents([NOTE])[0], atol=1e-6)


@pytest.mark.slow  # the real model: about a second
def test_a_process_that_embedded_before_it_forked_gives_the_child_a_session_of_its_own():
    """A Celery worker's pool, or any process that forks after embedding: the child does
    not touch the parent's session (whose threads it does not have), it makes its own."""
    provider = SemanticProvider(model="multilingual-e5-small", threads=2)
    expected = provider.embed_documents([NOTE])[0]
    runner = local_model.runner(provider.manifest, provider.threads)
    parents = runner.session

    def child():
        vector = provider.embed_documents([NOTE])[0]
        return {"vector": vector, "another": runner.session is not parents}

    answer = in_a_child(child)
    assert answer["another"]
    assert numpy.allclose(answer["vector"], expected, atol=1e-6)
    assert runner.session is parents


@pytest.mark.slow  # the real model: about a second
def test_the_prepacked_session_gives_the_same_vectors():
    """``prepack`` lays the matrices out for this CPU's kernels, per session: faster, not
    otherwise different."""
    shared = SemanticProvider(model="multilingual-e5-small")
    prepacked = SemanticProvider(model="multilingual-e5-small", prepack=True)
    texts = [NOTE, "Acme a ouvert un bureau à Lisbonne.", "Zatrudniają 12 osób."]
    assert numpy.allclose(
        shared.embed_documents(texts), prepacked.embed_documents(texts), atol=1e-6
    )
    assert local_model.runner(shared.manifest, 1) is not local_model.runner(
        prepacked.manifest, 1, prepack=True
    )
    with pytest.raises(ValueError, match="prepack"):
        SemanticProvider(prepack="yes")


def test_a_process_forked_after_its_parent_embedded_within_a_budget_embeds_in_time():
    """The budget's threads are the parent's: a child forked after the parent embedded
    starts threads of its own, rather than queue its calls for threads it does not have
    (every write would then wait out its budget and store a pending embedding)."""
    from prospect_memory.core.embeddings import budget

    assert budget._pool.submit(os.getpid).result(timeout=5) == os.getpid()  # idle threads
    held = local_model._lock
    held.acquire()  # as if another thread of the parent were loading a runner
    try:

        def child():
            return {
                "pid": budget._pool.submit(os.getpid).result(timeout=5) == os.getpid(),
                "lock": local_model._lock.acquire(timeout=5) and local_model._lock is not held,
            }

        assert in_a_child(child) == {"pid": True, "lock": True}
    finally:
        held.release()
