// Reads zigai's Vercel UI message streams with the `ai` package's own chat transport and
// UI message stream reader; prints the final UI messages as one JSON document on stdout.
// Usage: node vercel_client.mjs http://127.0.0.1:PORT
import { DefaultChatTransport, readUIMessageStream } from "ai";

const base = process.argv[2];

async function send(name, messages, chatId, continued) {
  const transport = new DefaultChatTransport({ api: `${base}/${name}/` });
  const stream = await transport.sendMessages({
    chatId, messages, trigger: "submit-message", messageId: undefined, abortSignal: undefined,
  });
  let last = null;
  const errors = [];
  for await (const current of readUIMessageStream({ stream, message: continued, onError: (e) => errors.push(String(e)) })) {
    last = structuredClone(current);
  }
  return { message: last, errors };
}

function user(text, id) {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

const report = {};
report.text = await send("text", [user("Say hello", "u1")], "chat-text");
report.tools = await send("tools", [user("Weather in Paris?", "u1")], "chat-tools");
report.structured = await send("structured", [user("Where?", "u1")], "chat-structured");

const paused = await send("approval", [user("Publish Oslo", "u1")], "chat-approval");
const answered = structuredClone(paused.message);
for (const part of answered.parts) {
  if (part.state === "approval-requested") {
    part.state = "approval-responded";
    part.approval = { ...part.approval, approved: true };
  }
}
const resumed = await send("approval", [user("Publish Oslo", "u1"), answered], "chat-approval", answered);
report.approval = { paused, resumed };
report.failing = await send("failing", [user("Weather?", "u1")], "chat-failing");

// A user message with file parts: an inline PNG (data URL) and an https document URL.
const png = "data:image/png;base64," + Buffer.from("\x89PNG\r\n\x1a\nzigai-pixel", "latin1").toString("base64");
report.files = await send("files", [{ id: "u1", role: "user", parts: [
  { type: "text", text: "What is attached?" },
  { type: "file", mediaType: "image/png", filename: "pixel.png", url: png },
  { type: "file", mediaType: "application/pdf", filename: "spec.pdf", url: "https://example.com/spec.pdf" },
] }], "chat-files");

// A run the client cancels (POST runs/<run id>/cancel once the first text arrived; the run id
// is the start chunk's messageId without "-msg"). `raw` is the transport's chunk stream, each
// chunk already checked against the package's UI message chunk schema.
async function cancelled(name, chatId) {
  const transport = new DefaultChatTransport({ api: `${base}/${name}/` });
  const stream = await transport.sendMessages({
    chatId, messages: [user("Work slowly", "u1")], trigger: "submit-message", messageId: undefined,
    abortSignal: undefined,
  });
  const [raw, forReader] = stream.tee();
  const errors = [];
  const reading = (async () => {
    let last = null;
    for await (const current of readUIMessageStream({ stream: forReader, onError: (e) => errors.push(String(e)) })) {
      last = structuredClone(current);
    }
    return last;
  })();
  const chunks = [];
  let cancel = null;
  for await (const chunk of raw) {
    chunks.push(chunk);
    if (chunk.type === "text-delta" && cancel === null) {
      const run = chunks.find((c) => c.type === "start").messageId.replace(/-msg$/, "");
      const answer = await fetch(`${base}/${name}/runs/${run}/cancel`, {
        method: "POST", headers: { "Content-Type": "application/json" }, body: "{}",
      });
      cancel = answer.status;
    }
  }
  return { chunks, cancel, message: await reading, errors };
}
report.cancelled = await cancelled("cancelling", "chat-cancel");

process.stdout.write(JSON.stringify(report));
