"""Fixtures: every API with a device here (cpu; lavapipe and PoCL in CI)."""
import numpy as np
import pytest

import attnvk


def _apis():
    seen = []
    for d in attnvk.devices():
        if d["api"] not in seen:
            seen.append(d["api"])
    return seen


APIS = _apis()


@pytest.fixture(params=APIS)
def api(request):
    return request.param


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def normal(rng, *shape):
    return rng.standard_normal(shape, dtype=np.float32)
