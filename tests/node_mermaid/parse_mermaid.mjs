// Parses Mermaid flowchart documents (stdin: a JSON array of strings) with the official
// mermaid package and prints, as one JSON array, what it understood of each: vertices
// (id, label), edges (source, target, label) and subgraphs (id, title, member ids).  Mermaid keeps entity codes as internal placeholders until it
// renders; they are decoded back here so the test compares plain text.
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");

const NAMED = { quot: '"', amp: "&", lt: "<", gt: ">" };
function decode(text) {
  return String(text ?? "")
    .replace(/\uFB02\u00B0\u00B0(\d+)\u00B6\u00DF/g, (_, code) => String.fromCodePoint(Number(code)))
    .replace(/\uFB02\u00B0(\w+)\u00B6\u00DF/g, (_, name) => NAMED[name] ?? `&${name};`);
}

async function understand(text) {
  try {
    await mermaid.parse(text);
    const db = (await mermaid.mermaidAPI.getDiagramFromText(text)).db;
    return {
      ok: true,
      vertices: [...db.getVertices().entries()].map(([id, v]) => [id, decode(v.text)]),
      edges: db.getEdges().map((e) => [e.start, e.end, decode(e.text)]),
      subgraphs: db.getSubGraphs().map((s) => [s.id, decode(s.title), s.nodes]),
    };
  } catch (error) {
    return { ok: false, error: String(error?.message ?? error) };
  }
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const text of JSON.parse(input)) results.push(await understand(text));
console.log(JSON.stringify(results));
