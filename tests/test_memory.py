"""Memory stores: one contract suite run against the in-memory store and the SQLite store."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

import pytest

from zigai.memory import (
    Citation,
    CompactionFailed,
    CompactionRecord,
    Compactor,
    ConversationRecord,
    InMemoryStore,
    InvalidMemoryRecord,
    InvalidTenant,
    MemoryCapacityExceeded,
    MemoryClosed,
    MemoryLimits,
    MemoryQuery,
    MemoryRecordNotFound,
    MemoryStore,
    SemanticRecord,
    SqliteStore,
    record_text,
    search_tool,
)
from zigai.memory.records import decode_record, encode_record
from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from zigai.tool import ToolRunContext


def turn(question: str, answer: str) -> tuple[RequestMessage, ResponseMessage]:
    return (RequestMessage(parts=(UserPromptPart(question),)), ResponseMessage(parts=(TextPart(answer),)))


@pytest.fixture(params=["in_memory", "sqlite"])
def make_store(request, tmp_path: Path):
    made = []

    def make(limits: MemoryLimits | None = None):
        store = InMemoryStore(limits) if request.param == "in_memory" else SqliteStore(
            tmp_path / f"memory{len(made)}.sqlite", limits)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(make_store):
    return make_store()


# -- the shared contract -------------------------------------------------------------------------


def test_both_stores_implement_the_contract(store) -> None:
    assert isinstance(store, MemoryStore)


def test_records_round_trip_as_independent_copies(store) -> None:
    fact = SemanticRecord("The deploy window is Tuesday 09:00 UTC", vector=(0.1, 0.9),
                          citation=Citation("runbook.md", "L12", "deploys on Tuesday"), metadata={"team": ["ops"]})
    talk = ConversationRecord("s1", turn("when do we deploy?", "Tuesday"), metadata={"channel": "chat"})
    fact_id, talk_id = store.put("acme", fact), store.put("acme", talk)
    assert fact_id != talk_id
    first, second = store.get("acme", fact_id), store.get("acme", fact_id)
    assert first == fact and second == fact and first is not second
    assert first.metadata is not second.metadata and first.citation is not second.citation
    assert store.get("acme", talk_id) == talk
    with pytest.raises(TypeError):
        first.metadata["team"] = "x"  # type: ignore[index]
    assert SemanticRecord("no metadata", metadata=None).metadata == {}  # type: ignore[arg-type]
    assert store.count("acme") == 2


def test_tenant_isolation_search_get_delete_and_session(store) -> None:
    secret_id = store.put("tenant-a", SemanticRecord("alpha launch codes are 1234", vector=(1.0, 0.0)))
    store.put("tenant-a", ConversationRecord("shared-session", turn("alpha question", "alpha answer")))
    store.put("tenant-b", SemanticRecord("bravo notes", vector=(0.0, 1.0)))
    with store.search("tenant-b", MemoryQuery(text="alpha launch codes")) as results:
        assert len(results) == 0
    with store.search("tenant-b", MemoryQuery(vector=(1.0, 0.0))) as results:
        assert [hit.record.text for hit in results] == []  # B's only vector is orthogonal
    with store.search("tenant-b", MemoryQuery(text="bravo")) as results:
        assert [hit.record.text for hit in results] == ["bravo notes"]
    with pytest.raises(MemoryRecordNotFound) as info:
        store.get("tenant-b", secret_id)
    assert info.value.record_id == secret_id
    assert store.delete("tenant-b", [secret_id]) == 0
    assert store.session("tenant-b", "shared-session") == ()
    assert store.purge("tenant-b") == 1
    assert store.get("tenant-a", secret_id).text == "alpha launch codes are 1234"
    assert store.count("tenant-a") == 2 and store.count("tenant-b") == 0


def test_deletion_is_honest_and_counted(store) -> None:
    keep = store.put("t", SemanticRecord("keep this fact"))
    gone = store.put("t", SemanticRecord("forget this fact"))
    assert store.delete("t", [gone, gone, "mem_missing"]) == 1
    with pytest.raises(MemoryRecordNotFound):
        store.get("t", gone)
    with store.search("t", MemoryQuery(text="fact")) as results:
        assert [h.record_id for h in results] == [keep]
    assert store.delete("t", []) == 0
    assert store.delete("never-wrote", ["mem_x"]) == 0
    assert store.purge("t") == 1 and store.purge("t") == 0


def test_search_scores_text_vectors_and_both(store) -> None:
    a = store.put("t", SemanticRecord("red apples and green pears", vector=(1.0, 0.0, 0.0)))
    b = store.put("t", SemanticRecord("green tea", vector=(0.6, 0.8, 0.0)))
    c = store.put("t", SemanticRecord("no vector but green"))
    store.put("t", SemanticRecord("other dimension green", vector=(1.0, 0.0)))
    with store.search("t", MemoryQuery(vector=(1.0, 0.0, 0.0))) as results:
        assert [(h.record_id, round(h.score, 3)) for h in results] == [(a, 1.0), (b, 0.6)]
    with store.search("t", MemoryQuery(text="green apples", limit=2)) as results:
        assert [(h.record_id, h.score) for h in results] == [(a, 1.0), (b, 0.5)]
    with store.search("t", MemoryQuery(text="green", vector=(0.0, 1.0, 0.0))) as results:
        scores = {h.record_id: h.score for h in results}
        assert scores[b] == pytest.approx((1.0 + 0.8) / 2) and scores[c] == 0.5
        assert results.hits[0].record_id == b


def test_search_filters_by_kind_and_session_and_owns_its_hits(store) -> None:
    store.put("t", ConversationRecord("s1", (*turn("tell me about penguins", "penguins swim"),
                                             ResponseMessage(parts=(ToolCallPart("zoo", "{}", "z1"),)))))
    store.put("t", ConversationRecord("s2", turn("penguins again", "still swimming")))
    fact = store.put("t", SemanticRecord("penguins are birds", citation=Citation("zoo.txt")))
    with store.search("t", MemoryQuery(text="penguins", kinds=frozenset({"semantic"}))) as results:
        assert [h.record_id for h in results] == [fact]
        assert results.hits[0].record.citation == Citation("zoo.txt")
    with store.search("t", MemoryQuery(text="swim")) as results:
        assert [h.record.kind for h in results] == ["conversation"]
    results = store.search("t", MemoryQuery(text="penguins", session_id="s2"))
    assert [record_text(h.record) for h in results] == ["penguins again\nstill swimming"]
    hit = results.hits[0]
    store.purge("t")
    assert hit.record.messages[0].parts[0].content == "penguins again"  # the copy outlives the store data
    results.close()
    with pytest.raises(MemoryClosed):
        results.hits  # noqa: B018


def test_the_result_limit_is_the_smaller_of_query_and_store(make_store) -> None:
    store = make_store(MemoryLimits(max_results=2))
    for index in range(4):
        store.put("t", SemanticRecord(f"item number {index}"))
    with store.search("t", MemoryQuery(text="item", limit=3)) as results:
        assert [h.record.text for h in results] == ["item number 0", "item number 1"]


def test_capacity_limits_hold_at_the_exact_bound(make_store) -> None:
    store = make_store(MemoryLimits(max_records_per_tenant=2))
    store.put("t", SemanticRecord("one"))
    store.put("t", SemanticRecord("two"))
    with pytest.raises(MemoryCapacityExceeded) as info:
        store.put("t", SemanticRecord("three"))
    assert info.value.limit == 2 and store.count("t") == 2
    store.put("other", SemanticRecord("a different tenant has its own budget"))
    size = len(encode_record(SemanticRecord("x" * 10)).encode())
    exact = make_store(MemoryLimits(max_record_bytes=size))
    exact.put("t", SemanticRecord("x" * 10))
    with pytest.raises(MemoryCapacityExceeded):
        exact.put("t", SemanticRecord("x" * 11))


def test_compaction_builds_the_summary_before_deleting_sources(store) -> None:
    ids = [store.put("t", ConversationRecord("s", turn(f"question {n}", f"answer {n}"))) for n in range(3)]
    seen_during_summary: list[int] = []

    def summarize(records):
        seen_during_summary.append(len(store.session("t", "s")))  # all sources still stored
        assert [r.kind for r in records] == ["conversation", "conversation"]
        return "asked two questions, got two answers"

    compaction_id = Compactor(store, summarize, keep_last=1).compact("t", "s")
    assert seen_during_summary == [3]
    entries = store.session("t", "s")
    assert [e.record_id for e in entries] == [ids[2], compaction_id]
    compaction = store.get("t", compaction_id)
    assert isinstance(compaction, CompactionRecord) and compaction.kind == "compaction"
    assert compaction.source_ids == tuple(ids[:2])
    for gone in ids[:2]:
        with pytest.raises(MemoryRecordNotFound):
            store.get("t", gone)
    with store.search("t", MemoryQuery(text="questions", kinds=frozenset({"compaction"}))) as results:
        assert [h.record_id for h in results] == [compaction_id]
    # a second pass folds the earlier summary in, and keep_last=0 compacts everything
    second = Compactor(store, lambda records: " | ".join(record_text(r) for r in records), keep_last=0)
    newest = second.compact("t", "s")
    assert [e.record_id for e in store.session("t", "s")] == [newest]
    assert store.get("t", newest).summary.startswith("question 2")
    assert Compactor(store, summarize).compact("t", "s") is None  # too few sources left


@pytest.mark.parametrize("summarizer", [lambda records: "", lambda records: None, lambda records: 1 / 0])
def test_a_failed_summary_deletes_nothing(store, summarizer) -> None:
    ids = [store.put("t", ConversationRecord("s", turn(f"q{n}", f"a{n}"))) for n in range(3)]
    with pytest.raises(CompactionFailed):
        Compactor(store, summarizer).compact("t", "s")
    assert [e.record_id for e in store.session("t", "s")] == ids


def test_replace_checks_every_source_before_changing_anything(store) -> None:
    mine = store.put("t", ConversationRecord("s", turn("q", "a")))
    other_session = store.put("t", ConversationRecord("elsewhere", turn("q", "a")))
    fact = store.put("t", SemanticRecord("fact"))
    foreign = store.put("u", ConversationRecord("s", turn("q", "a")))
    for sources, error in (((mine, foreign), MemoryRecordNotFound), ((mine, other_session), InvalidMemoryRecord),
                           ((mine, fact), InvalidMemoryRecord)):
        with pytest.raises(error):
            store.replace("t", CompactionRecord("s", "summary", sources))
        assert store.count("t") == 3 and store.count("u") == 1
    with pytest.raises(InvalidMemoryRecord):
        store.put("t", CompactionRecord("s", "summary", (mine,)))
    with pytest.raises(InvalidMemoryRecord):
        store.replace("t", SemanticRecord("not a compaction"))  # type: ignore[arg-type]


def test_tenant_ids_and_inputs_are_validated(store) -> None:
    for bad in ("", "a b", "x" * 129, None, "tenant/evil"):
        with pytest.raises(InvalidTenant):
            store.count(bad)  # type: ignore[arg-type]
    assert store.count("x" * 128) == 0  # the longest tenant id is accepted
    with pytest.raises(InvalidMemoryRecord):
        store.put("t", "just text")  # type: ignore[arg-type]
    with pytest.raises(InvalidMemoryRecord):
        store.search("t", "text")  # type: ignore[arg-type]
    with pytest.raises(MemoryRecordNotFound):
        store.get("t", 5)  # type: ignore[arg-type]


def test_a_closed_store_refuses_every_operation(make_store) -> None:
    store = make_store()
    with store as opened:
        opened.put("t", SemanticRecord("x"))
    assert store.closed
    store.close()
    for call in (lambda: store.put("t", SemanticRecord("y")), lambda: store.count("t"),
                 lambda: store.search("t", MemoryQuery(text="x")), lambda: store.get("t", "mem_1")):
        with pytest.raises(MemoryClosed):
            call()
    with pytest.raises(MemoryClosed):
        store.__enter__()


def test_concurrent_writers_keep_every_record(store) -> None:
    def write(worker: int) -> None:
        for n in range(25):
            store.put("t", SemanticRecord(f"worker {worker} item {n}"))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.count("t") == 100


def test_the_search_tool_is_bound_to_one_tenant(store) -> None:
    store.put("a", SemanticRecord("the wifi password rotates monthly", citation=Citation("it-handbook")))
    store.put("a", SemanticRecord("wifi facts without a citation"))
    store.put("b", SemanticRecord("the wifi password for tenant b"))
    tool = search_tool(store, "a", limit=3)
    output = tool.call(json.dumps({"query": "wifi password"}), ToolRunContext())
    assert [item["text"] for item in output.content] == ["the wifi password rotates monthly",
                                                         "wifi facts without a citation"]
    assert "citation" not in output.content[1]
    assert output.content[0]["citation"] == "it-handbook" and output.content[0]["kind"] == "semantic"
    only_talk = search_tool(store, "a", kinds=frozenset({"conversation"}))
    assert only_talk.call('{"query": "wifi"}', ToolRunContext()).content == []
    assert "tenant" not in json.dumps(tool.definition().parameters_json_schema)


# -- store-specific ------------------------------------------------------------------------------


def test_sqlite_deletion_overwrites_the_bytes_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "honest.sqlite"
    with SqliteStore(path) as store:
        store.put("t", SemanticRecord("keep-me-around"))
        gone = store.put("t", SemanticRecord("zz-unique-secret-zz " * 20))
        assert b"zz-unique-secret-zz" in path.read_bytes()
        store.delete("t", [gone])
        assert b"zz-unique-secret-zz" not in path.read_bytes()
    with SqliteStore(path) as reopened:  # data survives reopening
        with reopened.search("t", MemoryQuery(text="keep")) as results:
            assert [h.record.text for h in results] == ["keep-me-around"]


def test_sqlite_replace_is_atomic(tmp_path: Path, monkeypatch) -> None:
    store = SqliteStore(tmp_path / "atomic.sqlite")
    ids = [store.put("t", ConversationRecord("s", turn(f"q{n}", "a"))) for n in range(2)]
    original_insert = store._insert

    def insert_then_fail(tenant, row):
        original_insert(tenant, row)
        raise RuntimeError("disk full")

    monkeypatch.setattr(store, "_insert", insert_then_fail)
    with pytest.raises(RuntimeError):
        store.replace("t", CompactionRecord("s", "summary", tuple(ids)))
    monkeypatch.undo()
    assert [e.record_id for e in store.session("t", "s")] == ids
    store.close()


# -- values --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: SemanticRecord(""),
        lambda: SemanticRecord("x", vector=()),
        lambda: SemanticRecord("x", vector="12"),
        lambda: SemanticRecord("x", vector=(1.0, math.nan)),
        lambda: SemanticRecord("x", vector=(True,)),
        lambda: SemanticRecord("x", citation="src"),
        lambda: SemanticRecord("x", metadata=[1]),
        lambda: SemanticRecord("x", metadata={"v": math.inf}),
        lambda: Citation(""),
        lambda: Citation("s", locator=3),
        lambda: ConversationRecord("s", ()),
        lambda: ConversationRecord("", turn("q", "a")),
        lambda: ConversationRecord("s", ("not a message",)),
        lambda: CompactionRecord("s", "summary", ()),
        lambda: CompactionRecord("s", "", ("a",)),
        lambda: MemoryQuery(),
        lambda: MemoryQuery(text="   ...  "),
        lambda: MemoryQuery(text="x", kinds=frozenset({"images"})),
        lambda: MemoryQuery(text="x", kinds=frozenset()),
        lambda: MemoryQuery(text="x", limit=0),
        lambda: MemoryQuery(text="x", session_id=""),
        lambda: MemoryLimits(max_results=0),
    ],
)
def test_malformed_values_are_refused(build) -> None:
    with pytest.raises(InvalidMemoryRecord):
        build()


def test_stored_documents_are_checked_on_decode() -> None:
    record = ConversationRecord("s", (*turn("q", "a"), ResponseMessage(parts=(ToolCallPart("t", "{}", "c"),))))
    assert decode_record(encode_record(record)) == record
    for broken in ('{"v": 1, "kind": "video", "metadata": {}}', '{"v": 2, "kind": "semantic"}', "[]", "{"):
        with pytest.raises(InvalidMemoryRecord):
            decode_record(broken)
    with pytest.raises(InvalidMemoryRecord):
        encode_record("nope")  # type: ignore[arg-type]


def test_constructor_arguments_are_checked(tmp_path: Path) -> None:
    with pytest.raises(InvalidMemoryRecord):
        InMemoryStore(limits={"max_results": 3})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Compactor(InMemoryStore(), "summarize")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Compactor(InMemoryStore(), lambda r: "s", keep_last=-1)
    with pytest.raises(ValueError):
        Compactor(InMemoryStore(), lambda r: "s", min_sources=0)
    assert InMemoryStore().limits == MemoryLimits()
