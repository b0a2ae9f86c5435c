"""Drives an MCP server with the official Python client (PyPI `mcp`), step by step.

Usage: client.py PLAN_JSON. The plan: {"server": {"stdio": [cmd, args...], "env": {...}}
or {"http": URL, "token": T}, "steps": [...]}. Each step is one of
  {"list_tools": true}
  {"tool": NAME, "args": {...}, "progress": bool, "cancel_after": secs,
   "during": {"after": secs, "run": [cmd...]}}
  {"run": [cmd...]}                       a command (another oq client), its stdout
  {"kill_pidfile": PATH}                  SIGKILL the process whose pid is in PATH
Strings "$N.field" in args and commands are step N's structured result's field.
Prints one JSON list: each step's observation. The test that runs it asserts.
"""
import json
import os
import signal
import subprocess
import sys

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def resolve(value, results):
    if isinstance(value, str) and value.startswith("$") and "." in value:
        n, field = value[1:].split(".", 1)
        return (results[int(n)].get("structured") or {}).get(field)
    if isinstance(value, list):
        return [resolve(v, results) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, results) for k, v in value.items()}
    return value


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    out = {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
    try:
        out["json"] = json.loads(p.stdout)
    except ValueError:
        pass
    return out


async def call(session, step, results):
    args = resolve(step.get("args", {}), results)
    progress = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "total": total, "message": message})

    obs = {}

    async def during():
        d = step["during"]
        await anyio.sleep(d.get("after", 0))
        obs["during"] = await anyio.to_thread.run_sync(run, resolve(d["run"], results))

    async with anyio.create_task_group() as tg:
        if "during" in step:
            tg.start_soon(during)
        try:
            with anyio.move_on_after(step.get("cancel_after", 3600)) as scope:
                r = await session.call_tool(
                    step["tool"], args,
                    progress_callback=on_progress if step.get("progress") else None,
                )
            if scope.cancelled_caught:
                obs["cancelled"] = True
            else:
                obs["isError"] = bool(r.is_error)
                obs["structured"] = r.structured_content
                obs["text"] = "".join(c.text for c in r.content if c.type == "text")
        except Exception as e:  # a protocol error: the test reads its words
            obs["protocolError"] = str(e)
    obs["progress"] = progress
    return obs


async def main(plan):
    server = plan["server"]
    results = []
    if "stdio" in server:
        params = StdioServerParameters(
            command=server["stdio"][0], args=server["stdio"][1:], env=server.get("env"))
        transport = stdio_client(params, errlog=sys.stderr)
        http = None
    else:
        http = httpx2.AsyncClient(
            headers={"Authorization": "Bearer " + server["token"]},
            timeout=httpx2.Timeout(60, read=660))
        transport = streamable_http_client(server["http"], http_client=http)
    try:
        await session_steps(plan, transport, results)
    except BaseException:
        # A server killed on purpose ends the session with an error; report the steps.
        if not plan.get("expect_death"):
            raise
    finally:
        if http is not None:
            await http.aclose()
        print(json.dumps(results), flush=True)


async def session_steps(plan, transport, results):
    async with transport as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            results.append({"structured": {
                "instructions": init.instructions,
                "serverName": init.server_info.name,
                "protocolVersion": init.protocol_version,
            }})
            for step in plan["steps"]:
                if "list_tools" in step:
                    tools = await session.list_tools()
                    results.append({"structured": {"tools": [
                        {"name": t.name, "description": t.description,
                         "inputSchema": t.input_schema} for t in tools.tools]}})
                elif "tool" in step:
                    results.append(await call(session, step, results))
                elif "run" in step:
                    results.append(await anyio.to_thread.run_sync(
                        run, resolve(step["run"], results)))
                elif "kill_pidfile" in step:
                    with open(step["kill_pidfile"]) as f:
                        os.kill(int(f.read().strip()), signal.SIGKILL)
                    results.append({"killed": True})
                    break


if __name__ == "__main__":
    anyio.run(main, json.loads(sys.argv[1]))
