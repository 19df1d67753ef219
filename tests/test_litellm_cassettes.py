"""Our LiteLLM-proxy error-sequence recordings: each protocol has one, it holds the statuses and
Retry-After headers the replays rely on, and the replay check fails on a recording without them."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from support import litellm_proxy as P
from support.cassettes import dump_cassette, load_cassette


@pytest.mark.parametrize("protocol", P.PROTOCOLS)
def test_every_protocol_has_its_recorded_statuses_and_retry_after(protocol: str) -> None:
    interactions = load_cassette(P.error_cassette(protocol))
    assert [it.status for it in interactions] == P.STATUSES
    retry_after = [dict(it.response_headers).get("retry-after") for it in interactions]
    cooldown = P.COOLDOWN_RETRY_AFTER_S[protocol]
    assert retry_after == [None, None if cooldown is None else str(cooldown), None, "1", None, None]
    assert all(it.uri.startswith(P.BASE_URL + "/v1/") for it in interactions)


def _replace_response(protocol: str, index: int, tmp_path: Path, **fields: Any) -> None:
    interactions = list(load_cassette(P.error_cassette(protocol)))
    interactions[index] = dataclasses.replace(interactions[index], **fields)
    target = tmp_path / protocol / "error_sequence.yaml"
    target.parent.mkdir(parents=True)
    target.write_text(dump_cassette(interactions))


def test_the_check_fails_when_the_429_loses_its_retry_after(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _replace_response("responses", 1, tmp_path, response_headers=())
    monkeypatch.setattr(P, "CASSETTES", tmp_path)
    with pytest.raises(AssertionError):
        P.litellm_check("responses").values[0]()


def test_the_check_fails_when_a_failure_is_recorded_as_a_success(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    success = load_cassette(P.error_cassette("chat"))[2]
    _replace_response("chat", 3, tmp_path, status=200, response_headers=(),
                      response_body=success.response_body)
    monkeypatch.setattr(P, "CASSETTES", tmp_path)
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        P.litellm_check("chat").values[0]()
