"""zigai.messages.media: one structural walk finds every media source the model can carry.

The completeness test derives, from the field types of every request part, response part and
user-content class, which classes can hold a media source, and requires exactly those in
``MEDIA_PARTS``: a new part kind that can carry media fails here until the walker knows it.
The reflective walk it replaced is kept below as the oracle for a history that uses every
media-bearing class.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

import pytest

import zigai.messages as messages_module
from zigai.messages import (
    MEDIA_SOURCE_TYPES,
    REQUEST_PART_TYPES,
    RESPONSE_PART_TYPES,
    USER_CONTENT_TYPES,
    AudioContent,
    BytesSource,
    DocumentContent,
    FilePart,
    ImageContent,
    InvalidMessagePart,
    RequestMessage,
    ResponseMessage,
    SpeechPart,
    SpeechPromptPart,
    TextContent,
    TextPart,
    ToolReturnPart,
    UploadedFile,
    UploadedFileContent,
    UrlSource,
    UserPromptPart,
    VideoContent,
    request_parts,
    response_parts,
)
from zigai.messages import content as content_module
from zigai.messages.media import MEDIA_PARTS, iter_media_sources, media_urls_of

CLASSES = tuple(dict.fromkeys((*REQUEST_PART_TYPES, *RESPONSE_PART_TYPES, *USER_CONTENT_TYPES)))
NAMESPACE = {**vars(messages_module), **vars(content_module), **vars(request_parts), **vars(response_parts)}


def _types_in(hint: Any) -> list[Any]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType, tuple, typing.Literal):
        return [t for arg in typing.get_args(hint) if arg is not Ellipsis for t in _types_in(arg)]
    return [hint]


def _can_carry_media(cls: type, seen: frozenset[type] = frozenset()) -> bool:
    if cls in MEDIA_SOURCE_TYPES:
        return True
    if not dataclasses.is_dataclass(cls) or cls in seen:
        return False
    hints = typing.get_type_hints(cls, NAMESPACE)
    return any(
        isinstance(t, type) and _can_carry_media(t, seen | {cls})
        for name in (f.name for f in dataclasses.fields(cls)) for t in _types_in(hints[name])
    )


def test_every_class_whose_fields_can_hold_media_is_walked_and_no_other() -> None:
    carrying = {cls for cls in CLASSES if _can_carry_media(cls)}
    assert carrying == set(MEDIA_PARTS)
    assert {UserPromptPart, SpeechPromptPart, FilePart, SpeechPart, ImageContent} <= carrying


@pytest.mark.parametrize("part", [ToolReturnPart, response_parts.NativeToolReturnPart])
def test_tool_return_content_is_json_so_it_cannot_hide_a_media_source(part: type) -> None:
    hints = typing.get_type_hints(part, NAMESPACE)
    assert hints["content"] is Any  # so the field-type derivation above cannot see into it
    fields = {"tool_name": "t", "tool_call_id": "c", "content": {"image": UrlSource("https://x.example/a.png")}}
    if part is not ToolReturnPart:
        fields["provider"] = response_parts.ProviderPart("p")
    with pytest.raises(InvalidMessagePart):
        part(**fields)


def _reflective_urls(value: Any, found: list[str], depth: int = 0) -> None:
    """The walk ``media_urls`` used before (every dataclass field, by reflection)."""
    if isinstance(value, UrlSource):
        found.append(value.url)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _reflective_urls(item, found, depth)
    elif depth < 6 and hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            item = getattr(value, name, None)
            if item is not None and not isinstance(item, (str, bytes, int, float, Mapping)):
                _reflective_urls(item, found, depth + 1)


def _url(name: str) -> UrlSource:
    return UrlSource(f"https://media.example/{name}")


def _history() -> tuple[Any, ...]:
    return (
        RequestMessage((UserPromptPart((
            TextContent("look"), ImageContent(_url("image")), AudioContent(_url("audio")),
            VideoContent(_url("video")), DocumentContent(_url("doc")),
            ImageContent(BytesSource(b"\x89PNG", "image/png")),
            UploadedFileContent(UploadedFile("openai", "file-1")),
        )), SpeechPromptPart(AudioContent(_url("speech-prompt"))))),
        ResponseMessage((TextPart("ok"), FilePart(_url("file")), SpeechPart(AudioContent(_url("speech"))),
                         SpeechPart(transcript="no audio"))),
        RequestMessage((UserPromptPart("plain"), ToolReturnPart("t", "c", {"url": "https://not.media/"}),
                        UserPromptPart((ImageContent(_url("image")),)))),  # a repeat
    )


def test_the_walk_finds_exactly_what_the_reflective_walk_found() -> None:
    history = _history()
    expected: list[str] = []
    _reflective_urls(history, expected)
    assert media_urls_of(history) == tuple(dict.fromkeys(expected))
    assert len(media_urls_of(history)) == 7
    kinds = [type(s).__name__ for s in iter_media_sources(history)]
    assert kinds.count("UploadedFile") == 1 and kinds.count("BytesSource") == 1


def test_a_subclass_of_a_media_bearing_class_is_walked_too() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class LabelledImage(ImageContent):
        label: str = ""

    @dataclasses.dataclass(frozen=True, slots=True)
    class TimedFile(FilePart):
        seconds: int = 0

    history = (RequestMessage((UserPromptPart((LabelledImage(_url("sub-image")),)),)),
               ResponseMessage((TimedFile(_url("sub-file")),)))
    assert media_urls_of(history) == ("https://media.example/sub-image", "https://media.example/sub-file")
    assert media_urls_of(history) == ("https://media.example/sub-image", "https://media.example/sub-file")
