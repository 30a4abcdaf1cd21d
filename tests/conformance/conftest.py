"""pytest set-up for huggingface_hub's own tests run against `khub serve` (the `conformance` ctest label).

The sdist of huggingface_hub ships its tests without their conftest.py; scripts/setup copies this file in
its place. It re-points the tests at the server tests/conformance/run.py started, and provides the fixtures
and markers the selected tests use. It changes nothing the tests check: only where they connect.

  * `testing_constants.ENDPOINT_STAGING` becomes the server's URL (KHUB_CONFORMANCE_ENDPOINT); the users and
    tokens the tests name (USER / TOKEN, OTHER_USER / OTHER_TOKEN, ENTERPRISE_*) are kept, and run.py gives
    them to the server's config, so no test text changes.
  * Every test gets its own HF_HOME, cache and token file (as huggingface_hub's CI does).
  * `@pytest.mark.production` tests need huggingface.co: skipped (they are deselected by run.py anyway).
  * `@pytest.mark.xet` force-enables Xet; `@pytest.mark.no_xet` skips when hf_xet is installed;
    `@pytest.mark.git_lfs` skips unless RUN_GIT_LFS_TESTS=1.
"""

import os
import tempfile
from typing import Protocol

import pytest

from huggingface_hub import HfApi, RepoUrl, constants
from huggingface_hub.utils._runtime import is_package_available

from . import testing_constants

_ENDPOINT = os.environ.get("KHUB_CONFORMANCE_ENDPOINT")
if not _ENDPOINT:
    raise RuntimeError("KHUB_CONFORMANCE_ENDPOINT is not set: run the suite through tests/conformance/run.py")
testing_constants.ENDPOINT_STAGING = _ENDPOINT

from .testing_utils import repo_name  # noqa: E402  (after the endpoint is set)


@pytest.fixture(autouse=True)
def _khub_isolated_home(monkeypatch: pytest.MonkeyPatch):
    with tempfile.TemporaryDirectory(prefix="khub-conf-home-") as home:
        for name, sub in [
            ("HF_HOME", ""),
            ("HF_HUB_CACHE", "hub"),
            ("HUGGINGFACE_HUB_CACHE", "hub"),
            ("HF_XET_CACHE", "xet"),
            ("HF_ASSETS_CACHE", "assets"),
            ("HF_TOKEN_PATH", "token"),
            ("HF_STORED_TOKENS_PATH", "stored_tokens"),
        ]:
            if hasattr(constants, name):
                monkeypatch.setattr(constants, name, os.path.join(home, sub) if sub else home)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_EXPERIMENTAL_WARNING", True, raising=False)
        yield


@pytest.fixture(autouse=True)
def _khub_markers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    node = request.node
    if node.get_closest_marker("production") is not None:
        pytest.skip("needs huggingface.co (production marker)")
    if node.get_closest_marker("git_lfs") is not None and os.environ.get("RUN_GIT_LFS_TESTS") != "1":
        pytest.skip("needs git-lfs (RUN_GIT_LFS_TESTS=1)")
    if node.get_closest_marker("xet") is not None:
        if not is_package_available("hf_xet"):
            pytest.skip("needs hf_xet")
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
        monkeypatch.delenv("HF_HUB_DISABLE_XET", raising=False)
    if node.get_closest_marker("no_xet") is not None and is_package_available("hf_xet"):
        pytest.skip("runs only without hf_xet")


@pytest.fixture(scope="session")
def api() -> HfApi:
    return HfApi(endpoint=testing_constants.ENDPOINT_STAGING, token=testing_constants.TOKEN)


class RepoFactory(Protocol):
    def __call__(self, repo_type: str = "model", **kwargs) -> RepoUrl: ...


@pytest.fixture
def repo_factory(api: HfApi):
    """Creates repos in the token user's namespace; deletes them when the test ends."""
    made = []

    def make(repo_type: str = "model", **kwargs) -> RepoUrl:
        if repo_type == "space":
            kwargs.setdefault("space_sdk", "gradio")
        repo_id = kwargs.pop("repo_id", None) or repo_name(prefix=repo_type)
        url = api.create_repo(repo_id=repo_id, repo_type=repo_type, **kwargs)
        made.append((url.repo_id, repo_type))
        return url

    yield make
    for repo_id, repo_type in made:
        try:
            api.delete_repo(repo_id=repo_id, repo_type=repo_type)
        except Exception:
            pass


@pytest.fixture
def fx_cache_dir(request: pytest.FixtureRequest, tmp_path):
    request.cls.cache_dir = tmp_path.resolve()
    yield


def _deselect_rules():
    """tests/conformance/deselected.txt: `node-id-prefix  # reason` or `marker:NAME  # reason` lines."""
    path = os.environ.get("KHUB_CONFORMANCE_DESELECT")
    rules = []
    if path:
        for line in open(path, encoding="utf-8"):
            rule = line.split("#", 1)[0].strip()
            if rule:
                rules.append(rule)
    return rules


def pytest_collection_modifyitems(config, items):
    rules = _deselect_rules()
    keep, drop = [], []
    for item in items:
        hit = any(
            (r.startswith("marker:") and item.get_closest_marker(r[len("marker:"):]) is not None)
            or item.nodeid == r
            or item.nodeid.startswith(r + "::")
            or item.nodeid.startswith(r + "[")
            for r in rules
        )
        (drop if hit else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    out = os.environ.get("KHUB_CONFORMANCE_DESELECTED_OUT")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.writelines(item.nodeid + "\n" for item in drop)


def pytest_configure(config):
    # Markers of plugins the selected tests name but do not need here (pytest-vcr cassettes are for inference).
    config.addinivalue_line("markers", "vcr: recorded HTTP cassette (pytest-vcr); unused here")
