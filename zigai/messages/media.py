"""One structural walk over messages for the media a provider may be asked to fetch or use.

Job: yield every media source (``UrlSource``, ``BytesSource``, ``ProviderFileSource``,
``UploadedFile``) that the message model lets a part carry, without reflection: a table,
:data:`MEDIA_PARTS`, names each part or content class that can hold media and how to reach
it.  The provider boundary (``zigai.providers._wire.media_urls``) and the agent's request
checks (``zigai.agent._inputs``) both use it, so they cannot disagree about where a URL sits.

Invariants:

* complete: every class in ``REQUEST_PART_TYPES``, ``RESPONSE_PART_TYPES`` and
  ``USER_CONTENT_TYPES`` whose fields can hold a media source is in :data:`MEDIA_PARTS`
  (``tests/test_messages_media.py`` derives that from the field types, so a new media-bearing
  part kind fails the test until it is added here);
* tool-return content is frozen JSON and cannot hold a media source, so it is not walked;
* cost is one ``type()`` lookup per part and per rich user-content item.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from zigai.messages.content import (
    AudioContent,
    DocumentContent,
    ImageContent,
    UploadedFileContent,
    UrlSource,
    VideoContent,
)
from zigai.messages.request_parts import SpeechPromptPart, UserPromptPart
from zigai.messages.response_parts import FilePart, SpeechPart

__all__ = ["MEDIA_PARTS", "iter_media_sources", "media_urls_of"]


def _source(item: Any) -> Iterator[Any]:
    yield item.source


def _reach(table: dict[type, Any], cache: dict[type, Any], kind: type) -> Any:
    """The table entry for ``kind`` or for its nearest listed base class (cached per type),
    so a subclass of a media-bearing class is walked too; None when it carries no media."""
    try:
        return cache[kind]
    except KeyError:
        found = next((reach for base, reach in table.items() if issubclass(kind, base)), None)
        cache[kind] = found
        return found


def _user_prompt(part: UserPromptPart) -> Iterator[Any]:
    content = part.content
    if isinstance(content, str):
        return
    for item in content:
        reach = _reach(_CONTENT, _content_cache, type(item))
        if reach is not None:
            yield from reach(item)


def _speech_prompt(part: SpeechPromptPart) -> Iterator[Any]:
    yield part.audio.source


def _speech(part: SpeechPart) -> Iterator[Any]:
    if part.audio is not None:
        yield part.audio.source


def _uploaded(item: UploadedFileContent) -> Iterator[Any]:
    yield item.file


_CONTENT: dict[type, Callable[[Any], Iterator[Any]]] = {
    ImageContent: _source, AudioContent: _source, VideoContent: _source,
    DocumentContent: _source, UploadedFileContent: _uploaded,
}

#: Every message part or user-content class that can carry media, and how to reach it.
MEDIA_PARTS: dict[type, Callable[[Any], Iterator[Any]]] = {
    UserPromptPart: _user_prompt, SpeechPromptPart: _speech_prompt,
    FilePart: _source, SpeechPart: _speech, **_CONTENT,
}
_content_cache: dict[type, Any] = {}
_part_cache: dict[type, Any] = {}


def iter_media_sources(messages: Iterable[Any]) -> Iterator[Any]:
    """Every media source in ``messages`` (request and response parts), in message order."""
    table, cache = MEDIA_PARTS, _part_cache
    for message in messages:
        for part in message.parts:
            kind = type(part)
            reach = cache[kind] if kind in cache else _reach(table, cache, kind)
            if reach is not None:
                yield from reach(part)


def media_urls_of(messages: Iterable[Any]) -> tuple[str, ...]:
    """The distinct ``UrlSource`` URLs in ``messages``, first occurrence first."""
    found: dict[str, None] = {}
    for source in iter_media_sources(messages):
        if isinstance(source, UrlSource):
            found[source.url] = None
    return tuple(found)
