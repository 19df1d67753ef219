"""zigai._owner.Owner: the shared ownership pattern (close/deinit, context manager, use after close)."""

from __future__ import annotations

import pytest

from zigai._owner import Owner
from zigai.agent.deferred import OwnedResumeDecisions, PausedRun
from zigai.agent.errors import ResultClosed
from zigai.agent.result import Result, TypedResult
from zigai.codecs import pydantic_ai as codec
from zigai.history import HistoryClosed
from zigai.history import Owned as HistoryOwned


class Box(Owner):
    __slots__ = ("_items", "released")

    def __init__(self, items: list[int]) -> None:
        self._items = items
        self.released = 0
        super().__init__()

    def _release(self) -> None:
        self.released += 1
        self._items = []

    @property
    def items(self) -> list[int]:
        self._check()
        return self._items


class Named(Owner):
    __slots__ = ()
    _closed_error = KeyError


class Custom(Owner):
    __slots__ = ()

    def _use_after_close(self) -> Exception:
        return RuntimeError("custom words")


def test_an_open_owner_serves_its_graph_and_reports_not_closed() -> None:
    box = Box([1, 2])
    assert box.closed is False
    assert box.items == [1, 2]


def test_close_releases_once_and_every_later_use_raises() -> None:
    box = Box([1])
    box.close()
    box.close()  # closing twice is harmless
    box.deinit()
    assert box.closed is True
    assert box.released == 1
    with pytest.raises(ValueError, match=r"^Box was used after close\(\)$"):
        box.items  # noqa: B018


def test_deinit_is_close() -> None:
    box = Box([1])
    box.deinit()
    assert box.closed and box.released == 1
    assert Box.deinit is Box.close


def test_with_returns_the_owner_and_closes_it_even_when_the_block_raises() -> None:
    with Box([3]) as box:
        assert box.items == [3]
    assert box.closed
    other = Box([4])
    with pytest.raises(ZeroDivisionError), other:
        1 / 0  # noqa: B018
    assert other.closed and other.released == 1


def test_entering_a_closed_owner_raises() -> None:
    box = Box([])
    box.close()
    with pytest.raises(ValueError, match="used after close"):
        box.__enter__()


def test_the_error_class_and_message_hooks() -> None:
    named = Named()
    named.close()
    with pytest.raises(KeyError, match="Named was used after close"):
        named._check()
    custom = Custom()
    custom.close()
    with pytest.raises(RuntimeError, match=r"^custom words$"):
        custom._check()


def test_owners_hold_no_instance_dict() -> None:
    with pytest.raises(AttributeError):
        Box([]).unexpected = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: Result("x", (), 0, _usage()), ResultClosed, "Result was used after close()"),
        (lambda: TypedResult(1, 1, (), 0, _usage()), ResultClosed, "TypedResult was used after close()"),
        (lambda: PausedRun((), "{}", _usage(), ()), ResultClosed, "PausedRun was used after close()"),
        (lambda: OwnedResumeDecisions(()), ResultClosed, "OwnedResumeDecisions was used after close()"),
        (lambda: HistoryOwned(()), HistoryClosed, "history.Owned was used after close()"),
        (lambda: codec.Owned([]), ValueError, "codecs.pydantic_ai.Owned used after close()"),
    ],
)
def test_every_owner_in_zigai_uses_the_base_and_keeps_its_named_error(
    make: object, error: type[Exception], message: str
) -> None:
    owner = make()  # type: ignore[operator]
    assert isinstance(owner, Owner)
    assert owner.closed is False
    owner.close()
    assert owner.closed is True
    with pytest.raises(error) as info:
        owner._check()
    assert str(info.value).strip("'") == message


def _usage():  # type: ignore[no-untyped-def]
    from zigai.usage import RunUsage

    return RunUsage()
