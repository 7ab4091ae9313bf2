"""The host side of an MCP App's bridge: JSON-RPC 2.0 over `postMessage`, as SEP-1865 has a host speak it.

The browser only relays (see `host.html`): every message the app posts to its parent reaches
`Bridge.receive` as the JSON text it was (or as a note when it could not be: too large, not
serialisable, past the flood limit), and `Bridge` answers through `post`. Here is the protocol:

- `ui/initialize` is answered with the host's info, capabilities and context (the tool that
  opened the app, theme, display mode, container size, locale); the host sends the app nothing
  before it says `ui/notifications/initialized`, and then, in order, `ui/notifications/tool-input`
  and `ui/notifications/tool-result` (held until then, never lost);
- `tools/call`, `resources/read` and `resources/list` go to the scenario's session (`proxy`), so
  they are real requests, recorded in its transcript; a tool whose `_meta.ui.visibility` leaves
  out `"app"` is refused, as the spec tells a host to;
- `ui/message`, `ui/open-link`, `ui/update-model-context`, `ui/request-display-mode`, size changes,
  log messages and teardown requests are recorded (and answered) for the steps to check;
- `ui/resource-teardown` is sent before the app is closed, and its answer awaited (bounded).

Everything the app sends is untrusted: a message that breaks the protocol (not JSON-RPC 2.0, a
request before `ui/initialize`, an answer to a request the host never sent, unknown methods,
malformed params) is answered with a JSON-RPC error where it can be and recorded as one of the
app's `errors`, which "Then the app has no errors" reads. The record is bounded: the first
`LOG_LIMIT` messages and `LOG_BYTES` of them are kept, the rest counted.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from mcp_bdd.ui_apps._meta import APP_PROTOCOL_VERSIONS, Csp, visibility

__all__ = ["ERROR_LIMIT", "LOG_BYTES", "LOG_LIMIT", "AppCall", "Bridge", "Entry", "HostInfo"]

#: bridge messages an app's record keeps (both ways); later ones are counted
LOG_LIMIT = 500
#: ... and how much of them (as JSON text)
LOG_BYTES = 2 * 1024 * 1024
#: the errors an app's record keeps (a throwing timer makes thousands)
ERROR_LIMIT = 50
#: the display modes this host offers an app
HOST_DISPLAY_MODES = ("inline", "fullscreen")
#: the methods of the extension an app may send, beside MCP's own `tools/call`, `resources/read`, ...
_APP_REQUESTS = frozenset(
    {
        "ui/initialize",
        "ui/message",
        "ui/open-link",
        "ui/request-display-mode",
        "ui/update-model-context",
        "ui/download-file",
        "tools/call",
        "resources/read",
        "resources/list",
        "resources/templates/list",
        "ping",
    }
)
_APP_NOTIFICATIONS = frozenset(
    {
        "ui/notifications/initialized",
        "ui/notifications/size-changed",
        "ui/notifications/request-teardown",
        "notifications/message",
    }
)
#: JSON-RPC error codes the host answers with
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
REFUSED = -32000

_T = TypeVar("_T")


@dataclass(frozen=True)
class HostInfo:
    """What the host tells the app about itself and where it shows it (`ui/initialize`'s result)."""

    name: str
    version: str
    width: int
    height: int
    theme: str = "light"
    locale: str = "en-US"
    time_zone: str = "UTC"


@dataclass
class Entry:
    """One bridge message, as the evidence shows it: who sent it, when (s since the app opened), what."""

    at: float
    direction: str  # "app → host" | "host → app" | "host" (a note of the host's own)
    message: object  # the JSON the app posted, or the host sent (None for a note of the host's own)
    note: str | None = None

    def to_json(self) -> dict[str, object]:
        out = {"at": round(self.at, 3), "direction": self.direction, "message": self.message}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class AppCall:
    """A `tools/call` the app asked the host for, and what came of it."""

    name: str
    arguments: dict[str, object]
    refused: str | None = None  # why the host refused it (visibility), else None
    result: dict[str, object] | None = None
    error: dict[str, object] | None = None
    done: bool = False


@dataclass
class _Record:
    """What the app did, for the steps (each list bounded by `LOG_LIMIT`)."""

    calls: list[AppCall] = field(default_factory=list)
    messages: list[dict[str, object]] = field(default_factory=list)  # ui/message params
    links: list[str] = field(default_factory=list)
    sizes: list[dict[str, object]] = field(default_factory=list)
    display_modes: list[str] = field(default_factory=list)  # the modes it asked for
    model_context: list[dict[str, object]] = field(default_factory=list)
    logs: list[dict[str, object]] = field(default_factory=list)
    teardown_requests: int = 0


Post = Callable[[dict[str, object]], Awaitable[None]]
#: (method, params) -> (result, error): a request sent to the scenario's session
Proxy = Callable[[str, dict[str, object]], Awaitable[tuple[dict[str, object] | None, dict[str, object] | None]]]
Resize = Callable[[dict[str, object]], Awaitable[None]]
#: the server's tools as tools/list gave them (a tool's visibility decides whether the app may call it)
Tools = Callable[[], Awaitable[list[dict[str, object]]]]


def _message_text(params: object) -> str:
    """The text of a `ui/message`'s content blocks (a list, or the one block the spec's example shows)."""
    content = params.get("content") if isinstance(params, dict) else None
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(str(b.get("text")) for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))


def _logged(message: dict[str, object]) -> dict[str, object]:
    """A host message as the log keeps it: the tool's definition in `ui/initialize`'s host context is
    the one tools/list gave (in the transcript), so it is named, not repeated in every step's evidence."""
    result = message.get("result")
    context = result.get("hostContext") if isinstance(result, dict) else None
    info = context.get("toolInfo") if isinstance(context, dict) else None
    if not isinstance(result, dict) or not isinstance(context, dict) or not isinstance(info, dict):
        return message
    tool = info.get("tool")
    if not isinstance(tool, dict):
        return message
    named = {"name": tool.get("name"), "…": "its definition as tools/list gave it"}
    return {**message, "result": {**result, "hostContext": {**context, "toolInfo": {**info, "tool": named}}}}


def _valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Bridge:
    """One app's bridge: created, fed and awaited in the run's event loop only."""

    def __init__(
        self,
        *,
        tool: dict[str, object],
        arguments: dict[str, object],
        result: dict[str, object] | None,
        host: HostInfo,
        csp: Csp,
        post: Post,
        proxy: Proxy,
        resize: Resize,
        timeout: float,
        tools: Tools,
    ) -> None:
        self.tool = tool
        self.arguments = arguments
        self.result = result
        self.host = host
        self.csp = csp
        self._post = post
        self._proxy = proxy
        self._resize = resize
        self._tools = tools
        self.timeout = timeout
        self.started = time.monotonic()
        self._tasks: set[asyncio.Future[None]] = set()
        self.record = _Record()
        self.errors: list[str] = []
        self.errors_not_kept = 0
        self.log: list[Entry] = []
        self._log_bytes = 0
        self.log_not_kept = 0
        self._drained = 0
        self.app_info: dict[str, object] | None = None
        self.app_modes: list[str] | None = None  # the display modes the app declared
        self.display_mode = "inline"
        self.initialize_answered = False
        self.initialized = False
        self.messages_in = 0
        self.messages_out = 0
        self.asked: dict[str, int] = {}  # the methods the app sent, how often (the first 50 methods)
        self._held: list[dict[str, object]] = []  # host notifications waiting for `initialized`
        self._outbox: asyncio.Queue[dict[str, object] | None] = asyncio.Queue()
        self._sender = asyncio.ensure_future(self._send_all())
        self._busy = 0  # app requests being answered, and host messages not yet posted
        self._changed = asyncio.Condition()
        self._next_id = 1
        self._waiting: dict[int, asyncio.Future[dict[str, object]]] = {}  # host requests awaiting the app's answer
        self.closed = False
        self.stopped: str | None = None  # why the host stopped the app (its document is gone)
        # what the app is told once it is initialised: the tool's input, then its result
        tool_input = {"arguments": arguments}
        self._held.append({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": tool_input})
        if result is not None:
            self._held.append({"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": result})

    # -- the record ----------------------------------------------------------------------------
    def _now(self) -> float:
        return time.monotonic() - self.started

    def note(self, direction: str, message: object, note: str | None = None) -> None:
        """Keep one message of the bridge (or a note of the host's own) in the log, within its bounds."""
        size = len(json.dumps(message, default=str)) if message is not None else 0
        if len(self.log) >= LOG_LIMIT or self._log_bytes + size > LOG_BYTES:
            self.log_not_kept += 1
            return
        self._log_bytes += size
        self.log.append(Entry(self._now(), direction, message, note))

    def error(self, text: str) -> None:
        """One of the app's errors (what "Then the app has no errors" reports), bounded."""
        if len(self.errors) >= ERROR_LIMIT:
            self.errors_not_kept += 1
        else:
            self.errors.append(text[:2000])
        self.note("host", None, f"error: {text[:500]}")
        self._wake()

    def drain(self) -> list[dict[str, object]]:
        """The log entries since the last drain (one step's worth), as JSON."""
        new = self.log[self._drained :]
        self._drained = len(self.log)
        out = [entry.to_json() for entry in new]
        if self.log_not_kept:
            out.append(
                {
                    "direction": "host",
                    "note": f"{self.log_not_kept} bridge messages not kept (the log keeps the first {LOG_LIMIT})",
                }
            )
        return out

    def _wake(self) -> None:
        """Tell the waiters the record changed (from synchronous code: the condition is taken in a task)."""
        self._spawn(self._notify_all())

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _notify_all(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until `predicate()` holds (checked at every change of the record), at most `timeout` s."""
        try:
            async with asyncio.timeout(timeout):
                async with self._changed:
                    await self._changed.wait_for(predicate)
        except TimeoutError:
            return predicate()
        return True

    async def idle(self, timeout: float) -> bool:
        """Wait until no request of the app is being answered and every host message is posted."""
        return await self.wait_for(lambda: self._busy == 0 or self.closed or self.stopped is not None, timeout)

    # -- sending -------------------------------------------------------------------------------
    async def _send_all(self) -> None:
        """Post the host's messages one at a time, in order (a result never overtakes its input)."""
        while True:
            message = await self._outbox.get()
            if message is None:
                return
            try:
                await self._post(message)
            except Exception as exc:
                self.note("host", None, f"could not post to the app: {type(exc).__name__}: {str(exc)[:300]}")
            finally:
                self._busy -= 1
                self._wake()

    @property
    def traffic(self) -> int:
        """How many messages went either way so far (a settled app adds none)."""
        return self.messages_in + self.messages_out

    def send(self, message: dict[str, object], note: str | None = None) -> None:
        self.messages_out += 1
        self.note("host → app", _logged(message), note)
        self._busy += 1
        self._outbox.put_nowait(message)

    def _answer(self, request_id: object, result: dict[str, object]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _refuse(self, request_id: object, code: int, message: str, *, blame: str | None = None) -> None:
        """Answer with a JSON-RPC error; `blame`: the app broke a rule (it is then one of its errors)."""
        if blame:
            self.error(blame)
        self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    # -- receiving -----------------------------------------------------------------------------
    def receive(self, relayed: object) -> None:
        """One relayed message, in the order the app posted them (the browser's binding calls this
        synchronously, so the order holds); requests that wait on the server run on their own."""
        self.messages_in += 1
        if not isinstance(relayed, dict):
            self.error(f"the host page relayed something it should not: {str(relayed)[:200]}")
            return
        kind = relayed.get("kind")
        if kind == "flood":
            self.stopped = "it flooded the host with messages"
            self.error(
                f"flooded the host: more than {relayed.get('relayed')} messages posted; the host stopped reading them"
            )
            return
        if kind == "too-large":
            self.note("app → host", None, f"a message of {relayed.get('length')} characters, not read")
            self.error(
                f"posted a message of {relayed.get('length')} characters (the host reads at most "
                f"{relayed.get('limit')}): {str(relayed.get('head'))[:200]}"
            )
            return
        if kind == "unserialisable":
            self.error(f"posted a message that is not JSON (it cannot be a JSON-RPC message): {relayed.get('error')}")
            return
        if kind == "foreign":
            self.error(f"a message came from another origin than the app's: {str(relayed.get('origin'))[:200]}")
            return
        try:
            message = json.loads(str(relayed.get("json")))
        except ValueError:
            self.error("posted a message the host could not read as JSON")
            return
        self.note("app → host", message)
        self._dispatch(message)
        self._wake()

    def _dispatch(self, message: object) -> None:
        if not isinstance(message, dict) or "jsonrpc" not in message:
            self.note("host", None, "not a JSON-RPC message: ignored (as the reference host does)")
            return
        if message.get("jsonrpc") != "2.0":
            self.error(f'posted a message with "jsonrpc": {json.dumps(message.get("jsonrpc"))[:50]} (must be "2.0")')
            return
        method = message.get("method")
        has_id = "id" in message
        if method is None:
            if has_id and ("result" in message or "error" in message):
                self._on_answer(message)
            else:
                self.error(f"posted a JSON-RPC message with no method and no result: {json.dumps(message)[:200]}")
            return
        if isinstance(method, str) and (method in self.asked or len(self.asked) < 50):
            self.asked[method[:100]] = self.asked.get(method[:100], 0) + 1
        if not isinstance(method, str):
            self.error(f"posted a JSON-RPC message whose method is not a string: {json.dumps(method)[:100]}")
            if has_id and _valid_id(message["id"]):
                self._refuse(message["id"], INVALID_REQUEST, "method must be a string")
            return
        params = message.get("params", {})
        if params is None:
            params = {}
        if has_id:
            request_id = message["id"]
            if not _valid_id(request_id):
                self.error(
                    f"sent the request {method} with an id that is not a string or an integer: "
                    f"{json.dumps(request_id, default=str)[:80]}"
                )
                self.send({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": "invalid id"}})
                return
            if not isinstance(params, dict):
                self._refuse(
                    request_id,
                    INVALID_PARAMS,
                    "params must be an object",
                    blame=f"sent {method} with params that are not an object",
                )
                return
            self._on_request(request_id, method, params)
        else:
            self._on_notification(method, params if isinstance(params, dict) else {})

    def _on_answer(self, message: dict[str, object]) -> None:
        request_id = message.get("id")
        waiting = self._waiting.pop(request_id, None) if isinstance(request_id, int) else None
        if waiting is None:
            self.error(
                f"answered a request the host never sent (id {json.dumps(request_id, default=str)[:80]}): "
                f"{json.dumps(message, default=str)[:200]}"
            )
            return
        if not waiting.done():
            waiting.set_result(message)

    def _on_request(self, request_id: object, method: str, params: dict[str, object]) -> None:
        if method == "ui/initialize":
            self._on_initialize(request_id, params)
            return
        if method == "ping":
            self._answer(request_id, {})
            return
        if not self.initialize_answered:
            self._refuse(
                request_id, INVALID_REQUEST, "send ui/initialize first", blame=f"sent {method} before ui/initialize"
            )
            return
        if method in ("tools/call", "resources/read", "resources/list", "resources/templates/list"):
            self._busy += 1
            self._spawn(self._forward(request_id, method, params))
            return
        if method == "ui/message":
            if params.get("role") != "user" or not params.get("content"):
                self._refuse(
                    request_id,
                    INVALID_PARAMS,
                    'ui/message takes role "user" and content blocks',
                    blame=f"sent ui/message with params the spec does not allow: {json.dumps(params)[:200]}",
                )
                return
            self._keep(self.record.messages, params)
            self._answer(request_id, {})
        elif method == "ui/open-link":
            url = params.get("url")
            if not isinstance(url, str) or not url:
                self._refuse(
                    request_id, INVALID_PARAMS, "ui/open-link takes a url", blame="sent ui/open-link without a url"
                )
                return
            self._keep(self.record.links, url)
            self._answer(request_id, {})  # recorded, never opened: a test host has no browser tab to give it
        elif method == "ui/request-display-mode":
            self._on_display_mode(request_id, params)
        elif method == "ui/update-model-context":
            self._keep(self.record.model_context, params)
            self._answer(request_id, {})
        else:
            offered = "not in the host's capabilities" if method in _APP_REQUESTS else "not a method of the extension"
            self._refuse(
                request_id,
                METHOD_NOT_FOUND,
                f"{method} is not offered by this host",
                blame=f"asked for {method} ({offered})",
            )

    def _keep(self, items: list[_T], item: _T) -> None:
        if len(items) < LOG_LIMIT:
            items.append(item)

    def _on_initialize(self, request_id: object, params: dict[str, object]) -> None:
        if self.initialize_answered:
            self._refuse(request_id, INVALID_REQUEST, "already initialized", blame="sent ui/initialize twice")
            return
        info = params.get("appInfo")
        version = params.get("protocolVersion")
        caps = params.get("appCapabilities")
        problems = []
        if not isinstance(info, dict) or not isinstance(info.get("name"), str):
            problems.append("no appInfo with a name")
        if not isinstance(version, str):
            problems.append("no protocolVersion")
        if caps is not None and not isinstance(caps, dict):
            problems.append("appCapabilities that are not an object")
        if problems:
            self.error(f"sent ui/initialize with {', '.join(problems)}: {json.dumps(params, default=str)[:200]}")
        self.app_info = info if isinstance(info, dict) else None
        modes = caps.get("availableDisplayModes") if isinstance(caps, dict) else None
        self.app_modes = [m for m in modes if isinstance(m, str)] if isinstance(modes, list) else None
        agreed = version if version in APP_PROTOCOL_VERSIONS else APP_PROTOCOL_VERSIONS[0]
        self.initialize_answered = True
        self._answer(
            request_id,
            {
                "protocolVersion": agreed,
                "hostInfo": {"name": self.host.name, "version": self.host.version},
                "hostCapabilities": self.capabilities(),
                "hostContext": self.context(),
            },
        )

    def capabilities(self) -> dict[str, object]:
        """What this host offers an app: proxied tools and resources, messages, links, logs, context."""
        sandbox: dict[str, object] = {}
        if self.csp.approved():
            sandbox["csp"] = self.csp.approved()
        return {
            "openLinks": {},
            "serverTools": {},
            "serverResources": {},
            "logging": {},
            "message": {"text": {}, "image": {}, "resource": {}, "resourceLink": {}},
            "updateModelContext": {"text": {}, "structuredContent": {}},
            "sandbox": sandbox,
        }

    def context(self) -> dict[str, object]:
        return {
            "toolInfo": {"tool": self.tool},
            "theme": self.host.theme,
            "displayMode": self.display_mode,
            "availableDisplayModes": list(HOST_DISPLAY_MODES),
            "containerDimensions": {"width": self.host.width, "maxHeight": self.host.height},
            "locale": self.host.locale,
            "timeZone": self.host.time_zone,
            "userAgent": f"{self.host.name}/{self.host.version}",
            "platform": "web",
            "deviceCapabilities": {"touch": False, "hover": True},
        }

    def _on_display_mode(self, request_id: object, params: dict[str, object]) -> None:
        mode = params.get("mode")
        if not isinstance(mode, str) or mode not in ("inline", "fullscreen", "pip"):
            self._refuse(
                request_id,
                INVALID_PARAMS,
                "mode must be inline, fullscreen or pip",
                blame=f"asked for the display mode {json.dumps(mode)[:60]}, which the spec does not know",
            )
            return
        self._keep(self.record.display_modes, mode)
        if self.app_modes is not None and mode not in self.app_modes:
            self.error(f'asked for the display mode "{mode}", which it did not declare in availableDisplayModes')
        allowed = self.app_modes is None or mode in self.app_modes
        if allowed and mode in HOST_DISPLAY_MODES and mode != self.display_mode:
            self.display_mode = mode
            self._answer(request_id, {"mode": mode})
            self.send(
                {"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed", "params": {"displayMode": mode}}
            )
            return
        self._answer(request_id, {"mode": self.display_mode})

    def _on_notification(self, method: str, params: dict[str, object]) -> None:
        if method == "ui/notifications/initialized":
            if not self.initialize_answered:
                self.error("said ui/notifications/initialized before it sent ui/initialize")
                return
            if not self.initialized:
                self.initialized = True
                held, self._held = self._held, []
                for message in held:
                    self.send(message)
            return
        if method == "ui/notifications/size-changed":
            self._keep(self.record.sizes, params)
            width, height = params.get("width"), params.get("height")
            if any(
                v is not None and (not isinstance(v, int | float) or isinstance(v, bool) or v < 0)
                for v in (width, height)
            ):
                self.error(f"sent a size change that is not a size: {json.dumps(params)[:120]}")
                return
            self._busy += 1
            self._spawn(self._resized(params))
        elif method == "ui/notifications/request-teardown":
            self.record.teardown_requests += 1
        elif method == "notifications/message":
            self._keep(self.record.logs, params)
        elif method in _APP_NOTIFICATIONS:
            pass
        else:
            self.error(f"sent the notification {method[:100]}, which is not one of the extension's")

    async def _resized(self, params: dict[str, object]) -> None:
        try:
            await self._resize(params)
        except Exception as exc:
            self.note("host", None, f"could not resize the app: {type(exc).__name__}: {str(exc)[:200]}")
        finally:
            self._busy -= 1
            self._wake()

    async def _forward(self, request_id: object, method: str, params: dict[str, object]) -> None:
        """A request the app asks the host to make of the server: sent on the scenario's session."""
        call: AppCall | None = None
        try:
            if method == "tools/call":
                name, arguments = params.get("name"), params.get("arguments")
                if not isinstance(name, str) or (arguments is not None and not isinstance(arguments, dict)):
                    self._refuse(
                        request_id,
                        INVALID_PARAMS,
                        "tools/call takes a name and arguments (an object)",
                        blame=f"sent tools/call with params the protocol does not allow: "
                        f"{json.dumps(params, default=str)[:200]}",
                    )
                    return
                call = AppCall(name, dict(arguments) if isinstance(arguments, dict) else {})
                self._keep(self.record.calls, call)
                refused = await self._refusal(name)
                if refused is not None:
                    call.refused, call.done = refused, True
                    self._refuse(request_id, REFUSED, refused, blame=f'called the tool "{name}", {refused}')
                    return
            elif method == "resources/read" and not isinstance(params.get("uri"), str):
                self._refuse(
                    request_id, INVALID_PARAMS, "resources/read takes a uri", blame="sent resources/read without a uri"
                )
                return
            result, error = await self._proxy(method, params)
            if call is not None:
                call.result, call.error, call.done = result, error, True
            if error is not None:
                self.send({"jsonrpc": "2.0", "id": request_id, "error": error})
            else:
                self._answer(request_id, result or {})
        except Exception as exc:  # the host's own failure: the app gets an error, the log says why
            if call is not None:
                call.done = True
            self.note("host", None, f"{method} failed in the host: {type(exc).__name__}: {str(exc)[:300]}")
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32603, "message": f"the host could not forward {method}"},
                }
            )
        finally:
            self._busy -= 1
            self._wake()

    async def _refusal(self, name: str) -> str | None:
        """Why the host refuses the app a tool (its visibility leaves out "app"), or None."""
        listed = next((t for t in await self._tools() if t.get("name") == name), None)
        if listed is None:
            return None  # the server answers for a tool it does not list
        seen = visibility(listed)
        if "app" in seen:
            return None
        return f"which its _meta.ui.visibility ({json.dumps(list(seen))}) keeps from apps: the host refuses it"

    # -- teardown ------------------------------------------------------------------------------
    async def teardown(self, timeout: float) -> str | None:
        """`ui/resource-teardown`, and the app's answer awaited at most `timeout` s. What went wrong, or None."""
        if not self.initialized or self.closed or self.stopped is not None:
            return None
        request_id = self._next_id
        self._next_id += 1
        answer: asyncio.Future[dict[str, object]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = answer
        self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "ui/resource-teardown",
                "params": {"reason": "the scenario ended"},
            }
        )
        try:
            await asyncio.wait_for(answer, timeout)
        except TimeoutError:
            self._waiting.pop(request_id, None)
            self.note("host", None, f"the app did not answer ui/resource-teardown within {timeout:g} s")
            return f"did not answer ui/resource-teardown within {timeout:g} s"
        return None

    async def close(self) -> None:
        """Stop sending and drop what is in flight (the page is going away)."""
        self.closed = True
        self._outbox.put_nowait(None)
        for task in list(self._tasks):
            task.cancel()
        self._sender.cancel()
        await asyncio.gather(self._sender, *self._tasks, return_exceptions=True)
        await self._notify_all()
