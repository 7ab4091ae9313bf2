"""Overhead of mcp-bdd over the raw SDK client, measured in one run.

Baselines: a plain `mcp.Client` script doing, per "scenario", open a session, call `add`, check
the result, close, all in one coroutine ("raw"; the SDK's `call_tool` lists the tools first to
validate the result against its outputSchema, so raw makes the `tools/list` mcp-bdd makes to
coerce a table); the same plus the connect-time listen stream the step contract needs when a
scenario reads change notifications ("same requests"; these scenarios read none); and the same
SDK calls driven one synchronous step at a time, each one hop into an event loop thread
("portal"), the least a synchronous step runner with its loop in another thread pays (behave
steps are synchronous: ARCHITECTURE.md, one portal), with both threads on the step thread's CPU
as mcp-bdd's steps pin them (`mcp_bdd._turns`), and apart, each free to take a CPU of its own;
and the same steps with the loop run by
the step thread itself (no thread switch: what a redesign could reach); both loops keep one
root task, as mcp-bdd's does. mcp-bdd: the same as Gherkin scenarios (server step, call step, two
Then steps) run by `behave` in a subprocess; the same Gherkin with step functions that do
nothing ("behave floor": what behave alone costs per scenario); and with step functions that make
the raw SDK calls themselves, the portal baseline's way ("raw SDK steps in behave": what any
behave-driven runner making these calls pays, the SDK's calls slowed by behave's work between
steps included; mcp-bdd minus it is all of mcp-bdd's own work).
Printed (in-memory: medians of rounds that take every measurement side by side, since this
machine's speed drifts by tens of percent within minutes):
  - per tool-call step: mcp-bdd's "When I call the tool" step duration minus the raw call time
  - per scenario: mcp-bdd's wall time per scenario (minus behave's fixed start-up, measured with
    a 1-scenario run) minus raw, split into the hops, behave, and what is left: mcp-bdd's own
    bookkeeping; and apart, mcp-bdd with `pin_threads = false`, and the listen stream a scenario
    that reads change notifications adds
Targets (README): <= +0.3 ms per call step in-memory; <= +1.5 ms per scenario.
--one-cpu runs everything (this process, behave, the servers) on one CPU, the whole time (what
`taskset` does): the unpinned parts (behave between steps, the raw baseline) too.

    python benchmarks/steps_overhead.py [--scenarios 400] [--rounds 5] [--stdio-scenarios 10] [--one-cpu]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _project import add_scenarios, write_project  # noqa: E402
from bench_server import create_server  # noqa: E402

#: untimed scenarios first: the first SDK call pays one-off costs (schema building, lazy imports)
#: that behave's runs leave out too (their 1-scenario run is subtracted)
WARM_UP = 5


async def raw(n: int, transport: str) -> tuple[float, float]:
    """(mean seconds per scenario, mean seconds per call) for the raw SDK client."""
    per_scenario, per_call = [], []
    for i in range(-WARM_UP, n):
        if i == 0:
            per_scenario, per_call = [], []
        t0 = time.perf_counter()
        if transport == "in-memory":
            target: object = create_server()
        else:
            target = StdioServerParameters(command=sys.executable, args=[str(HERE / "bench_server.py")])
        async with Client(target, cache=None) as client:  # type: ignore[arg-type]
            t1 = time.perf_counter()
            result = await client.call_tool("add", {"a": i, "b": 1})
            per_call.append(time.perf_counter() - t1)
            assert result.structured_content == {"result": i + 1}
        per_scenario.append(time.perf_counter() - t0)
    return statistics.mean(per_scenario), statistics.mean(per_call)


async def raw_same_requests(n: int) -> float:
    """Mean seconds per in-memory scenario for the raw SDK making the requests the step contract
    makes of a scenario that reads change notifications: the connect-time listen stream (steps.md:
    notifications are collected from the moment the session opens; on 2026-07-28 only a listen
    stream carries them) and `tools/list` (a table's cells are coerced by the tool's inputSchema),
    then the call. The benchmark's scenarios read none, so mcp-bdd skips the stream for them
    (`_lookahead`): this prices what a scenario that does read them adds."""
    per_scenario = []
    for i in range(-WARM_UP, n):
        if i == 0:
            per_scenario = []
        t0 = time.perf_counter()
        async with Client(create_server(), cache=None) as client:
            caps = client.server_capabilities
            kinds = {
                f"{k}_list_changed": True
                for k in ("tools", "prompts", "resources")
                if getattr(getattr(caps, k, None), "list_changed", None)
            }
            async with anyio.create_task_group() as tg:
                if kinds:
                    ready = anyio.Event()

                    async def hold(kinds: dict[str, bool] = kinds, ready: anyio.Event = ready) -> None:
                        async with client.listen(**kinds) as sub:
                            ready.set()
                            async for _ in sub:
                                pass

                    tg.start_soon(hold)
                    await ready.wait()
                await client.list_tools()
                result = await client.call_tool("add", {"a": i, "b": 1})
                assert result.structured_content == {"result": i + 1}
                tg.cancel_scope.cancel()
        per_scenario.append(time.perf_counter() - t0)
    return statistics.mean(per_scenario)


async def _hold(client: Client, ready: Any) -> None:
    """A step-driven scenario's session, held open until told to stop: `ready` (a future of either
    kind) gets the event that stops it."""
    stop = asyncio.Event()
    async with client:
        ready.set_result(stop)
        await stop.wait()


async def _call(client: Client, i: int) -> Any:
    return await client.call_tool("add", {"a": i, "b": 1})


async def _done(stop: asyncio.Event) -> None:
    stop.set()


def _step_driven(n: int, start: Callable[[Any], Any], wait: Callable[[Any], Any], future: Callable[[], Any]) -> float:
    """Mean seconds per in-memory scenario driven one synchronous step at a time: `start` hands a
    coroutine to the event loop, `wait` blocks the step until a future is done."""
    per_scenario = []
    for i in range(-WARM_UP, n):
        if i == 0:
            per_scenario = []
        t0 = time.perf_counter()
        client = Client(create_server(), cache=None)
        ready = future()
        lifetime = start(_hold(client, ready))
        stop = wait(ready)  # "Given the MCP server is running"
        result = wait(start(_call(client, i)))  # "When I call the tool"
        assert result.structured_content == {"result": i + 1}  # "Then ..."
        start(_done(stop))  # after_scenario
        wait(lifetime)
        per_scenario.append(time.perf_counter() - t0)
    return statistics.mean(per_scenario)


def portal_baseline(n: int, *, one_cpu: bool = True) -> float:
    """Each step one hop into an event loop thread (no behave, no mcp-bdd): `run_coroutine_threadsafe`,
    the cheapest hop (anyio's portal costs more), onto a loop that runs a root task, as mcp-bdd's
    portal loop does (`anyio.run`). With `one_cpu`, the step thread and the loop's share the step
    thread's CPU, as mcp-bdd's steps do (`mcp_bdd._turns`); without, each wakes where it last ran.

    The root task matters: anyio ties the worker threads that run a server's synchronous tools to
    the root task, and a loop without one (`run_forever`) makes every call's task the root, so
    each `call_tool` started and stopped a thread, which mcp-bdd never pays. Measured: +0.4 ms a
    scenario, all of which an earlier version of this baseline charged to the hops."""
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    thread = threading.Thread(target=loop.run_until_complete, args=(stop.wait(),), daemon=True)
    thread.start()
    from mcp_bdd._turns import Turns, loop_thread_id

    # mcp-bdd's own pin (off where it would be: one CPU, not Linux)
    turns = Turns(asyncio.run_coroutine_threadsafe(loop_thread_id(), loop).result() if one_cpu else 0)
    turns.pin()
    try:
        return _step_driven(n, lambda coro: asyncio.run_coroutine_threadsafe(coro, loop), Future.result, Future)
    finally:
        turns.release()
        loop.call_soon_threadsafe(stop.set)
        thread.join()
        loop.close()


def wake_costs(n: int = 1000, gap: float = 0.0015) -> tuple[float, float]:
    """(median round trip of a bare hop back to back, the same after `gap` s of work in the step
    thread), seconds. Between a scenario's hops the step thread works for a millisecond or two
    while the loop's thread sleeps; on a VM an idle vCPU then takes longer to wake, so a hop
    costs more there than back to back: that difference is the machine's, not the code's."""
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    thread = threading.Thread(target=loop.run_until_complete, args=(stop.wait(),), daemon=True)
    thread.start()

    async def nothing() -> None:
        pass

    def busy(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    try:
        out = []
        for pause in (0.0, gap):
            times = []
            for _ in range(n):
                busy(pause)
                t0 = time.perf_counter()
                asyncio.run_coroutine_threadsafe(nothing(), loop).result()
                times.append(time.perf_counter() - t0)
            out.append(statistics.median(times))
        return out[0], out[1]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join()
        loop.close()


def step_thread_loop_baseline(n: int) -> float:
    """The same steps with the event loop run by the step thread itself, only while a step waits
    (`run_until_complete` on the step's future): no thread switch at all. What a redesign that
    drives the loop from behave's thread could reach.

    The steps' coroutines run as tasks of one long-lived root task's task group, for the reason
    given in `portal_baseline`: anyio keeps one worker thread for the synchronous tools while that
    root lives. (Each step a `run_until_complete` of its own task made each step the root: a thread
    per call, +0.6 ms a scenario that an earlier version of this baseline measured.)"""
    loop = asyncio.new_event_loop()
    inbox: asyncio.Queue[tuple[Any, asyncio.Future[Any]]] = asyncio.Queue()

    async def root() -> None:
        async with anyio.create_task_group() as tg:
            while (item := await inbox.get())[0] is not None:
                tg.start_soon(_settle, *item)
            tg.cancel_scope.cancel()  # a scenario that failed leaves its session's task waiting

    def start(coro: Any) -> asyncio.Future[Any]:
        done = loop.create_future()
        inbox.put_nowait((coro, done))
        return done

    host = loop.create_task(root())
    try:
        return _step_driven(n, start, loop.run_until_complete, loop.create_future)
    finally:
        inbox.put_nowait((None, loop.create_future()))
        loop.run_until_complete(host)
        loop.close()


async def _settle(coro: Any, done: asyncio.Future[Any]) -> None:
    try:
        done.set_result(await coro)
    except asyncio.CancelledError:
        done.cancel()
        raise
    except Exception as exc:  # handed to the waiting step
        done.set_exception(exc)


def project(root: Path, n: int, transport: str) -> None:
    write_project(root, add_scenarios(n), extra_config=f'transport = "{transport}"\n')


NOOP_STEPS = """\
from behave import given, then, when

@given('the MCP server "{name}" is running')
def server(context, name): pass

@when('I call the tool "{tool}" with:')
def call(context, tool): pass

@then("the tool call succeeds")
def succeeds(context): pass

@then('the result at "{path}" is {value}')
def result(context, path, value): pass
"""


RAW_STEPS = """\
import asyncio
import threading
from concurrent.futures import Future

from behave import given, then, when
from mcp import Client

from bench_server import create_server
from mcp_bdd._turns import Turns, loop_thread_id
from steps_overhead import _call, _done, _hold  # the coroutines the portal baseline hops with

# one event loop in its own thread, both threads on one CPU: the portal baseline's hops
loop = asyncio.new_event_loop()
threading.Thread(target=loop.run_until_complete, args=(asyncio.Event().wait(),), daemon=True).start()
Turns(asyncio.run_coroutine_threadsafe(loop_thread_id(), loop).result()).pin()


def hop(coro):
    return asyncio.run_coroutine_threadsafe(coro, loop)


@given('the MCP server "{name}" is running')
def server(context, name):
    client, ready = Client(create_server(), cache=None), Future()
    lifetime = hop(_hold(client, ready))
    stop = ready.result(timeout=60)
    context._client, context._close = client, lambda: (hop(_done(stop)), lifetime.result())


@when('I call the tool "{tool}" with:')
def call(context, tool):
    context._result = hop(_call(context._client, int(context.table.rows[0]["a"]))).result()  # b is 1


@then("the tool call succeeds")
def succeeds(context):
    assert not context._result.is_error


@then('the result at "{path}" is {value}')
def result(context, path, value):
    assert context._result.structured_content["result"] == int(value)
"""

RAW_ENVIRONMENT = """\
from mcp_bdd._gc import spare_the_gc


def before_all(context):
    context._restore_gc = spare_the_gc()  # the GC as mcp-bdd's runs have it: not what is compared


def after_scenario(context, scenario):
    context._close()


def after_all(context):
    context._restore_gc()
"""


def behave_raw_steps(n: int, runs: int = 2) -> float:
    """Mean seconds per scenario of behave running steps that make the raw SDK calls themselves,
    one hop each into a loop thread, both on the step thread's CPU the whole run (the portal
    baseline, in behave; mcp-bdd pins only while its own steps run), and the GC as mcp-bdd's runs
    have it (`mcp_bdd._gc`, worth ~0.2 ms a scenario: a saving any runner could make): what
    any behave-driven runner making the same calls pays, before any bookkeeping of its own.
    Beyond behave's own steps' cost it shows what behave's work between steps does to the SDK's:
    the same calls run slower there than back to back (caches left cold)."""
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as many:
        for root, count in ((Path(one), 1), (Path(many), n)):
            project(root, count, "in-memory")
            (root / "environment.py").write_text(RAW_ENVIRONMENT)
            (root / "steps" / "mcp_steps.py").write_text(RAW_STEPS)
        wall_one = min(run_behave(Path(one))[0] for _ in range(runs))
        wall_many = min(run_behave(Path(many))[0] for _ in range(runs))
    return (wall_many - wall_one) / (n - 1)


def behave_floor(n: int, runs: int = 2) -> float:
    """Mean seconds per scenario of behave itself: the same feature, steps that do nothing."""
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as many:
        for root, count in ((Path(one), 1), (Path(many), n)):
            project(root, count, "in-memory")
            (root / "environment.py").unlink()
            (root / "steps" / "mcp_steps.py").write_text(NOOP_STEPS)
        wall_one = min(run_behave(Path(one))[0] for _ in range(runs))
        wall_many = min(run_behave(Path(many))[0] for _ in range(runs))
    return (wall_many - wall_one) / (n - 1)


def run_behave(root: Path, *extra: str) -> tuple[float, list[dict[str, object]]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}
    out = root / "out.json"
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "behave", "-f", "json", "-o", str(out), "--no-summary", *extra, "features/"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    return wall, json.loads(out.read_text())


def bdd(n: int, transport: str, runs: int = 3, *extra: str) -> tuple[float, float]:
    """(mean seconds per scenario beyond behave's start-up, mean call-step seconds); `extra`: behave
    arguments (`-D pin_threads=false`)."""
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as many:
        project(Path(one), 1, transport)
        project(Path(many), n, transport)
        wall_one = min(run_behave(Path(one), *extra)[0] for _ in range(runs))
        wall_many, data = min((run_behave(Path(many), *extra) for _ in range(runs)), key=lambda run: run[0])
    steps = [s for f in data for el in f["elements"] for s in el["steps"] if s["name"].startswith("I call the tool")]
    assert all(s["result"]["status"] == "passed" for s in steps), "benchmark scenarios must pass"
    call = statistics.mean(float(s["result"]["duration"]) for s in steps)
    return (wall_many - wall_one) / (n - 1), call


def session_open_close(n: int = 300) -> tuple[float, float]:
    """(raw Client enter+exit, mcp-bdd Session.open+close) in seconds, medians, same portal and server.
    The session opens no connect-time listen stream (the raw client has none, and a scenario that
    reads no change notification opens none: `_lookahead`); its cost is printed on its own."""
    from anyio.from_thread import start_blocking_portal

    from mcp_bdd.servers import InMemoryServer
    from mcp_bdd.session import Session
    from mcp_bdd.transcript import Transcript

    with start_blocking_portal() as portal:
        server = create_server()

        def raw_once() -> None:
            async def go() -> None:
                async with Client(server, cache=None):
                    pass

            portal.call(go)

        def bdd_once() -> None:
            handle = InMemoryServer("bench", server, "bench")
            session = Session(
                "bench",
                handle,
                portal=portal,
                transcript=Transcript(),
                timeout=10,
                startup_timeout=10,
                protocol="auto",
                listen_at_connect=False,
            )
            session.open()
            session.close()

        out = []
        for fn in (raw_once, bdd_once):
            fn()  # warm-up
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            out.append(statistics.median(times))
    return out[0], out[1]


def in_memory_rounds(n: int, rounds: int) -> dict[str, float]:
    """Every in-memory measurement, `rounds` times side by side; the medians of each and of each
    round's differences (a round's numbers are taken within seconds of each other, so a machine
    that speeds up or slows down between rounds shifts all of them, not the differences)."""
    per_round: list[dict[str, float]] = []
    for _ in range(rounds):
        raw_scen, raw_call = anyio.run(raw, n, "in-memory")
        same = anyio.run(raw_same_requests, n)
        hop = portal_baseline(n)
        hop_apart = portal_baseline(n, one_cpu=False)
        same_thread = step_thread_loop_baseline(n)
        floor = behave_floor(n, runs=1)
        raw_steps = behave_raw_steps(n, runs=1)
        bdd_scen, bdd_call = bdd(n, "in-memory", 1)
        free_scen, _ = bdd(n, "in-memory", 1, "-D", "pin_threads=false")
        per_round.append(
            {
                "raw": raw_scen,
                "raw_call": raw_call,
                "bdd": bdd_scen,
                "bdd_call": bdd_call,
                "same": same,
                "floor": floor,
                "overhead": bdd_scen - raw_scen,
                "contract": same - raw_scen,
                "hops": hop - raw_scen,
                "hops_apart": hop_apart - raw_scen,
                "free": free_scen - raw_scen,
                "same_thread": same_thread - raw_scen,
                "own": bdd_scen - raw_scen - (hop - raw_scen) - floor,
                "raw_steps": raw_steps - raw_scen,
                "own_in_behave": bdd_scen - raw_steps,
                "step": bdd_call - raw_call,
            }
        )
    return {key: statistics.median(r[key] for r in per_round) for key in per_round[0]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenarios", type=int, default=400)
    parser.add_argument("--stdio-scenarios", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--one-cpu", action="store_true", help="run on one CPU (Linux): a hop wakes no other CPU")
    args = parser.parse_args()
    if args.one_cpu:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})  # inherited by every thread and process started from here
        print(f"on CPU {cpu} only")
    if args.scenarios < 2 or args.stdio_scenarios < 2 or args.rounds < 1:
        parser.error("--scenarios and --stdio-scenarios need at least 2 (a 1-scenario run is the baseline), --rounds 1")
    n = args.scenarios
    m = in_memory_rounds(n, args.rounds)
    ms = {key: value * 1e3 for key, value in m.items()}
    print(f"in-memory, {n} scenarios, medians of {args.rounds} rounds side by side (ms per scenario):")
    print(
        f"  raw SDK {ms['raw']:.2f} | mcp-bdd {ms['bdd']:.2f} | overhead {ms['overhead']:+.2f} (target <= +1.5)\n"
        f"  of which: one hop into the event loop per step, the least any synchronous step runner pays "
        f"{ms['hops']:+.2f}\n"
        f"              (both threads on one CPU, as mcp-bdd's steps pin them; each on its own CPU: "
        f"{ms['hops_apart']:+.2f})\n"
        f"              (the same steps with the loop run by the step thread, no thread switch: "
        f"{ms['same_thread']:+.2f})\n"
        f"            behave itself (the same Gherkin, steps that do nothing) {ms['floor']:+.2f}\n"
        f"            mcp-bdd's own bookkeeping (hooks, transcripts, attachments, scenario state) {ms['own']:+.2f}\n"
        f"  raw SDK steps run by behave (the same calls, one hop each; no mcp-bdd): {ms['raw_steps']:+.2f}, "
        "what any behave-driven runner making them pays;\n"
        f"    mcp-bdd over them, all its own work (sessions, transcripts, evidence, checks, hooks): "
        f"{ms['own_in_behave']:+.2f}\n"
        f"  mcp-bdd with pin_threads = false (behave's thread and the loop's free to take a CPU each): "
        f"{ms['free']:+.2f}\n"
        f"  a scenario that reads change notifications also opens the connect-time listen stream "
        f"(2026-07-28): {ms['contract']:+.2f} more\n"
        f"  tool-call step {ms['bdd_call']:.3f} vs raw call_tool {ms['raw_call']:.3f}: {ms['step']:+.3f} "
        f"(target <= +0.3)"
    )
    back_to_back, after_work = wake_costs()
    print(
        f"  a bare hop round trip: {back_to_back * 1e6:.0f} us back to back, {after_work * 1e6:.0f} us after 1.5 ms "
        "of work in the step thread\n"
        "    (as between a scenario's steps: the loop's idle CPU wakes slower; the machine's share)"
    )
    n = args.stdio_scenarios
    raw_scen, raw_call = anyio.run(raw, n, "stdio")
    bdd_scen, bdd_call = bdd(n, "stdio")
    print(
        f"stdio, {n} scenarios, a fresh server each: raw cold spawn {raw_scen * 1e3:.1f} ms | mcp-bdd "
        f"(zygote pool) {bdd_scen * 1e3:.1f} ms per scenario; call step {bdd_call * 1e3:.2f} vs {raw_call * 1e3:.2f} ms"
    )
    raw_oc, bdd_oc = session_open_close()
    print(
        f"in-memory session open+close (median of 300): raw Client {raw_oc * 1e3:.2f} ms | "
        f"mcp-bdd Session {bdd_oc * 1e3:.2f} ms ({(bdd_oc - raw_oc) * 1e3:+.2f} ms; target <= 5 ms)"
    )


if __name__ == "__main__":
    main()
