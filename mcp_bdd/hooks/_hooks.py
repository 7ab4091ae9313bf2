"""The behave hooks (projects import them from `mcp_bdd.environment`): one `Runtime` per run,
one `ScenarioState` (`context.mcp`) per scenario, evidence attached where the scenario is.

Order of teardown matters: sessions close first (each stops its server process group), then
fakes (a server may still talk to a fake while closing), then the scenario's temp dir.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import sys
import warnings
from typing import TYPE_CHECKING, NoReturn

from mcp_bdd._text import WARNING_PREFIX, printable
from mcp_bdd.config import load_config
from mcp_bdd.errors import ConfigError, NothingSelected
from mcp_bdd.hooks._attach import Phase, attach, deliver_held, mask_again, place_users_attachments
from mcp_bdd.hooks._behave import adapt_behave, wrap_after_scenario
from mcp_bdd.hooks._model import Context, Feature, Scenario, Step
from mcp_bdd.hooks._preflight import (
    has_steps,
    misspelt_keywords,
    outlines_without_examples,
    scenarios_without_steps,
    servers_named,
    unknown_server_references,
)
from mcp_bdd.hooks._step_failures import closest_phrases, mask_exception
from mcp_bdd.secrets import dumps_masked, generation, mask
from mcp_bdd.transcript import HOOKS_MIME, SERVER_MIME, STDERR_MIME, TEARDOWN_MIME, TRANSCRIPT_MIME, evidence

if TYPE_CHECKING:
    from mcp_bdd.runtime import Runtime, ScenarioState
    from mcp_bdd.transcript import Transcript

__all__ = [
    "after_all",
    "after_feature",
    "after_scenario",
    "after_step",
    "before_all",
    "before_feature",
    "before_scenario",
    "before_step",
]


def before_all(context: Context) -> None:
    from mcp_bdd.runtime import Runtime

    context._mcp_undo_adaptations = adapt_behave()  # put back by _close_run: see _behave.py

    userdata = {k: str(v) for k, v in dict(context.config.userdata).items()}
    try:
        config = load_config(userdata=userdata)
    except ConfigError as exc:
        _abort_run(context, str(exc))
    runner = getattr(context, "_runner", None)
    features = getattr(runner, "features", []) or []
    unknown = unknown_server_references(features, config, context.config)
    if unknown:
        message = (
            "Features name servers that are not configured (nothing was run):\n"
            + "\n".join(unknown)
            + f"\n  Configured servers: {', '.join(config.servers) or 'none'} (in {config.source})."
        )
        _abort_run(context, message.strip())
    for warning in outlines_without_examples(features, context.config) + scenarios_without_steps(
        features, context.config
    ):
        print(f"{WARNING_PREFIX}{warning}", file=sys.stderr)
    context._mcp_empty_scenarios = []  # the ones skipped, named when nothing else ran
    wrap_after_scenario(runner, _after_hooks_begin)
    place_users_attachments(context, functools.partial(_phase_of, context))
    context._mcp_at_exit = functools.partial(_close_at_exit, context)  # one per run: after_all unregisters it
    atexit.register(context._mcp_at_exit)
    context.mcp_runtime = Runtime(config)


def _runtime(context: Context) -> Runtime:
    """The run's `Runtime`: before_all made it, and only the run's end takes it away."""
    runtime = context.mcp_runtime
    if runtime is None:
        raise RuntimeError("mcp-bdd's run has ended: no scenario can begin or end in it")
    return runtime


def _abort_run(context: Context, message: str) -> NoReturn:
    """Stop the run before it starts: the message once (behave prints a hook's error itself), no
    "ABORTED: By user." (behave's words for any abort; after_all takes them back). mcp-bdd's
    formatters are told why, with the error's kind: behave's model keeps no trace of a before_all
    error, and `mcp-bdd run` reads a worker's configuration error from its run file."""
    context._mcp_config_failed = True
    _tell_formatters(context, "run_failed", ConfigError.kind, message)
    raise ConfigError(f"mcp-bdd configuration error:\n  {message}") from None


def _tell_formatters(context: Context, method: str, *args: object) -> None:
    """Call `method` on each of the run's formatters that has it: mcp-bdd's, not behave's."""
    runner = getattr(context, "_runner", None)
    for formatter in getattr(runner, "formatters", None) or ():
        told = getattr(formatter, method, None)
        if callable(told):
            told(*args)


def before_feature(context: Context, feature: Feature) -> None:
    pass


def before_scenario(context: Context, scenario: Scenario) -> None:
    state = context.mcp = _runtime(context).begin_scenario()  # a project's own hooks see it, skipped or not
    if not has_steps(scenario):  # a title only: it tests nothing, and is not a pass (warned of in before_all)
        scenario.skip(reason="the scenario has no steps: it tests nothing")
        getattr(context, "_mcp_empty_scenarios", []).append(str(scenario.location))
        return
    steps = tuple(scenario.all_steps)  # once: all_steps is an iterator that runs out
    state.servers_named = functools.cache(functools.partial(servers_named, steps))  # asked only with a token


def before_step(context: Context, step: Step) -> None:
    state = getattr(context, "mcp", None)
    if state is not None:
        state.location = f"{step.location}"
        state.step_text = f"{step.keyword} {step.name}"
        if not state.steps_begun and _is_own_step(context, step):
            _end_before_hooks(context, state)  # once steps run, a late message is the next step's


def _end_before_hooks(context: Context, state: ScenarioState) -> None:
    """Attach what the before hooks did, once: at the first own step, else when after_scenario starts."""
    if not state.steps_begun:
        state.steps_begun = True
        _attach_transcript(context, state, HOOKS_MIME)
        deliver_held(context)  # what a before hook attached before behave's json had steps


def _after_hooks_begin(context: Context) -> None:
    """The scenario's after hooks begin: the before hooks' evidence is taken if no step took it,
    and what is attached from now on, by `_attach` and to mcp-bdd's formatters, comes after the
    steps. Once per scenario."""
    state = getattr(context, "mcp", None)
    if state is not None:
        if state.steps_ended:
            return
        _end_before_hooks(context, state)
        state.steps_ended = True
    _tell_formatters(context, "after_hooks_begin")


def _is_own_step(context: Context, step: Step) -> bool:
    """A step of the scenario itself, not one a hook runs with `context.execute_steps`."""
    scenario = getattr(context, "scenario", None)
    return scenario is not None and any(step is own for own in scenario.all_steps)


def _attach_transcript(context: Context, state: ScenarioState, mime: str) -> None:
    items = state.transcript.drain()
    if items:
        _attach(context, mime, evidence(items))


def _attach(context: Context, mime: str, data: bytes) -> None:
    attach(context, mime, data, phase="before" if mime == HOOKS_MIME else _phase_of(context) or "during")


def _phase_of(context: Context) -> Phase | None:
    """Where the scenario is, for an attachment (None outside a scenario)."""
    state = getattr(context, "mcp", None)
    if state is None:
        return None
    return "after" if state.steps_ended else "during" if state.steps_begun else "before"


def after_step(context: Context, step: Step) -> None:
    state = getattr(context, "mcp", None)
    if state is None:
        return
    _attach_transcript(context, state, TRANSCRIPT_MIME)
    status = getattr(step.status, "name", str(step.status))
    if status in ("failed", "error"):
        mask_exception(step)
        for session in list(state.sessions.values()):
            tail = session.server.stderr_tail(30)
            if tail:
                _attach(context, STDERR_MIME, json.dumps({"server": session.name, "text": tail}).encode())


def after_scenario(context: Context, scenario: Scenario) -> None:
    for step in scenario.all_steps:
        if getattr(step.status, "name", "") == "undefined":
            hint = closest_phrases(step.name, context)
            if hint:
                print(
                    f"\n  Undefined step at {step.location}: {step.keyword} {step.name}\n{hint}\n",
                    file=sys.__stderr__,
                )
    state = getattr(context, "mcp", None)
    if state is None:
        return
    _end_scenario(context, scenario, state)


def _end_scenario(context: Context, scenario: Scenario, state: ScenarioState) -> None:
    _after_hooks_begin(context)  # when behave's runner let no wrapper mark it (a no-op when one did)
    runtime = _runtime(context)
    runtime.interrupted |= _aborted(context)
    try:
        _attach_surfaces(context, state)
    finally:  # a Ctrl-C while a large surface is encoded still stops the scenario's servers and fakes
        problems = runtime.end_scenario(state)
    _say_notices(runtime)
    _report_teardown(problems, f"{scenario.location}", state.transcript)
    _attach_transcript(context, state, TEARDOWN_MIME)
    if generation() != state.secrets_at_start:
        mask_again(context, mask)  # behave's json; mcp-bdd's own reports do the same themselves
    context.mcp = None


def _attach_surfaces(context: Context, state: ScenarioState) -> None:
    """Each session's server as the scenario saw it last (identity, capabilities, listings), for the
    report's catalog and coverage map, once, before the sessions close: the report merges what all
    scenarios saw of a server, so only the last view of each counts. (It was attached after every
    step that changed it: twice a scenario that lists tools, 0.05 ms more.)"""
    for session in list(state.sessions.values()):
        if session.client is None or not session.connected or not session.surface_dirty:
            continue
        session.surface_dirty = False
        try:
            # the server's own words (its name, descriptions, defaults) may repeat a secret it was given
            shown = dumps_masked(session.surface()).encode()
        except Exception:  # a listing nested past what the encoder takes: the report goes without it
            continue
        _attach(context, SERVER_MIME, shown)


def _report_teardown(problems: list[str], where: str, transcript: Transcript | None = None) -> None:
    """What went wrong while stopping servers and fakes (a cleanup that raised, a session that did
    not close): said on the real stderr, where behave's capture cannot hide it, and kept in the
    scenario's teardown evidence. It fails nothing: the scenario's verdict was made by its steps,
    and every other cleanup still ran. (It used to be printed only under MCP_BDD_DEBUG.)"""
    for problem in problems:
        if transcript is not None:
            transcript.record("error", "mcp-bdd", "teardown", {"message": problem})
        print(f"{WARNING_PREFIX}teardown of {where}: {printable(problem)}", file=sys.__stderr__ or sys.stderr)


def _say_notices(runtime: Runtime) -> None:
    """The runtime's warnings, on the real stderr: behave captures what hooks print, and shows it
    only when something fails, while a slow stop slows every scenario that passes."""
    for notice in runtime.take_notices():
        print(f"{WARNING_PREFIX}{notice}", file=sys.__stderr__ or sys.stderr)


def after_feature(context: Context, feature: Feature) -> None:
    runtime = getattr(context, "mcp_runtime", None)
    if runtime is not None:
        _report_teardown(runtime.close_scope("feature"), f"the feature {feature.location}")
        _say_notices(runtime)


def after_all(context: Context) -> None:
    runner = getattr(context, "_runner", None)
    if getattr(context, "_mcp_config_failed", False) and runner is not None:
        runner.aborted = False  # a configuration error, not the user: the run still fails (hook error)
    runtime = getattr(context, "mcp_runtime", None)
    try:
        _close_run(context, runtime)
    finally:
        from mcp_bdd.servers import reap_all

        reap_all()
    skipped = len(getattr(context, "_mcp_empty_scenarios", None) or ())  # begun, but skipped: no steps
    if runtime is not None and runtime.scenario_count == skipped and not _aborted(context):
        _nothing_ran(context)


def _aborted(context: Context) -> bool:
    runner = getattr(context, "_runner", None)
    return bool(getattr(runner, "aborted", False))


def _nothing_ran(context: Context) -> None:
    """A run that tested nothing is not green: behave exits non-zero (opt out: -D mcp_bdd.allow_empty=true)."""
    userdata = context.config.userdata
    if str(userdata.get("mcp_bdd.allow_empty", "")).lower() in ("1", "true", "yes"):
        return
    paths = " ".join(str(p) for p in (context.config.paths or [])) or "features/"
    tags = " ".join(str(t) for t in (getattr(context.config, "tags", None) or []))
    empty = list(getattr(context, "_mcp_empty_scenarios", None) or [])
    selected = (
        f"the {len(empty)} scenario{'s' if len(empty) > 1 else ''} selected {'have' if len(empty) > 1 else 'has'} "
        f"no steps ({', '.join(empty[:5])}{', ...' if len(empty) > 5 else ''}): "
        if empty
        else ""
    )
    tip = "write their steps" if empty else "check --tags / --name and the paths; feature files end in .feature"
    misspelt = misspelt_keywords(getattr(getattr(context, "_runner", None), "features", None) or [])
    message = (
        f"No scenario ran (paths: {paths}"
        + (f"; tags: {tags}" if tags else "")
        + f"): {selected}nothing was tested, and that is not a pass.\n"
        + "".join(f"  {line}\n" for line in misspelt)
        + f"  Tip: {tip}. (-D mcp_bdd.allow_empty=true accepts an empty run.)"
    )
    # behave prints a hook's error itself (once), after the formatter's last line, which a feature
    # whose scenarios were read as description text leaves open: end it, on the real stdout
    print(file=sys.__stdout__ or sys.stdout, flush=True)
    raise NothingSelected(message)


def _close_at_exit(context: Context) -> None:
    """What after_scenario and after_all close, when an exception escaped behave's runner and
    they never ran (a formatter's bug: behave's own `captured` formatter raises on some steps).

    Without it the process printed the traceback and then hung for good: at interpreter exit the
    portal's context manager was finalized after its (daemon) loop thread had stopped running,
    and its stop waited on that thread forever, with the run's servers still up. atexit runs
    while the loop still does. A normal after_all unregisters it."""
    with contextlib.suppress(Exception), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # behave's ContextMaskWarning: the crash left a scenario's layer on top
        runtime = getattr(context, "mcp_runtime", None)
        state = getattr(context, "mcp", None)
        if runtime is not None and state is not None:
            runtime.end_scenario(state)  # the interrupted scenario's sessions and fakes, gracefully
        _close_run(context, runtime)


def _close_run(context: Context, runtime: Runtime | None) -> None:
    undo = getattr(context, "_mcp_undo_adaptations", None)
    if undo is not None:
        context._mcp_undo_adaptations = None
        undo()
    at_exit = getattr(context, "_mcp_at_exit", None)
    if at_exit is not None:
        context._mcp_at_exit = None
        atexit.unregister(at_exit)
    if runtime is not None:
        context.mcp_runtime = None
        _report_teardown(runtime.close(), "the run")  # the event loop last (`RunPortal.stop`)
        _say_notices(runtime)
