// zigai chat page: talks to the AG-UI endpoint of the ui_app that served it.
// Everything the server or the model sends is rendered as text (textContent), never as HTML.
"use strict";

(function () {
  const endpoint = document.body.dataset.endpoint || "/";
  const storeKey = "zigai-chat:" + endpoint;
  const $ = (id) => document.getElementById(id);
  const transcript = $("transcript");
  const approvals = $("approvals");
  const statusLine = $("status");
  const form = $("composer");
  const prompt = $("prompt");
  const send = $("send");
  const stop = $("stop");
  const attach = $("attach");
  const MAX_FILES = 8;
  const MAX_FILE_BYTES = 2 * 1024 * 1024;

  // Saved across reloads (sessionStorage): the thread id, the text turns sent back as
  // RunAgentInput.messages, and the transcript entries the page renders.
  let chat = load();
  let running = null; // {runId, controller}
  let pending = []; // interrupts waiting for a decision
  let decisions = [];

  function newId(prefix) {
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return prefix + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function load() {
    try {
      const saved = JSON.parse(sessionStorage.getItem(storeKey) || "null");
      if (saved && typeof saved.threadId === "string" && Array.isArray(saved.entries)) {
        saved.turns = Array.isArray(saved.turns) ? saved.turns : [];
        saved.pending = Array.isArray(saved.pending) ? saved.pending : [];
        return saved;
      }
    } catch (e) { /* a broken saved chat starts a new one */ }
    return { threadId: newId("thread-"), turns: [], entries: [], pending: [] };
  }

  function save() {
    chat.pending = pending;
    try { sessionStorage.setItem(storeKey, JSON.stringify(chat, (k, v) => (k === "node" ? undefined : v))); } catch (e) { /* storage full */ }
  }

  function setStatus(text) { statusLine.textContent = text; }

  function setRunning(value) {
    running = value;
    send.disabled = value !== null || pending.length > 0;
    stop.disabled = value === null;
  }

  // -- rendering -------------------------------------------------------------------------

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function renderEntry(entry) {
    let node;
    if (entry.kind === "user" || entry.kind === "assistant") {
      node = el("div", "msg " + entry.kind);
      node.append(el("span", "who", entry.kind === "user" ? "You" : "Assistant"));
      node.append(el("span", "text", entry.text));
      if (Array.isArray(entry.files) && entry.files.length > 0) {
        const files = el("div", "files");
        for (const file of entry.files) {
          if (file.url && file.type.startsWith("image/")) {
            const img = el("img");
            img.src = file.url;
            img.alt = file.name;
            files.append(img);
          } else {
            files.append(el("span", "file", "Attached: " + file.name));
          }
        }
        node.append(files);
      }
    } else if (entry.kind === "thinking") {
      node = el("details", "thinking");
      node.append(el("summary", null, "Thinking"));
      node.append(el("span", "text", entry.text));
    } else if (entry.kind === "tool") {
      node = el("div", "tool");
      node.append(el("span", "who", "Tool call: " + entry.name));
      node.append(el("pre", "args", entry.args));
      node.append(el("span", "state", entry.state));
      node.append(el("pre", "result", entry.result));
    } else if (entry.kind === "error") {
      node = el("div", "error", "Error: " + entry.text);
      node.setAttribute("role", "alert");
    } else {
      node = el("p", entry.kind, entry.text);
    }
    node.dataset.kind = entry.kind;
    transcript.append(node);
    entry.node = node;
    return entry;
  }

  function addEntry(entry) {
    const stored = Object.assign({}, entry);
    chat.entries.push(stored);
    return renderEntry(stored);
  }

  function update(entry, fields) {
    Object.assign(entry, fields);
    const node = entry.node;
    if (entry.kind === "tool") {
      node.querySelector(".args").textContent = entry.args;
      node.querySelector(".state").textContent = entry.state;
      node.querySelector(".result").textContent = entry.result;
    } else {
      node.querySelector(".text").textContent = entry.text;
    }
  }

  function renderAll() {
    transcript.replaceChildren();
    chat.entries.forEach(renderEntry);
    pending = chat.pending || [];
    decisions = [];
    showApprovals();
  }

  // -- approvals --------------------------------------------------------------------------

  function showApprovals() {
    approvals.replaceChildren();
    const open = pending.filter((item) => !decisions.some((d) => d.interruptId === item.id));
    approvals.hidden = open.length === 0;
    send.disabled = running !== null || pending.length > 0;
    if (open.length === 0) return;
    setStatus("Waiting for your decision on " + open.length + " tool call(s).");
    open.forEach((item, index) => {
      const box = el("div", "approval");
      const heading = el("p", "ask", item.message || ("Approve " + item.metadata.toolName + "?"));
      heading.id = "ask-" + index;
      box.append(heading, el("pre", null, JSON.stringify((item.metadata || {}).args || {}, null, 2)));
      const yes = el("button", null, "Approve");
      const no = el("button", null, "Deny");
      yes.type = no.type = "button";
      yes.setAttribute("aria-describedby", heading.id);
      no.setAttribute("aria-describedby", heading.id);
      yes.addEventListener("click", () => decide(item, true));
      no.addEventListener("click", () => decide(item, false));
      box.append(yes, " ", no);
      approvals.append(box);
    });
    const first = approvals.querySelector("button");
    if (first) first.focus();
  }

  function decide(item, approved) {
    const call = chat.entries.find((e) => e.kind === "tool" && e.callId === item.toolCallId);
    if (call && call.node) update(call, { state: approved ? "approved" : "denied", decision: approved ? "approved" : "denied" });
    const payload = approved ? { approved: true } : { approved: false, reason: "The user denied this call." };
    decisions.push({ interruptId: item.id, status: "resolved", payload: payload });
    const open = pending.filter((p) => !decisions.some((d) => d.interruptId === p.id));
    if (open.length > 0) { showApprovals(); return; }
    const resume = decisions;
    pending = [];
    decisions = [];
    showApprovals();
    run({ resume: resume });
  }

  // -- the run ----------------------------------------------------------------------------

  async function run(extra) {
    const runId = newId("run-");
    const body = Object.assign({
      threadId: chat.threadId, runId: runId, state: {}, context: [], forwardedProps: {},
      messages: chat.turns.map((t, i) => ({ id: "m" + i, role: t.role, content: t.parts || t.content })),
    }, extra);
    const controller = new AbortController();
    setRunning({ runId: runId, controller: controller });
    setStatus("Running…");
    const reader = new Reader();
    try {
      const response = await fetch(endpoint, {
        method: "POST", body: JSON.stringify(body), signal: controller.signal,
        headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
      });
      if (!response.ok) {
        let message = response.status + " " + response.statusText;
        try { message = (await response.json()).error.message; } catch (e) { /* not JSON */ }
        reader.fail(message);
        return;
      }
      running.serverRunId = response.headers.get("X-Zigai-Run-Id") || runId;
      const stream = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await stream.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = frame.split("\n").filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).replace(/^ /, "")).join("\n");
          if (data) reader.handle(JSON.parse(data));
        }
      }
      if (!reader.ended) reader.fail("the connection closed before the run ended");
    } catch (error) {
      reader.fail(String(error && error.message || error));
    } finally {
      for (const turn of chat.turns) delete turn.parts; // the server keeps the files in its history
      reader.finishText();
      setRunning(null);
      save();
      showApprovals();
      if (pending.length === 0) prompt.focus();
    }
  }

  // Applies the AG-UI events of one run to the transcript.
  function Reader() {
    this.texts = {};
    this.thinking = {};
    this.tools = {};
    this.ended = false;
  }

  Reader.prototype.handle = function (event) {
    switch (event.type) {
      case "TEXT_MESSAGE_START":
        this.texts[event.messageId] = addEntry({ kind: "assistant", text: "" });
        break;
      case "TEXT_MESSAGE_CONTENT": {
        const entry = this.texts[event.messageId];
        if (entry) update(entry, { text: entry.text + event.delta });
        break;
      }
      case "TEXT_MESSAGE_END": {
        const entry = this.texts[event.messageId];
        if (entry && entry.text) chat.turns.push({ role: "assistant", content: entry.text });
        delete this.texts[event.messageId];
        break;
      }
      case "REASONING_MESSAGE_START":
        this.thinking[event.messageId] = addEntry({ kind: "thinking", text: "" });
        break;
      case "REASONING_MESSAGE_CONTENT": {
        const entry = this.thinking[event.messageId];
        if (entry) update(entry, { text: entry.text + event.delta });
        break;
      }
      case "TOOL_CALL_START":
        this.tools[event.toolCallId] = addEntry({ kind: "tool", name: event.toolCallName, args: "",
                                                  state: "calling…", result: "" });
        break;
      case "TOOL_CALL_ARGS": {
        const entry = this.tools[event.toolCallId];
        if (entry) update(entry, { args: entry.args + event.delta });
        break;
      }
      case "TOOL_CALL_END": {
        const entry = this.tools[event.toolCallId];
        if (entry) update(entry, { state: "arguments sent" });
        break;
      }
      case "TOOL_CALL_RESULT": {
        let entry = this.tools[event.toolCallId];
        if (!entry) {
          entry = chat.entries.find((e) => e.kind === "tool" && e.callId === event.toolCallId);
        }
        if (entry) update(entry, { state: entry.decision === "denied" ? "denied" : "result", result: event.content });
        break;
      }
      case "RUN_FINISHED":
        this.ended = true;
        if (event.outcome && event.outcome.type === "interrupt") {
          pending = event.outcome.interrupts || [];
          for (const item of pending) {
            const entry = this.tools[item.toolCallId];
            if (entry) update(entry, { state: "waiting for approval" });
          }
        } else if (event.outcome && event.outcome.type === "cancelled") {
          addEntry({ kind: "notice", text: "Stopped." });
          setStatus("Stopped.");
        } else {
          setStatus("Done.");
        }
        this.usage(event.usage);
        break;
      case "RUN_ERROR":
        this.ended = true;
        this.fail(event.message || "the run failed", true);
        this.usage(event.usage);
        break;
      default:
        break;
    }
    for (const id in this.tools) {
      // remember the call id on the stored entry, so a resumed run can fill in the result
      this.tools[id].callId = id;
    }
  };

  Reader.prototype.usage = function (entries) {
    if (!Array.isArray(entries) || entries.length === 0) return;
    let input = 0, output = 0, cost = 0, priced = true;
    for (const item of entries) {
      input += item.inputTokens || 0;
      output += item.outputTokens || 0;
      if (typeof item.costUsd === "string") cost += Number(item.costUsd); else priced = false;
    }
    let text = "Usage: " + input + " input + " + output + " output tokens";
    text += priced ? "; cost $" + cost.toFixed(6) : "; cost unknown";
    addEntry({ kind: "usage", text: text });
  };

  Reader.prototype.fail = function (message, fromServer) {
    this.ended = true;
    addEntry({ kind: "error", text: message });
    setStatus(fromServer ? "The run failed." : "The request failed.");
  };

  Reader.prototype.finishText = function () {
    for (const id in this.texts) {
      const entry = this.texts[id];
      if (entry.text) chat.turns.push({ role: "assistant", content: entry.text });
    }
    this.texts = {};
  };

  // -- controls ---------------------------------------------------------------------------

  function readFile(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result));
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
  }

  async function attachments() {
    const chosen = Array.from(attach.files || []);
    if (chosen.length > MAX_FILES) throw new Error("attach at most " + MAX_FILES + " files");
    const parts = [], shown = [];
    for (const file of chosen) {
      if (file.size > MAX_FILE_BYTES) throw new Error(file.name + " is larger than 2 MiB");
      const url = await readFile(file);
      const type = file.type || "application/octet-stream";
      const source = { type: "data", value: url.slice(url.indexOf(",") + 1), mimeType: type };
      parts.push({ type: type.startsWith("image/") ? "image" : "document", source: source,
                   metadata: { filename: file.name } });
      shown.push({ name: file.name, type: type, url: type.startsWith("image/") ? url : null });
    }
    return { parts: parts, shown: shown };
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = prompt.value.trim();
    const hasFiles = attach.files && attach.files.length > 0;
    if ((!text && !hasFiles) || running !== null || pending.length > 0) return;
    let files;
    try {
      files = await attachments();
    } catch (error) {
      addEntry({ kind: "error", text: String(error && error.message || error) });
      setStatus("The files were not sent.");
      return;
    }
    prompt.value = "";
    attach.value = "";
    addEntry({ kind: "user", text: text, files: files.shown });
    const turn = { role: "user", content: text };
    if (files.parts.length > 0) turn.parts = [...(text ? [{ type: "text", text: text }] : []), ...files.parts];
    chat.turns.push(turn);
    save();
    run({});
  });

  prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && running !== null) stopRun();
  });

  function stopRun() {
    if (running === null) return;
    setStatus("Stopping…");
    const id = running.serverRunId;
    if (!id) { running.controller.abort(); return; }
    fetch(endpoint + "runs/" + encodeURIComponent(id) + "/cancel",
          { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } })
      .catch(() => running && running.controller.abort());
  }

  stop.addEventListener("click", stopRun);

  $("new-chat").addEventListener("click", () => {
    if (running !== null) return;
    chat = { threadId: newId("thread-"), turns: [], entries: [], pending: [] };
    save();
    renderAll();
    setStatus("Ready.");
    prompt.focus();
  });

  renderAll();
  setRunning(null);
  if (pending.length === 0) prompt.focus();
})();
