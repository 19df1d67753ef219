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

process.stdout.write(JSON.stringify(report));
