// A minimal "port" in JavaScript (Node's built-in fetch only) that runs conformance scenarios
// against `zigai conformance serve` the way another implementation would: it builds each
// provider request from the scenario (prompt, system, tool, settings) and the route facts
// (base URL, model), runs the tool loop, and prints one JSON line per scenario.
// Input (stdin): [{id, kind, base, model, scenario, wrong}], `wrong` sends a changed prompt.
// Used by tests/test_conformance_kit.py.

const cases = JSON.parse(await new Promise((done) => {
  let text = "";
  process.stdin.on("data", (chunk) => { text += chunk; });
  process.stdin.on("end", () => done(text));
}));

function openaiBody(c, items) {
  const s = c.scenario;
  const body = { model: c.model, input: items };
  if (s.tool) body.tools = [{ type: "function", name: s.tool.name, description: s.tool.description, parameters: s.tool.parameters }];
  if (s.settings && s.settings.max_tokens !== undefined) body.max_output_tokens = s.settings.max_tokens;
  return body;
}

function anthropicBody(c, messages) {
  const s = c.scenario;
  const body = { model: c.model, max_tokens: (s.settings && s.settings.max_tokens) || 4096 };
  if (s.system) body.system = [{ type: "text", text: s.system }];
  body.messages = messages;
  if (s.tool) body.tools = [{ name: s.tool.name, description: s.tool.description, input_schema: s.tool.parameters }];
  return body;
}

async function post(url, body) {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const value = await response.json();
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${JSON.stringify(value)}`);
  return value;
}

async function runOpenai(c, prompt) {
  const items = [];
  if (c.scenario.system) items.push({ type: "message", role: "system", content: c.scenario.system });
  items.push({ type: "message", role: "user", content: prompt });
  for (let turn = 0; turn < 4; turn++) {
    const answer = await post(`${c.base}/responses`, openaiBody(c, items));
    const calls = answer.output.filter((item) => item.type === "function_call");
    if (calls.length === 0) {
      const message = answer.output.find((item) => item.type === "message");
      return message.content.filter((p) => p.type === "output_text").map((p) => p.text).join("");
    }
    for (const call of calls) {
      items.push({ type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments });
      items.push({ type: "function_call_output", call_id: call.call_id, output: JSON.stringify(c.scenario.tool.returns) });
    }
  }
  throw new Error("too many turns");
}

async function runAnthropic(c, prompt) {
  const messages = [{ role: "user", content: [{ type: "text", text: prompt }] }];
  for (let turn = 0; turn < 4; turn++) {
    const answer = await post(`${c.base}/messages`, anthropicBody(c, messages));
    const uses = answer.content.filter((block) => block.type === "tool_use");
    if (uses.length === 0) return answer.content.filter((b) => b.type === "text").map((b) => b.text).join("");
    messages.push({ role: "assistant", content: uses.map((u) => ({ type: "tool_use", id: u.id, name: u.name, input: u.input })) });
    messages.push({ role: "user", content: uses.map((u) => ({ type: "tool_result", tool_use_id: u.id, content: JSON.stringify(c.scenario.tool.returns) })) });
  }
  throw new Error("too many turns");
}

for (const c of cases) {
  const prompt = c.wrong ? c.scenario.prompt + " (changed)" : c.scenario.prompt;
  try {
    const output = await (c.kind === "openai-responses" ? runOpenai(c, prompt) : runAnthropic(c, prompt));
    console.log(JSON.stringify({ id: c.id, ok: true, output }));
  } catch (error) {
    console.log(JSON.stringify({ id: c.id, ok: false, error: String(error.message || error) }));
  }
}
