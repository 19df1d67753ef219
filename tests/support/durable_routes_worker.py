"""A child process for the per-route durable crash tests: one workflow per tool route.

``python durable_routes_worker.py DIR DB_URL first`` starts one workflow ``route-<name>`` per
route (direct tool, toolset tool, prepared toolset tool, policy-replaced tool, eager and
on-demand capability tools, MCP toolset tool, output function, approved deferred call, and a
direct tool of an agent that streams its events) -- and one, ``inflight``, whose tool is
killed while it runs.  Each
workflow runs its route's tool once, then blocks at its crash point (the next model request,
or the output validator for the output route) after writing ``DIR/ready-<name>``; the parent
SIGKILLs the process when every route is ready.

``python durable_routes_worker.py DIR DB_URL second`` launches DBOS again (which recovers
every pending workflow), waits for each result and prints one JSON line: per route the
output and the recorded step names.

Every model request and every tool execution is counted in ``DIR/counts.sqlite`` (committed
before the caller goes on), so the parent can prove no completed call ran twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time

directory, db_url, mode = sys.argv[1], sys.argv[2], sys.argv[3]
COUNTS = os.path.join(directory, "counts.sqlite")
with sqlite3.connect(COUNTS) as setup:
    setup.execute("CREATE TABLE IF NOT EXISTS executed (what TEXT NOT NULL)")


def count(what: str) -> None:
    with sqlite3.connect(COUNTS, isolation_level=None) as db:
        db.execute("INSERT INTO executed (what) VALUES (?)", (what,))


def crash_point(route: str) -> None:
    if mode == "first":
        open(os.path.join(directory, f"ready-{route}"), "w").close()
        time.sleep(600)  # the parent kills the process here


from dbos import DBOS  # noqa: E402

from zigai import Agent, Tool, ToolExecution, mcp  # noqa: E402
from zigai.agent import ResumeDecision  # noqa: E402
from zigai.capability import Capability, CapabilityLoading  # noqa: E402
from zigai.durable import DurableAgent, current_step_id  # noqa: E402
from zigai.messages import ResponseMessage, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from zigai.output import OutputChoice, OutputResult, OutputSpec  # noqa: E402
from zigai.testing import DeltaToolCall, FunctionModel  # noqa: E402
from zigai.tool.policy import Policy  # noqa: E402
from zigai.toolset import PreparedTool, Toolset  # noqa: E402

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def charge_for(route: str):
    def charge(args):
        count(f"tool:{route}:{current_step_id()}")
        return f"{route} charged {args['n']}"
    return charge


def model_for(route: str, calls: list[tuple[str, dict]]):
    """Call each of ``calls`` in turn, crash before the request after the last, then answer."""
    def respond(messages, info):
        turn = sum(1 for m in messages if isinstance(m, ResponseMessage))
        if turn == len(calls):
            crash_point(route)
        count(f"model:{route}:{turn}")
        if turn < len(calls):
            name, args = calls[turn]
            return ResponseMessage(parts=(ToolCallPart(name, json.dumps(args), f"{route}-{turn}"),))
        returned = [str(p.content) for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        return ResponseMessage(parts=(TextPart(f"{route}: {returned[-1]}"),))
    return respond


def streamed(respond):
    """The same responses streamed: text in two pieces, tool calls whole."""
    def stream(messages, info):
        for key, part in enumerate(respond(messages, info).parts):
            if isinstance(part, TextPart):
                half = len(part.content) // 2
                yield part.content[:half]
                yield part.content[half:]
            else:
                yield DeltaToolCall(part.tool_name, part.args, part.tool_call_id, key=key)
    return stream


def tool(route: str, **options) -> Tool:
    return Tool.manual("charge", "charge a customer", SCHEMA, charge_for(route), **options)


def inflight_charge(args):
    """Counted, then killed before it returns: the step never completes in the first process."""
    count(f"tool:inflight:{current_step_id()}")
    crash_point("inflight")
    return f"inflight charged {args['n']}"


class SwapInvoke(Policy):
    """A policy whose prepare stage replaces the tool's code (a dynamic tool)."""

    def prepare(self, ctx, current):
        charge = charge_for("policy")
        return current.replace(invoke=lambda value, run_ctx: charge(value))


def mcp_toolset() -> mcp.McpToolset:
    server = mcp.Server("routes", "1.0")

    def handler(args, request):
        count(f"tool:mcp:{args['n']}")  # runs on the in-process server's thread
        return f"mcp charged {args['n']}"

    server.add_tool(mcp.ToolInfo("charge", SCHEMA, "charge a customer"), handler)
    client = mcp.Client(mcp.InProcessTransport(server))
    return mcp.McpToolset(client, namespace="mcp")


def output_agent() -> Agent:
    def finish(ctx, value):
        count(f"tool:output:{current_step_id()}")
        return {"total": value["n"] * 2}

    def validate(name, ctx, value):
        crash_point("output")
        return OutputResult.output(value)

    def respond(messages, info):
        count("model:output:0")
        return ResponseMessage(parts=(ToolCallPart("final_result", '{"n": 21}', "output-0"),))

    spec = OutputSpec.tool([OutputChoice("final_result", SCHEMA, "the total", function=finish)])
    return Agent(FunctionModel(respond), output=spec, output_validators=[validate])


def output_type_agent() -> Agent:
    def final_total(n: int) -> dict[str, int]:
        """The total."""
        count(f"tool:output_type:{current_step_id()}")
        return {"total": n * 2}

    def validate(name, ctx, value):
        crash_point("output_type")
        return OutputResult.output(value)

    def respond(messages, info):
        count("model:output_type:0")
        return ResponseMessage(parts=(ToolCallPart("final_total", '{"n": 21}', "output-0"),))

    return Agent(FunctionModel(respond), output_type=final_total, output_validators=[validate])


on_demand = Capability(id="billing", description="billing tools", loading=CapabilityLoading.on_demand,
                       tools=[tool("on_demand")])
AGENTS = {
    "direct": Agent(FunctionModel(model_for("direct", [("charge", {"n": 1})])), tools=[tool("direct")]),
    "toolset": Agent(FunctionModel(model_for("toolset", [("ts__charge", {"n": 2})])),
                     toolsets=[Toolset([tool("toolset")], namespace="ts")]),
    "prepared": Agent(FunctionModel(model_for("prepared", [("charge", {"n": 3})])),
                      toolsets=[Toolset([], prepare=lambda ctx: [PreparedTool(tool("prepared"), {"step": 1})])]),
    "policy": Agent(FunctionModel(model_for("policy", [("charge", {"n": 4})])),
                    tools=[tool("unused")], tool_policies=[SwapInvoke()]),
    "eager": Agent(FunctionModel(model_for("eager", [("charge", {"n": 5})])),
                   capabilities=[Capability(tools=[tool("eager")])]),
    "on_demand": Agent(FunctionModel(model_for("on_demand", [("load_capability", {"capability_id": "billing"}),
                                                             ("charge", {"n": 6})])),
                       capabilities=[on_demand]),
    "mcp": Agent(FunctionModel(model_for("mcp", [("mcp__charge", {"n": 7})])), toolsets=[mcp_toolset()]),
    "output": output_agent(),
    "output_type": output_type_agent(),
    "streamed": Agent(FunctionModel(stream_function=streamed(model_for("streamed", [("charge", {"n": 9})]))),
                      tools=[tool("streamed")]),
    "inflight": Agent(FunctionModel(model_for("inflight", [("charge", {"n": 10})])), tools=[Tool.manual(
        "charge", "charge a customer", SCHEMA, inflight_charge)]),
    "approved": Agent(FunctionModel(model_for("approved", [("charge", {"n": 8})])),
                      tools=[tool("approved", execution=ToolExecution.requires_approval)]),
}
ROUTES = sys.argv[4].split(",") if len(sys.argv) > 4 else list(AGENTS)
DURABLE = {route: DurableAgent(AGENTS[route], name=f"routes-{route}", stream_events=route == "streamed")
           for route in ROUTES}

DBOS(config={"name": "zigai-routes-test", "log_level": "WARNING", "system_database_url": db_url})
DBOS.launch()
if mode == "first":
    for route, durable in DURABLE.items():
        durable.start(f"go {route}", workflow_id=f"route-{route}")
    if "approved" in DURABLE:
        pending = None
        while pending is None:
            pending = DURABLE["approved"].pending_approval("route-approved", timeout_s=1)
        DURABLE["approved"].send_decisions("route-approved", [ResumeDecision.approve(pending.calls[0].tool_call_id)])
    time.sleep(600)
    raise SystemExit("the first process should have been killed")
report = {}
for route, durable in DURABLE.items():
    with durable.result(f"route-{route}") as result:
        steps = [s["function_name"] for s in DBOS.list_workflow_steps(f"route-{route}")]
        report[route] = {"output": result.output, "steps": steps}
print(json.dumps(report))
DBOS.destroy()
