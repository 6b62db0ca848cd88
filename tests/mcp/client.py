"""Drives `qg mcp` with the official MCP Python SDK, a client qg does not control.

    python client.py QG PROJECT PLAN_JSON

starts `QG mcp` in PROJECT over stdio, runs each step of the plan in one
session and prints one JSON list with a result per step. tests/mcp.rs makes
the plans and asserts on the results; this script only drives the client and
checks every answer against the schema the server declared for it, with the
`jsonschema` package, independently of the SDK's own check.

Steps:
  {"op": "list_tools"}
  {"op": "call", "tool": T, "arguments": {...}}
  {"op": "cancel", "tool": T, "arguments": {...}, "when_file": PATH}
      starts the call, cancels it once PATH exists (the fake tool wrote it)
  {"op": "concurrent", "calls": [{"tool": T, "arguments": {...}}, ...]}
"""

import json
import os
import sys
import time

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


class Session:
    def __init__(self, session):
        self.session = session
        self.output_schemas = {}

    async def list_tools(self):
        listed = await self.session.list_tools()
        tools = []
        for tool in listed.tools:
            dumped = tool.model_dump(by_alias=True, exclude_none=True)
            problems = []
            for key in ("inputSchema", "outputSchema"):
                try:
                    jsonschema.Draft202012Validator.check_schema(dumped[key])
                except (KeyError, jsonschema.SchemaError) as error:
                    problems.append(f"{key}: {error}")
            self.output_schemas[tool.name] = dumped.get("outputSchema")
            tools.append({"tool": dumped, "schema_problems": problems})
        return {"tools": tools}

    async def call(self, tool, arguments):
        progress = []

        async def on_progress(value, total, message):
            progress.append({"progress": value, "total": total, "message": message})

        started = time.monotonic()
        try:
            result = await self.session.call_tool(tool, arguments, progress_callback=on_progress)
        except MCPError as error:
            return {"protocol_error": {"code": error.error.code, "message": error.error.message}}
        answer = {
            "is_error": bool(result.is_error),
            "structured": result.structured_content,
            "text": [c.text for c in result.content if getattr(c, "type", "") == "text"],
            "progress": progress,
            "seconds": time.monotonic() - started,
        }
        schema = self.output_schemas.get(tool)
        if not result.is_error and schema is not None:
            validator = jsonschema.Draft202012Validator(schema)
            answer["schema_errors"] = [
                f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                for e in validator.iter_errors(result.structured_content)
            ]
        return answer

    async def cancel(self, tool, arguments, when_file):
        outcome = {}
        with anyio.CancelScope() as scope:

            async def watch():
                deadline = time.monotonic() + 60
                while not os.path.exists(when_file):
                    if time.monotonic() > deadline:
                        outcome["never_started"] = True
                        break
                    await anyio.sleep(0.02)
                outcome["cancelled_at"] = time.time()
                scope.cancel()

            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                outcome["answer"] = await self.call(tool, arguments)
        outcome["answered"] = "answer" in outcome
        return outcome

    async def concurrent(self, calls):
        answers = [None] * len(calls)

        async def one(index, call):
            answers[index] = await self.call(call["tool"], call.get("arguments", {}))

        async with anyio.create_task_group() as group:
            for index, call in enumerate(calls):
                group.start_soon(one, index, call)
        return {"answers": answers}


async def main(qg, project, plan):
    # The result cache's variables too: the suite runs without it
    # (QG_NO_CACHE, .cargo/config.toml), not with the user's store.
    passed = ("PATH", "HOME", "VIRTUAL_ENV", "QG_TRUST_FILE", "QG_NO_CACHE", "QG_CACHE_DIR")
    env = {key: os.environ[key] for key in passed if key in os.environ}
    params = StdioServerParameters(command=qg, args=["mcp"], cwd=project, env=env)
    results = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as raw:
            await raw.initialize()
            session = Session(raw)
            await session.list_tools()
            for step in plan:
                op = step["op"]
                if op == "list_tools":
                    results.append(await session.list_tools())
                elif op == "call":
                    results.append(await session.call(step["tool"], step.get("arguments", {})))
                elif op == "cancel":
                    results.append(
                        await session.cancel(step["tool"], step.get("arguments", {}), step["when_file"])
                    )
                elif op == "concurrent":
                    results.append(await session.concurrent(step["calls"]))
                else:
                    raise SystemExit(f"unknown step {op!r}")
    print(json.dumps(results))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
