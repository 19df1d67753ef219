"""The built-in capability catalog: ordinary tools over small backends, policy-checked and bounded."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai.agent import Agent
from zigai.capabilities_builtin import (
    BUILTIN_NAMES,
    BuiltinLimits,
    DirectorySkills,
    FetchedPage,
    GeneratedImage,
    HttpBrowser,
    SkillInfo,
    UnknownSkill,
    bounded_list,
    bounded_text,
    builtin_capabilities,
    html_to_text,
)
from zigai.capability import Capability, CapabilityRegistry, InvalidCapability
from zigai.control import CancellationToken
from zigai.environments import EnvironmentClosed, RootedDirectory
from zigai.messages import ResponseMessage, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from zigai.security import UrlPolicy
from zigai.testing import FunctionModel
from zigai.tool import ModelRetry, ToolRunContext
from zigai.transport import TransportTimedOut


class Browser:
    def __init__(self, text: str = "hello page", final_url: str | None = None,
                 error: BaseException | None = None) -> None:
        self.text, self.final_url, self.error = text, final_url, error
        self.calls: list[tuple[str, int, float | None]] = []

    def fetch(self, url: str, *, max_bytes: int, deadline: float | None,
              cancellation: CancellationToken) -> FetchedPage:
        self.calls.append((url, max_bytes, deadline))
        if self.error is not None:
            raise self.error
        return FetchedPage(self.final_url or url, self.text, "Title")


class Images:
    def __init__(self, size: int = 3, description: str = "a cat") -> None:
        self.size, self.description = size, description
        self.described: list[str] = []

    def generate(self, prompt: str, *, size: str) -> GeneratedImage:
        return GeneratedImage("image/png", b"x" * self.size, "https://cdn.example.com/i.png", self.description)

    def describe(self, url: str, *, question: str) -> str:
        self.described.append(url)
        return self.description


def call(capability: Capability, tool_name: str, /, **arguments: Any) -> Any:
    [found] = [t for t in capability.tools if t.name == tool_name]
    return found.call(json.dumps(arguments), ToolRunContext()).content


# -- the catalog ----------------------------------------------------------------------------------


def test_only_capabilities_with_a_backend_are_present_and_absence_is_explained(tmp_path: Path) -> None:
    assert dict(builtin_capabilities()) == {} and BUILTIN_NAMES == ("browser", "image", "skill", "repository")
    with RootedDirectory.open(tmp_path) as root:
        catalog = builtin_capabilities(browser=Browser(), skills=DirectorySkills(root),
                                       image=Images(), repository=root)
        assert list(catalog) == ["browser", "image", "skill", "repository"] and len(catalog) == 4
        assert all(isinstance(c, Capability) and c.id == name for name, c in catalog.items())
        assert CapabilityRegistry(list(catalog.values())).ids == BUILTIN_NAMES
        assert repr(catalog) == "BuiltinCatalog(['browser', 'image', 'repository', 'skill'])"
    partial = builtin_capabilities(browser=Browser())
    assert partial.absence("browser") is None and partial.absence("nonsense") is None
    reason = partial.absence("repository")
    assert reason is not None and "RootedDirectory.open" in reason


@pytest.mark.parametrize(("given", "words"), [
    ({"browser": object()}, "browser backend object has no fetch method"),
    ({"image": Browser()}, "no generate, describe method"),
    ({"skills": Images()}, "no list_skills, load_skill, read_skill_file method"),
    ({"repository": "/tmp"}, "must be a zigai.environments.RootedDirectory"),
    ({"limits": {"max_page_chars": 3}}, "limits must be a BuiltinLimits"),
    ({"url_policy": "https"}, "url_policy must be"),
])
def test_a_backend_without_its_interface_is_refused_when_the_catalog_is_built(given: Any, words: str) -> None:
    with pytest.raises(InvalidCapability, match=words):
        builtin_capabilities(**given)


def test_limits_are_positive_ints_and_cuts_say_what_was_dropped() -> None:
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="max_page_chars must be an int >= 1"):
            BuiltinLimits(max_page_chars=bad)  # type: ignore[arg-type]
    assert bounded_text("abc", 3) == "abc"
    assert bounded_text("abcd", 3) == "abc\n[truncated: 1 more characters]"
    assert bounded_list(["a", "b"], 2, "entries") == ["a", "b"]
    assert bounded_list(["a", "b", "c"], 2, "entries") == ["a", "b", "[1 more entries not shown]"]


# -- browser --------------------------------------------------------------------------------------


def test_browser_urls_are_checked_before_the_backend_and_after_redirects() -> None:
    browser = Browser()
    cap = builtin_capabilities(browser=browser)["browser"]
    assert call(cap, "browser_open", url="https://example.com/a") == {
        "url": "https://example.com/a", "status": 200, "title": "Title", "text": "hello page"}
    with pytest.raises(ModelRetry, match="not allowed"):
        call(cap, "browser_open", url="http://127.0.0.1/admin")
    assert [c[0] for c in browser.calls] == ["https://example.com/a"]
    assert browser.calls[0][1] == BuiltinLimits().max_page_bytes
    redirected = builtin_capabilities(browser=Browser(final_url="https://10.0.0.1/"))["browser"]
    with pytest.raises(ModelRetry, match="redirected to a URL that is not allowed"):
        call(redirected, "browser_open", url="https://example.com/")
    local = builtin_capabilities(browser=Browser(), url_policy=UrlPolicy.local_development())["browser"]
    assert call(local, "browser_open", url="http://127.0.0.1:8080/")["text"] == "hello page"


def test_page_text_is_cut_at_the_exact_limit() -> None:
    limits = BuiltinLimits(max_page_chars=10)
    exact = builtin_capabilities(browser=Browser("a" * 10), limits=limits)["browser"]
    assert call(exact, "browser_open", url="https://example.com/")["text"] == "a" * 10
    over = builtin_capabilities(browser=Browser("a" * 11), limits=limits)["browser"]
    assert call(over, "browser_open", url="https://example.com/")["text"] == \
        "a" * 10 + "\n[truncated: 1 more characters]"


def test_backend_failures_become_retries_but_timeouts_stay_failures() -> None:
    from zigai.security import UrlPolicyViolation
    from zigai.transport import TransportConnectionFailed

    for error, words in ((TransportConnectionFailed("refused"), "could not load"),
                         (UrlPolicyViolation("private"), "led to a URL that is not allowed")):
        cap = builtin_capabilities(browser=Browser(error=error))["browser"]
        with pytest.raises(ModelRetry, match=words):
            call(cap, "browser_open", url="https://example.com/")
    slow = builtin_capabilities(browser=Browser(error=TransportTimedOut("slow")))["browser"]
    with pytest.raises(TransportTimedOut):
        call(slow, "browser_open", url="https://example.com/")


def test_a_refused_url_reaches_the_model_as_a_retry_inside_a_normal_run() -> None:
    seen: list[Any] = []

    def reply(messages: Any, info: Any) -> ResponseMessage:
        parts = [p for m in messages for p in getattr(m, "parts", ())]
        seen.append([t.name for t in info.tools])
        if not any(isinstance(p, RetryPromptPart) for p in parts):
            return ResponseMessage((ToolCallPart("browser_open", '{"url": "http://169.254.169.254/"}', "c1"),))
        if not any(isinstance(p, ToolReturnPart) for p in parts):
            return ResponseMessage((ToolCallPart("browser_open", '{"url": "https://example.com/"}', "c2"),))
        return ResponseMessage((TextPart("done"),))

    browser = Browser()
    agent = Agent(FunctionModel(reply), capabilities=[builtin_capabilities(browser=browser)["browser"]])
    with agent.run("open it") as result:
        assert result.output == "done"
        assert result.usage.tool_calls == 2
    assert seen[0] == ["browser_open"]
    assert [c[0] for c in browser.calls] == ["https://example.com/"]


def test_html_becomes_readable_text() -> None:
    title, text = html_to_text(
        "<html><head><title> The  page </title><style>p{}</style></head><body><script>x()</script>"
        "<h1>Head</h1><p>One &amp; two</p><div>three\n   four</div></body></html>")
    assert title == "The page"
    assert text == "Head\nOne & two\nthree\nfour"


def _site(request: Received) -> Reply:
    pages = {
        "/": Reply(200, (("Content-Type", "text/html; charset=utf-8"),),
                   b"<title>Home</title><p>Welcome \xc3\xa9</p>"),
        "/moved": Reply(302, (("Location", "/"),)),
        "/loop": Reply(302, (("Location", "/loop"),)),
        "/away": Reply(302, (("Location", "http://10.1.2.3/"),)),
        "/plain": Reply(200, (("Content-Type", "text/plain; charset=latin-1"),), b"caf\xe9"),
        "/weird": Reply(200, (("Content-Type", "text/plain; charset=nonsense"),), b"ok"),
        "/png": Reply(200, (("Content-Type", "image/png"),), b"\x89PNG...."),
        "/big": Reply(200, (("Content-Type", "text/plain"),), b"z" * 65),
        "/exact": Reply(200, (("Content-Type", "text/plain"),), b"z" * 64),
        "/bare": Reply(200, (), b"<p>no type</p>"),
    }
    return pages.get(request.target, Reply(404, (), b"missing"))


def test_http_browser_fetches_follows_checked_redirects_and_bounds_the_body() -> None:
    policy = UrlPolicy.local_development(allowed_hosts=["127.0.0.1"])
    token = CancellationToken()
    with LoopbackServer(_site) as server, HttpBrowser(policy, max_redirects=2) as browser:
        def fetch(path: str, max_bytes: int = 1024) -> FetchedPage:
            return browser.fetch(server.url + path, max_bytes=max_bytes, deadline=None, cancellation=token)

        home = fetch("/")
        assert (home.title, home.text, home.status) == ("Home", "Welcome é", 200)
        moved = fetch("/moved")
        assert moved.url == server.url + "/" and moved.text == "Welcome é"
        assert fetch("/plain").text == "café" and fetch("/weird").text == "ok"
        assert fetch("/png").text == "[image/png content of 8 bytes; not shown]"
        assert fetch("/bare").text == "no type"
        assert fetch("/missing").status == 404
        assert fetch("/exact", max_bytes=64).text == "z" * 64
        from zigai.errors import SecurityError, TransportError

        with pytest.raises(TransportError, match="larger"):
            fetch("/big", max_bytes=64)
        with pytest.raises(TransportError, match="more than 2 redirects"):
            fetch("/loop")
        with pytest.raises(SecurityError):
            fetch("/away")
        assert server.requests[0].headers["user-agent"] == "zigai-browser"
    browser.close()  # idempotent


def test_a_borrowed_transport_is_used_and_its_larger_limit_is_still_bounded() -> None:
    from zigai.errors import TransportError
    from zigai.transport import HttpTransport, Limits, RedirectPolicy

    policy = UrlPolicy.local_development()
    transport = HttpTransport(url_policy=policy, limits=Limits(max_response_body_bytes=1 << 20),
                              redirect_policy=RedirectPolicy.return_response)
    try:
        with LoopbackServer(_site) as server:
            browser = HttpBrowser(policy, transport=transport)
            with pytest.raises(TransportError, match="larger than 64 bytes"):
                browser.fetch(server.url + "/big", max_bytes=64, deadline=None,
                              cancellation=CancellationToken())
            browser.close()  # borrowed: left open
            assert browser.fetch(server.url + "/exact", max_bytes=64, deadline=None,
                                 cancellation=CancellationToken()).text == "z" * 64
    finally:
        transport.close()


def test_the_browser_capability_over_http_in_a_run_with_the_call_deadline() -> None:
    policy = UrlPolicy.local_development()
    with LoopbackServer(_site) as server, HttpBrowser(policy) as http:
        script = iter([ToolCallPart("browser_open", json.dumps({"url": server.url + "/moved"}), "c1"),
                       TextPart("read it")])
        agent = Agent(FunctionModel(lambda messages, info: ResponseMessage((next(script),))),
                      capabilities=[builtin_capabilities(browser=http, url_policy=policy)["browser"]],
                      run_timeout_ms=10_000)
        with agent.run("read the home page") as result:
            [returned] = [p for m in result.messages for p in getattr(m, "parts", ())
                          if isinstance(p, ToolReturnPart)]
            assert returned.content["title"] == "Home" and returned.content["url"] == server.url + "/"


# -- image ----------------------------------------------------------------------------------------


def test_images_are_bounded_and_described_urls_are_policy_checked() -> None:
    limits = BuiltinLimits(max_image_bytes=3, max_description_chars=5)
    cap = builtin_capabilities(image=Images(3, "a cat"), limits=limits)["image"]
    assert call(cap, "image_generate", prompt="a cat") == {
        "media_type": "image/png", "url": "https://cdn.example.com/i.png", "bytes": 3, "description": "a cat"}
    too_big = builtin_capabilities(image=Images(4), limits=limits)["image"]
    with pytest.raises(ModelRetry, match="4 bytes, over the limit of 3"):
        call(too_big, "image_generate", prompt="a cat")
    with pytest.raises(ModelRetry, match="size must look like"):
        call(cap, "image_generate", prompt="a cat", size="huge")
    with pytest.raises(ModelRetry, match="describe the image"):
        call(cap, "image_generate", prompt="  ")
    images = Images(description="a tabby")
    describe = builtin_capabilities(image=images, limits=limits)["image"]
    assert call(describe, "image_describe", url="https://example.com/c.png") == \
        "a tab\n[truncated: 2 more characters]"
    with pytest.raises(ModelRetry, match="not allowed"):
        call(describe, "image_describe", url="file:///etc/passwd")
    assert images.described == ["https://example.com/c.png"]


# -- repository -----------------------------------------------------------------------------------


def test_repository_reads_stay_in_the_root_and_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x" * 8)
    (tmp_path / "big.txt").write_text("y" * 9)
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01")
    (tmp_path / "utf.txt").write_bytes("aaaaaaaé".encode())  # é is bytes 7-8: the cut at 8 would split it
    (tmp_path / "link").symlink_to(tmp_path / "big.txt")
    (tmp_path.parent / "secret.txt").write_text("no")
    limits = BuiltinLimits(max_file_bytes=8, max_listing_entries=6)
    with RootedDirectory.open(tmp_path) as root:
        repo = builtin_capabilities(repository=root, limits=limits)["repository"]
        assert call(repo, "repository_read", path="src/a.py") == "x" * 8
        assert call(repo, "repository_read", path="big.txt") == \
            "y" * 8 + "\n[truncated: bytes 0-8 of 9 shown; read again with offset=8]"
        assert call(repo, "repository_read", path="big.txt", offset=8) == "y"
        assert call(repo, "repository_read", path="utf.txt") == \
            "a" * 7 + "\n[truncated: bytes 0-7 of 9 shown; read again with offset=7]"
        assert call(repo, "repository_read", path="utf.txt", offset=7) == "é"
        assert call(repo, "repository_read", path="bin.dat") == "[bin.dat is a binary file of 2 bytes; not shown]"
        for path in ("../secret.txt", "/etc/passwd", "link", "missing.txt", "src"):
            with pytest.raises(ModelRetry, match="cannot read"):
                call(repo, "repository_read", path=path)
        with pytest.raises(ModelRetry, match="offset must be >= 0"):
            call(repo, "repository_read", path="big.txt", offset=-1)
        assert call(repo, "repository_list", path="src") == ["a.py"]
        assert call(repo, "repository_list") == ["big.txt", "bin.dat", "link", "src/", "utf.txt"]
        (tmp_path / "z.txt").write_text("")
        assert len(call(repo, "repository_list")) == 6  # exactly at the limit
        (tmp_path / "zz.txt").write_text("")
        assert call(repo, "repository_list")[-1] == "[1 more entries not shown]"
        with pytest.raises(ModelRetry, match="cannot list"):
            call(repo, "repository_list", path="missing")
    with pytest.raises(EnvironmentClosed):
        call(repo, "repository_read", path="big.txt")  # a closed root fails the run, not a retry


def test_invalid_utf8_before_a_cut_is_replaced_not_dropped(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"\xff" + b"c" * 9)
    with RootedDirectory.open(tmp_path) as root:
        repo = builtin_capabilities(repository=root, limits=BuiltinLimits(max_file_bytes=8))["repository"]
        assert call(repo, "repository_read", path="bad.txt") == \
            "\ufffd" + "c" * 7 + "\n[truncated: bytes 0-8 of 10 shown; read again with offset=8]"


def test_repository_search_is_literal_bounded_and_skips_git(tmp_path: Path) -> None:
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("needle in git\n")
    (tmp_path / "a.txt").write_text("one needle\nno\nNEEDLE two\n")
    (tmp_path / "src" / "b.txt").write_text("needle.* three\n")
    (tmp_path / "src" / "deep" / "c.txt").write_text("x" * 50 + "needle\n")
    (tmp_path / "bin").write_bytes(b"\x00needle")
    with RootedDirectory.open(tmp_path) as root:
        repo = builtin_capabilities(repository=root, limits=BuiltinLimits(max_line_chars=20))["repository"]
        assert call(repo, "repository_search", text="needle") == [
            "a.txt:1: one needle", "src/b.txt:1: needle.* three",
            "src/deep/c.txt:1: " + "x" * 20 + "\n[truncated: 36 more characters]"]
        assert call(repo, "repository_search", text="needle", ignore_case=True)[:2] == [
            "a.txt:1: one needle", "a.txt:3: NEEDLE two"]
        assert call(repo, "repository_search", text="needle.*", path="src/") == ["src/b.txt:1: needle.* three"]
        with pytest.raises(ModelRetry, match="non-empty"):
            call(repo, "repository_search", text="")
        with pytest.raises(ModelRetry, match="cannot search"):
            call(repo, "repository_search", text="x", path="../")

        def search(**limits: int) -> list[str]:
            cap = builtin_capabilities(repository=root, limits=BuiltinLimits(**limits))["repository"]
            return call(cap, "repository_search", text="needle", ignore_case=True)

        assert len(search(max_search_matches=4)) == 4  # exactly all four matches
        assert search(max_search_matches=3)[-1] == "[more matches not shown; search a narrower path or text]"
        assert len(search(max_search_matches=3)) == 4
        # files in breadth-first, sorted order: a.txt, bin, src/b.txt, src/deep/c.txt
        assert search(max_search_files=4)[-1].startswith("src/deep/c.txt")
        assert search(max_search_files=3)[-1] == \
            "[search stopped after 3 files; search a subdirectory for the rest]"


# -- skills ---------------------------------------------------------------------------------------


def _skill(root: Path, name: str, text: str) -> None:
    (root / name).mkdir()
    (root / name / "SKILL.md").write_text(text)


def test_directory_skills_list_load_and_read_through_the_rooted_directory(tmp_path: Path) -> None:
    _skill(tmp_path, "haiku", "---\nname: haiku\ndescription: Write haiku.\n---\n\nFive, seven, five.\n")
    (tmp_path / "haiku" / "examples.md").write_text("old pond")
    _skill(tmp_path, "plain", "No front matter.")
    _skill(tmp_path, "broken", "---\ndescription: [unclosed\n---\nbody")
    _skill(tmp_path, "open", "---\ndescription: x\n")
    _skill(tmp_path, "listy", "---\n- a\n---\nbody")
    _skill(tmp_path, "latin", "")
    (tmp_path / "latin" / "SKILL.md").write_bytes(b"\xe9")
    (tmp_path / "notes").mkdir()  # no SKILL.md: not a skill
    (tmp_path / "README.md").write_text("not a skill")
    with RootedDirectory.open(tmp_path) as root:
        store = DirectorySkills(root)
        assert store.list_skills() == [
            SkillInfo("broken", "[invalid SKILL.md: its front matter is not YAML (ParserError)]"),
            SkillInfo("haiku", "Write haiku."),
            SkillInfo("latin", "[invalid SKILL.md: it is not UTF-8 text]"),
            SkillInfo("listy", "[invalid SKILL.md: its front matter is not a mapping]"),
            SkillInfo("open", "[invalid SKILL.md: its front matter has no closing '---' line]"),
            SkillInfo("plain", ""),
        ]
        cap = builtin_capabilities(skills=store, limits=BuiltinLimits(max_skill_chars=17))["skill"]
        assert call(cap, "skill_list")[1] == "haiku: Write haiku."
        assert call(cap, "skill_load", name="haiku") == "Five, seven, five"[:17] + "\n[truncated: 2 more characters]"
        assert call(cap, "skill_load", name="plain") == "No front matter."
        assert call(cap, "skill_read_file", name="haiku", path="examples.md") == "old pond"
        with pytest.raises(ModelRetry, match="invalid SKILL.md"):
            call(cap, "skill_load", name="broken")
        for name in ("sonnet", "notes", "../haiku"):
            with pytest.raises(ModelRetry, match="no skill named"):
                call(cap, "skill_load", name=name)
        for path in ("../plain/SKILL.md", "missing.md"):
            with pytest.raises(ModelRetry, match="cannot read"):
                call(cap, "skill_read_file", name="haiku", path=path)
        with pytest.raises(ModelRetry, match="offset"):
            call(cap, "skill_read_file", name="haiku", path="examples.md", offset=-1)
        with pytest.raises(UnknownSkill):
            store.load_skill("sonnet")
        with pytest.raises(TypeError):
            DirectorySkills(str(tmp_path))  # type: ignore[arg-type]


def test_skill_listings_and_files_are_bounded_at_the_exact_limit(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        _skill(tmp_path, name, f"---\ndescription: {name * 6}\n---\nbody")
    with RootedDirectory.open(tmp_path) as root:
        limits = BuiltinLimits(max_skills=2, max_description_chars=6, max_file_bytes=40)
        store = DirectorySkills(root, max_skills=2, max_file_bytes=40)
        assert store.list_skills()[-1] == SkillInfo("c", "")  # past max_skills: listed, not read
        listing = call(builtin_capabilities(skills=store, limits=limits)["skill"], "skill_list")
        assert listing == ["a: aaaaaa", "b: bbbbbb", "[1 more skills not shown]"]
        exact = call(builtin_capabilities(skills=DirectorySkills(root, max_skills=3), limits=BuiltinLimits(
            max_skills=3))["skill"], "skill_list")
        assert len(exact) == 3
        (tmp_path / "a" / "SKILL.md").write_text("---\ndescription: x\n---\n" + "b" * 41)
        with pytest.raises(ModelRetry, match="larger than 40 bytes"):
            call(builtin_capabilities(skills=store, limits=limits)["skill"], "skill_load", name="a")
        (tmp_path / "a" / "SKILL.md").write_text("b" * 40)
        assert call(builtin_capabilities(skills=store)["skill"], "skill_load", name="a") == "b" * 40


def test_the_errors_of_the_catalog_pickle() -> None:
    error = pickle.loads(pickle.dumps(UnknownSkill("x")))
    assert isinstance(error, LookupError) and str(error) == "x"
