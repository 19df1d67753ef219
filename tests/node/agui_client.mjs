// Drives zigai's AG-UI SSE endpoints with the official @ag-ui/client HttpAgent and prints
// the messages the client reconstructed, as one JSON document on stdout.
// Usage: node agui_client.mjs http://127.0.0.1:PORT
import { HttpAgent } from "@ag-ui/client";

const base = process.argv[2];

function agentFor(name, threadId) {
  return new HttpAgent({ url: `${base}/${name}/`, threadId });
}

async function turn(agent, text, parameters) {
  if (text !== undefined) {
    agent.addMessage({ id: `browser-${agent.messages.length}`, role: "user", content: text });
  }
  const events = [];
  const errors = [];
  const result = await agent.runAgent(parameters, {
    onEvent: ({ event }) => {
      events.push(event.type);
      if (event.type === "RUN_ERROR") errors.push({ code: event.code, message: event.message });
    },
  });
  return { result: result.result ?? null, types: events, errors };
}

const report = {};

const text = agentFor("text", "thread-text");
report.text = { ...(await turn(text, "Say hello")), messages: text.messages };

const tools = agentFor("tools", "thread-tools");
report.tools = { ...(await turn(tools, "Weather in Paris?")), messages: tools.messages };
// A second turn on the same thread: the client echoes its tool messages back.
report.toolsAgain = { ...(await turn(tools, "And again?")), messages: tools.messages };

const structured = agentFor("structured", "thread-structured");
report.structured = { ...(await turn(structured, "Where?")), messages: structured.messages };

const approval = agentFor("approval", "thread-approval");
const paused = await turn(approval, "Publish Oslo");
const interrupts = approval.pendingInterrupts;
const resume = interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { approved: true } }));
const resumed = await turn(approval, undefined, { resume });
report.approval = { paused, interrupts, resumed, messages: approval.messages };

const failing = agentFor("failing", "thread-failing");
report.failing = { ...(await turn(failing, "Weather?")), messages: failing.messages };

// A frontend tool and shared state: the run ends with the browser's tool call, the client
// answers it with a tool message, and the server's tool updates the state (STATE_DELTA).
const frontend = new HttpAgent({ url: `${base}/frontend/`, threadId: "thread-frontend",
                                 initialState: { theme: "none", count: 1 } });
const pickColor = { name: "pick_color", description: "Ask the user for a color.",
                    parameters: { type: "object", properties: { options: { type: "array" } } } };
const context = [{ description: "user", value: "ana" }];
const asked = await turn(frontend, "Pick a theme", { tools: [pickColor], context });
const askedMessages = structuredClone(frontend.messages);
const call = frontend.messages.at(-1).toolCalls?.[0];
frontend.addMessage({ id: "browser-tool-1", role: "tool", toolCallId: call?.id, content: "blue" });
const answered = await turn(frontend, undefined, { tools: [pickColor], context });
report.frontend = { asked, askedMessages, answered, state: frontend.state, messages: frontend.messages };

process.stdout.write(JSON.stringify(report));
