"""A fake Hub at huggingface_hub's HTTP boundary (an httpx2 mock transport), shared by the push tests: it
answers the real client's requests like the Hub does and keeps every file a commit carries."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import yaml
from huggingface_hub.utils import _http

__all__ = ["FakeHub", "fake_hub", "hub_fixture"]


class FakeHub:
    """The few Hub endpoints an upload uses, answering like the Hub does; files land in ``self.files``."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.files: dict[str, bytes] = {}
        self.commits: list[dict] = []
        self.created: list[dict] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        url = str(request.url)
        self.requests.append((request.method, url))
        assert request.headers.get("authorization") == "Bearer hf_test_token"
        if url.endswith("/api/repos/create"):
            self.created.append(json.loads(request.content))
            return httpx2.Response(200, json={"url": "https://huggingface.co/datasets/org/agent-sft"})
        if url.endswith("/api/validate-yaml"):
            content = json.loads(request.content)["content"]
            yaml.safe_load(content.split("---")[1])  # the card's metadata must be valid YAML
            return httpx2.Response(200, json={"errors": [], "warnings": []})
        if "/preupload/" in url:
            files = json.loads(request.content)["files"]
            return httpx2.Response(
                200,
                json={"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]},
            )
        if "/commit/" in url:
            lines = [json.loads(line) for line in request.content.decode().splitlines() if line.strip()]
            self.commits.append(lines[0])
            for op in lines[1:]:
                assert op["key"] == "file", op
                value = op["value"]
                assert value["encoding"] == "base64"
                self.files[value["path"]] = base64.b64decode(value["content"])
            return httpx2.Response(
                200,
                json={
                    "commitUrl": "https://huggingface.co/datasets/org/agent-sft/commit/abc123",
                    "commitOid": "abc123",
                    "pullRequestUrl": None,
                },
            )
        return httpx2.Response(404, json={"error": f"the fake Hub does not serve {request.method} {url}"})

    def write(self, folder: Path) -> Path:
        for path, content in self.files.items():
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        return folder


@contextlib.contextmanager
def fake_hub() -> Iterator[FakeHub]:
    """Route huggingface_hub's HTTP client to a ``FakeHub`` for the duration (set ``HF_HUB_OFFLINE=0`` too)."""
    fake = FakeHub()
    _http.set_client_factory(lambda: httpx2.Client(transport=httpx2.MockTransport(fake)))
    try:
        yield fake
    finally:
        _http.set_client_factory(_http.default_client_factory)


@pytest.fixture(name="hub")
def hub_fixture(monkeypatch):
    """The fake Hub, installed as huggingface_hub's HTTP client for one test."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with fake_hub() as fake:
        yield fake
