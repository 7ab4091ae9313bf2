"""The demo shop: an order/inventory service plus user accounts, as an MCP server.

mcp-bdd's own features run against this server, so it deliberately touches every MCP feature
a scenario can check: structured tool output, error results, progress, logging, image and
resource-link content, resources (text, binary, templates, subscriptions), prompts,
completions, list-changed notifications and the client's side (sampling, with tools too,
elicitation, in URL mode too, and roots).

Configuration is read from the environment when `create_server()` is called (never at import),
so one process can build servers for several scenarios with different fakes:

- ``SHOP_DB``: path of a SQLite file. Table ``inventory(product_id, quantity[, price])`` is the
  catalogue; when it is missing it is created and seeded (PROD-123, PROD-456, PROD-789).
  Tables ``orders`` and ``users`` are created as needed in the same file. The schema is
  prepared on first use, not at start-up, so a test may fill the file after the server starts.
  Unset: a private in-memory database, seeded the same way.
- ``AUTH_ISSUER`` (and ``AUTH_AUDIENCE``, ``AUTH_SCOPES``, ``AUTH_RESOURCE``): protect the HTTP
  transports with OAuth (see `demo.auth`); unset: no protection.
- ``PAYMENTS_URL``: base URL of the payment provider. ``pay_order`` sends
  ``POST {PAYMENTS_URL}/charges`` with ``{"order_id", "amount"}``; any 2xx means paid (a JSON
  body may carry the charge ``id``), anything else or no answer within 3 s means the payment
  failed. Unset: payments are simulated and always succeed.

Both protocol eras are served. Client-side requests (sampling, elicitation, roots) go through
`Resolve(...)` resolvers, which the SDK turns into mid-call server-to-client requests on
2025-11-25 and into input-required rounds on 2026-07-28. Change notifications go to
`resources/subscribe` subscribers and the session (2025-11-25) and to `subscriptions/listen`
streams (2026-07-28). `link_payment_account` is the exception: its URL elicitation is asked in
the middle of the call and reported complete (notifications/elicitation/complete) on the call's
own stream, so it serves 2025-11-25 sessions only and refuses 2026-07-28 ones with the reason.
"""

# No `from __future__ import annotations` here: the SDK reads `Annotated[..., Resolve(fn)]` with
# typing.get_type_hints, which cannot see resolvers defined inside create_server() if annotations
# are strings.
import base64
import functools
import json
import os
import re
import sqlite3
import struct
import threading
import uuid
import warnings
import weakref
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import anyio
import httpx2
from mcp.server.caching import CacheHint
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import (
    AssistantMessage,
    Context,
    Elicit,
    ElicitationResult,
    Image,
    ListRoots,
    MCPServer,
    Message,
    Resolve,
    Sample,
    UserMessage,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import (
    INVALID_PARAMS,
    Annotations,
    AudioContent,
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitRequest,
    ElicitRequestFormParams,
    EmbeddedResource,
    EmptyResult,
    Icon,
    InputRequiredResult,
    ListRootsResult,
    LoggingLevel,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
    ToolChoice,
    ToolUseContent,
    UnsubscribeRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

from demo.auth import protection_from_env

__all__ = ["create_server"]

# Logging is deprecated as of 2026-07-28 but still part of the protocol both eras speak; the demo
# uses it on purpose. Silence the SDK's deprecation warning for calls made from this module only.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning, module=rf"{re.escape(__name__)}$")

CATALOG_URI = "shop://catalog"
LOGO_URI = "shop://logo.png"
DOCS_TEMPLATE = "shop://docs/{topic}"
PAYMENT_TIMEOUT_SECONDS = 3.0

DEFAULT_CATALOGUE: tuple[tuple[str, int, float], ...] = (
    ("PROD-123", 10, 19.99),
    ("PROD-456", 0, 5.00),
    ("PROD-789", 3, 12.50),
)
GREETING_NAMES = ("Ada", "Adam", "Alan", "Barbara", "Grace", "Linus", "Margaret")
DOC_TOPICS = ("inventory", "orders", "payments", "returns", "shipping")
LOG_LEVELS: tuple[LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)

INSTRUCTIONS = """\
A small shop that takes orders. Call list_products to see what is for sale, check_stock before
ordering, create_order to reserve stock, pay_order to charge the customer and cancel_order to
release the stock again. User accounts: create_user, get_user, delete_user (cannot be undone)."""


def _png_1x1() -> bytes:
    """A valid 1x1 transparent PNG, built rather than pasted so it is obviously well-formed."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)  # 1x1, 8-bit RGBA
    pixels = zlib.compress(b"\x00\x00\x00\x00\x00")  # filter byte + one RGBA pixel
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


LOGO_PNG = _png_1x1()
LOGO_DATA_URL = "data:image/png;base64," + base64.b64encode(LOGO_PNG).decode("ascii")


def _wav_chime() -> bytes:
    """A valid 8 kHz mono 8-bit WAV of a few samples (the shop's jingle), built like the logo."""
    samples = bytes([128, 160, 128, 96] * 8)
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)  # PCM, mono, 8 kHz, 8000 B/s, align 1, 8 bits
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


JINGLE_WAV = _wav_chime()
RETURNS_POLICY = "Returns: any unused item within 30 days, refunded to the original payment method."


# --------------------------------------------------------------------------- output models


class Product(BaseModel):
    product_id: str
    quantity: int
    price: float | None = Field(description="Unit price; null when the catalogue has no price column")


class ProductList(BaseModel):
    items: list[Product]
    count: int


class Stock(BaseModel):
    product_id: str
    quantity: int
    in_stock: bool


class OrderItem(BaseModel):
    product_id: str
    quantity: int
    unit_price: float | None


class Order(BaseModel):
    id: str = Field(description="ORD- followed by 8 hex digits")
    status: Literal["pending", "paid", "cancelled"]
    product_id: str
    quantity: int
    total: float | None
    customer_email: str | None
    charge_id: str | None = Field(description="The payment provider's charge id once paid")
    created_at: str
    items: list[OrderItem]


class ImportReport(BaseModel):
    imported: int
    product_ids: list[str]


class SlowResult(BaseModel):
    slept: float


class User(BaseModel):
    id: str
    email: str
    name: str
    created_at: str = Field(description="ISO 8601 date-time (UTC)")


class DeletedUser(BaseModel):
    id: str
    deleted: bool


#: `register_customer`'s input schema as written, in JSON Schema 2020-12: the dialect named, a
#: definition with an anchor, composition and conditional keywords, no extra properties. The
#: SDK derives a tool's schema from its signature and could say none of this, so the shop states
#: it (the conformance suite's `json-schema-2020-12` checks these keywords survive tools/list).
CUSTOMER_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


class Address(BaseModel):
    street: str | None = None
    city: str | None = None


class Customer(BaseModel):
    name: str | None
    contact: str = Field(description="how the shop reaches the customer: phone:<number> or email:<address>")
    city: str | None = None


class DeleteConfirmation(BaseModel):
    """What `confirm_delete` asks the user (the elicitation's requested schema)."""

    confirm: bool = Field(description="Really delete the user?")
    reason: str = Field(description="Why the account is being deleted")


class ConfirmDeleteResult(BaseModel):
    action: Literal["accepted", "declined", "cancelled"]
    confirm: bool | None
    reason: str | None
    deleted: bool


class GiftRecipient(BaseModel):
    """What `send_gift` asks the user first (the elicitation's requested schema)."""

    name: str = Field(description="Who is the gift for?")


class Gift(BaseModel):
    product_id: str
    recipient: str
    card: str


class ExportTarget(BaseModel):
    """What `export_catalog` asks the user (beside the client's roots and a title, in the same round)."""

    file_name: str = Field(description="File name for the export")


class CatalogExport(BaseModel):
    path: str
    products: int
    title: str


class Occasion(BaseModel):
    """What the `gift_note` prompt asks the user (the elicitation's requested schema)."""

    occasion: str = Field(description="What is the occasion?")


class Summary(BaseModel):
    order_id: str
    summary: str
    model: str


class Recommendation(BaseModel):
    need: str
    recommendation: str = Field(description="What the client's model recommended")
    tools_offered: list[str] = Field(description="The shop tools the model was offered while it sampled")
    tools_asked: list[str] = Field(description="The offered tools the model asked to call instead of answering")


class PaymentLink(BaseModel):
    email: str
    link_id: str = Field(description="The URL elicitation's id, also in the consent page's address")
    action: Literal["accepted", "declined", "cancelled"]
    linked: bool


class RootEntry(BaseModel):
    uri: str
    name: str | None


class RootsReport(BaseModel):
    uris: list[str]
    roots: list[RootEntry]


class AdminTools(BaseModel):
    added: list[str]


class PurgeReport(BaseModel):
    purged: int


# --------------------------------------------------------------------------- storage


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class _Store:
    """The shop's SQLite database.

    A file database gets a fresh connection per operation, so rows a test writes into the file
    (the fake database) are always seen. Without ``SHOP_DB`` one in-memory connection lives as
    long as the server. The schema is prepared on first use.
    """

    def __init__(self, path: str | None) -> None:
        self._path = path
        self._memory: sqlite3.Connection | None = None
        if path is None:
            self._memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            self._memory.row_factory = sqlite3.Row
        self._ready = False
        # Sync tools run in worker threads: concurrent first calls must not prepare the schema twice
        # (found by features/accounts/users.feature "Five sign-ups at once").
        self._prepare_lock = threading.Lock()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if self._memory is not None:
            db = self._memory
        else:
            assert self._path is not None
            db = sqlite3.connect(self._path, timeout=5, isolation_level=None)
            db.row_factory = sqlite3.Row
        try:
            if not self._ready:
                with self._prepare_lock:
                    if not self._ready:
                        self._prepare(db)
                        self._ready = True
            yield db
        finally:
            if db is not self._memory:
                db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; `BEGIN IMMEDIATE` so concurrent orders never oversell."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as db:
            yield db

    @staticmethod
    def _prepare(db: sqlite3.Connection) -> None:
        exists = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'inventory'").fetchone()
        if not exists:
            db.execute("CREATE TABLE inventory (product_id TEXT PRIMARY KEY, quantity INTEGER NOT NULL, price REAL)")
            db.executemany("INSERT INTO inventory VALUES (?, ?, ?)", DEFAULT_CATALOGUE)
        db.execute(
            "CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, product_id TEXT, quantity INTEGER,"
            " unit_price REAL, total REAL, status TEXT, customer_email TEXT, charge_id TEXT, created_at TEXT)"
        )
        db.execute("CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, email TEXT, name TEXT, created_at TEXT)")

    # ---- inventory

    @staticmethod
    def _price_expr(db: sqlite3.Connection) -> str:
        columns = {row[1] for row in db.execute("PRAGMA table_info(inventory)")}
        return "price" if "price" in columns else "NULL"

    def products(self) -> list[Product]:
        with self.read() as db:
            rows = db.execute(
                f"SELECT CAST(product_id AS TEXT), quantity, {self._price_expr(db)} FROM inventory ORDER BY rowid"
            ).fetchall()
        return [Product(product_id=r[0], quantity=int(r[1] or 0), price=r[2]) for r in rows]

    @staticmethod
    def _product(db: sqlite3.Connection, product_id: str) -> tuple[int, float | None] | None:
        row = db.execute(
            f"SELECT quantity, {_Store._price_expr(db)} FROM inventory WHERE CAST(product_id AS TEXT) = ?",
            (product_id,),
        ).fetchone()
        return None if row is None else (int(row[0] or 0), None if row[1] is None else float(row[1]))

    def stock(self, product_id: str) -> Stock:
        with self.read() as db:
            found = self._product(db, product_id)
        if found is None:
            raise ToolError(_unknown_product(product_id))
        return Stock(product_id=product_id, quantity=found[0], in_stock=found[0] > 0)

    def upsert_product(self, db: sqlite3.Connection, product_id: str, quantity: int, price: float) -> None:
        if self._product(db, product_id) is None:
            if self._price_expr(db) == "price":
                db.execute(
                    "INSERT INTO inventory (product_id, quantity, price) VALUES (?, ?, ?)",
                    (product_id, quantity, price),
                )
            else:
                db.execute("INSERT INTO inventory (product_id, quantity) VALUES (?, ?)", (product_id, quantity))
        else:
            db.execute(
                "UPDATE inventory SET quantity = quantity + ? WHERE CAST(product_id AS TEXT) = ?",
                (quantity, product_id),
            )

    # ---- orders

    def create_order(self, product_id: str, quantity: int, customer_email: str | None) -> Order:
        if quantity < 1:
            raise ToolError(f"Quantity must be at least 1 (got {quantity}). Call create_order with quantity >= 1.")
        with self.transaction() as db:
            found = self._product(db, product_id)
            if found is None:
                raise ToolError(_unknown_product(product_id))
            available, price = found
            if available < quantity:
                raise ToolError(
                    f"Insufficient stock for {product_id}: requested {quantity}, only {available} available. "
                    f"Order at most {available}, or choose another product (see list_products)."
                    if available
                    else f"Insufficient stock for {product_id}: requested {quantity}, but it is out of stock "
                    f"(0 available). Choose another product; call list_products to see what is in stock."
                )
            db.execute(
                "UPDATE inventory SET quantity = quantity - ? WHERE CAST(product_id AS TEXT) = ?",
                (quantity, product_id),
            )
            order_id = f"ORD-{uuid.uuid4().hex[:8].upper()}"
            total = None if price is None else round(price * quantity, 2)
            db.execute(
                "INSERT INTO orders (id, product_id, quantity, unit_price, total, status, customer_email,"
                " charge_id, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, NULL, ?)",
                (order_id, product_id, quantity, price, total, customer_email, _now()),
            )
            return self._order(db, order_id)

    @staticmethod
    def _order(db: sqlite3.Connection, order_id: str) -> Order:
        row = db.execute(
            "SELECT id, product_id, quantity, unit_price, total, status, customer_email, charge_id,"
            " created_at FROM orders WHERE id = ?",
            (order_id,),
        ).fetchone()
        if row is None:
            raise ToolError(
                f"Order {order_id} does not exist. Use the id returned by create_order (it looks like ORD-1A2B3C4D)."
            )
        return Order(
            id=row[0],
            product_id=row[1],
            quantity=row[2],
            total=row[4],
            status=row[5],
            customer_email=row[6],
            charge_id=row[7],
            created_at=row[8],
            items=[OrderItem(product_id=row[1], quantity=row[2], unit_price=row[3])],
        )

    def order(self, order_id: str) -> Order:
        with self.read() as db:
            return self._order(db, order_id)

    def set_paid(self, order_id: str, charge_id: str) -> Order:
        with self.transaction() as db:
            db.execute("UPDATE orders SET status = 'paid', charge_id = ? WHERE id = ?", (charge_id, order_id))
            return self._order(db, order_id)

    def cancel_order(self, order_id: str) -> Order:
        with self.transaction() as db:
            order = self._order(db, order_id)
            if order.status == "cancelled":
                raise ToolError(f"Order {order_id} is already cancelled; its stock was released then. Nothing to do.")
            db.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (order_id,))
            db.execute(
                "UPDATE inventory SET quantity = quantity + ? WHERE CAST(product_id AS TEXT) = ?",
                (order.quantity, order.product_id),
            )
            return self._order(db, order_id)

    def purge_orders(self) -> int:
        with self.transaction() as db:
            return db.execute("DELETE FROM orders WHERE status = 'cancelled'").rowcount

    # ---- users

    def create_user(self, email: str, name: str) -> User:
        if "@" not in email.strip("@") or " " in email:
            raise ToolError(f"{email!r} is not a valid email address. Pass an address like ada@example.com.")
        with self.transaction() as db:
            taken = db.execute("SELECT id FROM users WHERE lower(email) = lower(?)", (email,)).fetchone()
            if taken:
                raise ToolError(
                    f"A user with email {email} already exists (id {taken[0]}). "
                    "Call get_user with that id, or create the user with another email."
                )
            user = User(id=str(uuid.uuid4()), email=email, name=name, created_at=_now())
            db.execute("INSERT INTO users VALUES (?, ?, ?, ?)", (user.id, user.email, user.name, user.created_at))
            return user

    def user(self, user_id: str) -> User:
        with self.read() as db:
            row = db.execute("SELECT id, email, name, created_at FROM users WHERE id = ?", (user_id,)).fetchone()
        if row is None:
            raise ToolError(f"User {user_id} does not exist. Use the id returned by create_user.")
        return User(id=row[0], email=row[1], name=row[2], created_at=row[3])

    def delete_user(self, user_id: str) -> DeletedUser:
        self.user(user_id)
        with self.transaction() as db:
            db.execute("DELETE FROM users WHERE id = ?", (user_id,))
        return DeletedUser(id=user_id, deleted=True)


def _unknown_product(product_id: str) -> str:
    return f"Product {product_id} does not exist. Call list_products to see valid product ids."


# --------------------------------------------------------------------------- payments


async def _charge(payments_url: str | None, order: Order) -> str:
    """Charge `order` with the payment provider and return the charge id.

    Raises:
        ToolError: The provider answered non-2xx or could not be reached in time; the message
            tells the model the order is still pending and what to do.
    """
    if payments_url is None:
        return f"ch_simulated_{order.id.lower()}"
    url = payments_url.rstrip("/") + "/charges"
    body = {"order_id": order.id, "amount": order.total if order.total is not None else 0}
    try:
        # trust_env=False: the provider is addressed directly (often a local fake); no proxies.
        async with httpx2.AsyncClient(timeout=PAYMENT_TIMEOUT_SECONDS, trust_env=False) as client:
            response = await client.post(url, json=body)
    except httpx2.TimeoutException:
        raise ToolError(
            f"The payment provider did not answer within {PAYMENT_TIMEOUT_SECONDS:g} s. "
            f"The order {order.id} is still pending; retry pay_order later."
        ) from None
    except httpx2.HTTPError as exc:
        raise ToolError(
            f"The payment provider is unreachable ({type(exc).__name__}). "
            f"The order {order.id} is still pending; retry pay_order later."
        ) from None
    status = response.status_code
    if status >= 500:
        raise ToolError(
            f"The payment provider is unavailable (HTTP {status}). "
            f"The order {order.id} is still pending; retry pay_order later."
        )
    if not 200 <= status < 300:
        raise ToolError(
            f"The payment provider rejected the charge (HTTP {status}). "
            f"The order {order.id} is still pending; do not retry with the same details - "
            "ask the customer for another payment method."
        )
    try:
        data: Any = response.json()
    except ValueError:
        data = None
    charge_id = data.get("id") if isinstance(data, dict) else None
    return str(charge_id) if charge_id else f"ch_{uuid.uuid4().hex[:12]}"


# --------------------------------------------------------------------------- protocol helpers


def _connection(session: ServerSession) -> Connection:
    # The per-connection object is not public on ServerSession (each request gets its own
    # ServerSession); it carries `state`, a per-connection scratch dict, and the standalone
    # channel used for `notifications/resources/updated`.
    return session._connection  # pyright: ignore[reportPrivateUsage]


def _is_modern(ctx: Context[Any, Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


_LOG_LEVEL_KEY = "demo.shop/log_level"


async def _log(ctx: Context[Any, Any], level: LoggingLevel, message: str) -> None:
    """Log to the client, honouring `logging/setLevel` on 2025-11-25 connections.

    On 2026-07-28 the SDK itself drops entries the request did not opt in to (its `_meta` log level).
    """
    if not _is_modern(ctx):
        threshold = _connection(ctx.session).state.get(_LOG_LEVEL_KEY)
        if threshold in LOG_LEVELS and LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return
    # What ctx.log() does, called directly so the deprecation warning is attributed to (and
    # silenced for) this module.
    await ctx.session.send_log_message(level, message, logger="shop", related_request_id=ctx.request_id)


class _Subscriptions:
    """`resources/subscribe` bookkeeping for 2025-11-25 connections (uri -> subscribed connections)."""

    def __init__(self) -> None:
        self._by_uri: dict[str, weakref.WeakSet[Connection]] = {}

    async def subscribe(self, ctx: ServerRequestContext[Any], params: SubscribeRequestParams) -> EmptyResult:
        self._by_uri.setdefault(str(params.uri), weakref.WeakSet()).add(_connection(ctx.session))
        return EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams) -> EmptyResult:
        self._by_uri.get(str(params.uri), weakref.WeakSet()).discard(_connection(ctx.session))
        return EmptyResult()

    async def updated(self, ctx: Context[Any, Any], uri: str) -> None:
        """Tell every subscriber that `uri` changed, in both eras."""
        await ctx.notify_resource_updated(uri)  # 2026-07-28: subscriptions/listen streams
        for connection in list(self._by_uri.get(uri, ())):
            await connection.send_resource_updated(uri)  # best-effort, never raises


async def _occasion(ctx: Context[Any, Any]) -> str | InputRequiredResult:
    """The occasion the user gave, or (on 2026-07-28, before they did) the question. A prompt has no
    resolvers: it reads the answer from the resent request itself, and asks again without one."""
    answer = (ctx.input_responses or {}).get("occasion")
    content = getattr(answer, "content", None)
    if isinstance(content, dict) and isinstance(content.get("occasion"), str):
        return str(content["occasion"])
    question = "What is the occasion?"
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.elicitation is None:  # never ask a client that cannot answer
        return "a special occasion"
    if (ctx.protocol_version or "") < "2026-07-28":
        result = await ctx.elicit(question, Occasion)
        return result.data.occasion if result.action == "accept" else "no particular occasion"
    schema = Occasion.model_json_schema()
    params = ElicitRequestFormParams(message=question, requested_schema=schema)
    return InputRequiredResult(input_requests={"occasion": ElicitRequest(params=params)})


def _require_client_feature(
    ctx: Context[Any, Any], feature: Literal["sampling", "elicitation", "roots"], tool: str
) -> None:
    """Fail with an actionable error result instead of the SDK's bare protocol error.

    Without this the SDK answers a missing client capability with JSON-RPC error -32021 naming
    the resolver's qualified name, which tells a model nothing.
    """
    capabilities = ctx.client_capabilities
    if capabilities is None or getattr(capabilities, feature) is None:
        raise ToolError(
            f"{tool} needs a client that supports {feature}, and this client did not declare the "
            f"{feature} capability. Connect with a client that handles {feature} requests."
        )


async def _set_log_level(ctx: ServerRequestContext[Any], params: SetLevelRequestParams) -> EmptyResult:
    _connection(ctx.session).state[_LOG_LEVEL_KEY] = params.level
    return EmptyResult()


async def _tools_changed(ctx: Context[Any, Any]) -> None:
    if _is_modern(ctx):
        await ctx.notify_tools_changed()  # delivered on subscriptions/listen streams
    else:
        await ctx.session.send_tool_list_changed()


# --------------------------------------------------------------------------- the server


def create_server() -> MCPServer:
    """Build a fresh shop server configured from ``SHOP_DB`` and ``PAYMENTS_URL`` (read now)."""
    store = _Store(os.environ.get("SHOP_DB") or None)
    payments_url = os.environ.get("PAYMENTS_URL") or None
    subscriptions = _Subscriptions()

    # Caching hints (2026-07-28): the prompts and the resource templates never change while the shop
    # runs, so any client may keep them an hour and share them; everything else may change at once
    # (the admin tools, the catalogue), so it is stale at once and private (the SDK's default).
    hour = CacheHint(ttl_ms=3_600_000, scope="public")
    hints: dict[Any, CacheHint] = {"prompts/list": hour, "resources/templates/list": hour}
    server = MCPServer("shop", version="1.0.0", instructions=INSTRUCTIONS, cache_hints=hints, **protection_from_env())
    lowlevel = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
    # MCPServer has no public hook for these 2025-11-25 features; register them on its lowlevel server.
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscriptions.subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, subscriptions.unsubscribe)
    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, _set_log_level)
    # Every transport builds the initialize result with `create_initialization_options()`; default
    # it to advertising the list-changed notifications this server sends (2025-11-25 handshake).
    lowlevel.create_initialization_options = functools.partial(  # type: ignore[method-assign]
        lowlevel.create_initialization_options,
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True),
    )

    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
    destructive = ToolAnnotations(read_only_hint=False, destructive_hint=True)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False)
    # pay_order reaches the payment provider: beyond the shop, so open-world
    charges = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)

    # ---- shop

    @server.tool(annotations=read_only)
    def list_products() -> ProductList:
        """List every product in the catalogue with its stock quantity and unit price."""
        items = store.products()
        return ProductList(items=items, count=len(items))

    # `x-mcp-header`: on 2026-07-28 over HTTP the client mirrors product_id as `Mcp-Param-Product`,
    # so a gateway can route stock lookups by product without reading the body (the SDK checks it)
    @server.tool(annotations=read_only)
    def check_stock(product_id: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Product"})]) -> Stock:
        """Check how many units of a product are in stock (e.g. product_id "PROD-123")."""
        return store.stock(product_id)

    @server.tool(annotations=writes)
    async def create_order(product_id: str, quantity: int, ctx: Context, customer_email: str | None = None) -> Order:
        """Create a pending order for a product and reserve its stock.

        Fails when the product does not exist or not enough units are in stock. Pay the order
        with pay_order; cancel_order releases the stock again.
        """
        order = store.create_order(product_id, quantity, customer_email)
        await _log(ctx, "info", f"Order {order.id} created: {quantity} x {product_id}")
        await subscriptions.updated(ctx, CATALOG_URI)
        return order

    pay_description = (
        "Pay a pending order through the payment provider; on success the order status becomes 'paid'."
        + ("" if payments_url else " (No payment provider is configured: payments are simulated and succeed.)")
    )

    @server.tool(annotations=charges, description=pay_description)
    async def pay_order(order_id: str, ctx: Context) -> Order:
        order = store.order(order_id)
        if order.status == "paid":
            return order
        if order.status == "cancelled":
            raise ToolError(f"Order {order_id} is cancelled and cannot be paid. Create a new order with create_order.")
        await _log(ctx, "debug", f"Charging {order.total} for order {order_id}")
        charge_id = await _charge(payments_url, order)
        await _log(ctx, "info", f"Order {order_id} paid (charge {charge_id})")
        return store.set_paid(order_id, charge_id)

    @server.tool(annotations=read_only)
    def get_order(order_id: str) -> Order:
        """Get an order by its id (ORD-xxxxxxxx): status, items, total and payment charge id."""
        return store.order(order_id)

    @server.tool(annotations=destructive)
    async def cancel_order(order_id: str, ctx: Context) -> Order:
        """Cancel an order and release its reserved stock back into the inventory."""
        order = store.cancel_order(order_id)
        await subscriptions.updated(ctx, CATALOG_URI)
        return order

    @server.tool(annotations=writes)
    async def import_catalog(ctx: Context, count: int = 5) -> ImportReport:
        """Import `count` products (IMP-001, IMP-002, ...) into the catalogue, reporting progress."""
        if count < 0 or count > 1000:
            raise ToolError(f"count must be between 0 and 1000 (got {count}).")
        await _log(ctx, "info", f"Importing {count} products")
        imported: list[str] = []
        for i in range(1, count + 1):
            product_id = f"IMP-{i:03d}"
            with store.transaction() as db:
                store.upsert_product(db, product_id, 1, 9.99)
            imported.append(product_id)
            await _log(ctx, "debug", f"Imported {product_id}")
            await ctx.report_progress(i, count, f"Imported {i} of {count}")
            await anyio.sleep(0.001)
        await _log(ctx, "info", f"Import finished: {count} products")
        return ImportReport(imported=count, product_ids=imported)

    # ---- tutorial and test helpers

    @server.tool(title="Add two numbers", annotations=read_only)
    def add(a: int, b: int) -> int:
        """Add two integers and return their sum as {"result": a + b}."""
        return a + b

    @server.tool(annotations=read_only)
    async def slow(seconds: float) -> SlowResult:
        """Wait for the given number of seconds (at most 300) before answering; for timeout tests."""
        await anyio.sleep(max(0.0, min(seconds, 300.0)))
        return SlowResult(slept=seconds)

    @server.tool(annotations=read_only, structured_output=False)
    def echo(text: str) -> str:
        """Return the given text unchanged, as plain text content (no structured output)."""
        return text

    @server.tool(annotations=read_only, structured_output=False)
    def render_html() -> str:
        """Return an HTML snippet with active content; for checking that reports escape server output."""
        return (
            "<h1>Special offer</h1><script>window.__pwned=1</script>"
            '<img src=x onerror="window.__pwned=1"> & "quotes" \'too\''
        )

    @server.tool(annotations=read_only, icons=[Icon(src=LOGO_DATA_URL, mime_type="image/png", sizes=["1x1"])])
    def get_logo() -> Image:
        """Return the shop logo as an inline PNG image content block."""
        return Image(data=LOGO_PNG, format="png")

    @server.tool(annotations=read_only)
    def find_docs(topic: str) -> ResourceLink:
        """Find the documentation page for a topic and return a link to the resource shop://docs/{topic}."""
        return ResourceLink(
            type="resource_link",
            uri=f"shop://docs/{topic}",
            name=f"docs-{topic}",
            title=f"Shop documentation: {topic}",
            mime_type="text/markdown",
        )

    @server.tool(annotations=read_only, structured_output=False)
    def play_jingle() -> list[AudioContent | TextContent]:
        """Play the shop's jingle: a short WAV audio clip for the customer and a note for the assistant."""
        audio = base64.b64encode(JINGLE_WAV).decode("ascii")
        for_user = Annotations(audience=["user"], priority=0.5)
        for_model = Annotations(audience=["assistant"], priority=1.0)
        return [
            AudioContent(type="audio", data=audio, mime_type="audio/wav", annotations=for_user),
            TextContent(type="text", text="The jingle played (0.004 s of audio).", annotations=for_model),
        ]

    @server.tool(annotations=read_only, structured_output=False)
    def get_return_policy() -> list[EmbeddedResource]:
        """Return the shop's return policy as an embedded resource (shop://docs/returns with its text)."""
        policy = TextResourceContents(uri="shop://docs/returns", mime_type="text/markdown", text=RETURNS_POLICY)
        return [EmbeddedResource(type="resource", resource=policy)]

    # ---- users

    @server.tool(annotations=writes)
    def create_user(email: str, name: str) -> User:
        """Create a user account; returns its id (a UUID), email, name and creation time."""
        return store.create_user(email, name)

    @server.tool(annotations=read_only)
    def get_user(user_id: str) -> User:
        """Get a user account by its id (the UUID returned by create_user)."""
        return store.user(user_id)

    @server.tool(annotations=destructive)
    def delete_user(user_id: str) -> DeletedUser:
        """Permanently delete a user account. This cannot be undone."""
        return store.delete_user(user_id)

    @server.tool(annotations=writes)
    def register_customer(
        name: str | None = None,
        address: Address | None = None,
        contactMethod: Literal["phone", "email"] | None = None,  # the schema's own spelling
        phone: str | None = None,
        email: str | None = None,
    ) -> Customer:
        """Register a customer for deliveries: a name, an address, and a phone number or an email
        address (the phone when contactMethod is "phone", else the email)."""
        by_phone = contactMethod == "phone" or (contactMethod is None and email is None)
        reach = phone if by_phone else email
        if reach is None:
            raise ToolError(f"register_customer needs {'phone' if by_phone else 'email'} to reach the customer")
        return Customer(
            name=name, contact=f"{'phone' if by_phone else 'email'}:{reach}", city=address.city if address else None
        )

    # the listed schema is CUSTOMER_SCHEMA, not the one the SDK derives from the signature (which
    # validates the arguments as before): MCPServer has no public way to state a tool's schema
    customer_tool = server._tool_manager.get_tool("register_customer")  # pyright: ignore[reportPrivateUsage]
    assert customer_tool is not None
    customer_tool.parameters = CUSTOMER_SCHEMA

    # ---- the client's side: sampling, elicitation, roots (both eras, via resolvers)

    def summary_request(order_id: str, ctx: Context) -> Sample:
        order = store.order(order_id)  # an unknown order fails before anything is asked
        _require_client_feature(ctx, "sampling", "summarize_order")
        text = (
            f"Summarize order {order.id} in one sentence: {order.quantity} x {order.product_id}, "
            f"total {order.total}, status {order.status}."
        )
        return Sample(
            [SamplingMessage(role="user", content=TextContent(type="text", text=text))],
            max_tokens=200,
            system_prompt="You write short order summaries for shop staff.",
        )

    @server.tool(annotations=read_only)
    async def summarize_order(
        order_id: str, sampled: Annotated[CreateMessageResult, Resolve(summary_request)]
    ) -> Summary:
        """Summarize an order in one sentence using the client's LLM (asks the client for sampling)."""
        content = sampled.content
        text = content.text if isinstance(content, TextContent) else str(content)
        return Summary(order_id=order_id, summary=text, model=sampled.model)

    def deletion_question(user_id: str, ctx: Context) -> Elicit[DeleteConfirmation]:
        user = store.user(user_id)
        _require_client_feature(ctx, "elicitation", "confirm_delete")
        return Elicit(f"Delete the account of {user.name} <{user.email}>? This cannot be undone.", DeleteConfirmation)

    @server.tool(annotations=destructive)
    def confirm_delete(
        user_id: str,
        answer: Annotated[ElicitationResult[DeleteConfirmation], Resolve(deletion_question)],
    ) -> ConfirmDeleteResult:
        """Ask the user to confirm (elicitation), then delete the account. This cannot be undone."""
        if answer.action != "accept":
            action: Literal["declined", "cancelled"] = "declined" if answer.action == "decline" else "cancelled"
            return ConfirmDeleteResult(action=action, confirm=None, reason=None, deleted=False)
        data = answer.data
        if data.confirm:
            store.delete_user(user_id)
        return ConfirmDeleteResult(action="accepted", confirm=data.confirm, reason=data.reason, deleted=data.confirm)

    def roots_request(ctx: Context) -> ListRoots:
        _require_client_feature(ctx, "roots", "list_roots")
        return ListRoots()

    @server.tool(annotations=read_only)
    def list_roots(roots: Annotated[ListRootsResult, Resolve(roots_request)]) -> RootsReport:
        """List the client's roots (the folders it exposes) and return their URIs."""
        entries = [RootEntry(uri=str(root.uri), name=root.name) for root in roots.roots]
        return RootsReport(uris=[entry.uri for entry in entries], roots=entries)

    # ---- several questions: in one round when independent, in two when one needs the other's answer

    def gift_recipient(ctx: Context) -> Elicit[GiftRecipient]:
        _require_client_feature(ctx, "elicitation", "send_gift")
        return Elicit("Who is the gift for?", GiftRecipient)

    def gift_card(recipient: Annotated[GiftRecipient, Resolve(gift_recipient)], ctx: Context) -> Sample:
        _require_client_feature(ctx, "sampling", "send_gift")
        note = f"Write a one-line gift card for {recipient.name}."
        return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=note))], max_tokens=100)

    @server.tool(annotations=writes)
    def send_gift(
        product_id: str,
        recipient: Annotated[GiftRecipient, Resolve(gift_recipient)],
        card: Annotated[CreateMessageResult, Resolve(gift_card)],
    ) -> Gift:
        """Send a product as a gift: asks the user who it is for, then the client's LLM for the card."""
        store.stock(product_id)  # an unknown product fails before anything is asked
        content = card.content
        text = content.text if isinstance(content, TextContent) else str(content)
        return Gift(product_id=product_id, recipient=recipient.name, card=text)

    def export_target(ctx: Context) -> Elicit[ExportTarget]:
        _require_client_feature(ctx, "elicitation", "export_catalog")
        return Elicit("Name the export file.", ExportTarget)

    def export_roots(ctx: Context) -> ListRoots:
        _require_client_feature(ctx, "roots", "export_catalog")
        return ListRoots()

    def export_title(ctx: Context) -> Sample:
        _require_client_feature(ctx, "sampling", "export_catalog")
        ask = "Write a one-line title for an export of the shop's catalogue."
        return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=ask))], max_tokens=50)

    @server.tool(annotations=writes)
    def export_catalog(
        target: Annotated[ExportTarget, Resolve(export_target)],
        roots: Annotated[ListRootsResult, Resolve(export_roots)],
        title: Annotated[CreateMessageResult, Resolve(export_title)],
    ) -> CatalogExport:
        """Export the catalogue to a file in the client's first root; asks the user for the file name,
        the client for its roots and its LLM for a title, all at once."""
        if not roots.roots:
            raise ToolError("export_catalog needs a client root to write to; the client exposes none.")
        folder = str(roots.roots[0].uri).rstrip("/")
        content = title.content
        said = content.text if isinstance(content, TextContent) else str(content)
        return CatalogExport(path=f"{folder}/{target.file_name}", products=len(store.products()), title=said)

    # ---- sampling with tools: the client's model may look up the stock while it answers

    stock_tool = Tool(
        name="check_stock",
        description="How many units of a product are in stock.",
        input_schema={"type": "object", "properties": {"product_id": {"type": "string"}}, "required": ["product_id"]},
    )

    def recommendation_request(need: str, ctx: Context) -> Sample:
        capabilities = ctx.client_capabilities
        sampling = capabilities.sampling if capabilities is not None else None
        if sampling is None or sampling.tools is None:  # the SDK's own refusal would name only a resolver
            raise ToolError(
                "recommend_products needs a client that supports tools in sampling (sampling.tools), so that "
                "its model can look up the stock; this client did not declare it. Use list_products instead."
            )
        ask = f"Recommend one product for a customer who needs {need}. The catalogue: " + ", ".join(
            p.product_id for p in store.products()
        )
        return Sample(
            [SamplingMessage(role="user", content=TextContent(type="text", text=ask))],
            max_tokens=200,
            tools=[stock_tool],
            tool_choice=ToolChoice(mode="auto"),
        )

    @server.tool(annotations=read_only)
    async def recommend_products(
        need: Annotated[str, Field(description="What the customer needs, e.g. a reading lamp")],
        sampled: Annotated[CreateMessageResultWithTools, Resolve(recommendation_request)],
    ) -> Recommendation:
        """Recommend a product for a customer's need using the client's LLM, which may call check_stock
        while it answers (asks the client for sampling with tools)."""
        blocks = sampled.content if isinstance(sampled.content, list) else [sampled.content]
        said = " ".join(b.text for b in blocks if isinstance(b, TextContent))
        asked = [b.name for b in blocks if isinstance(b, ToolUseContent)]
        return Recommendation(need=need, recommendation=said, tools_offered=[stock_tool.name], tools_asked=asked)

    # ---- a URL elicitation: the payment provider's consent page, out of band (2025-11-25 sessions)

    @server.tool(annotations=charges)
    async def link_payment_account(
        email: Annotated[str, Field(description="The customer's email address")], ctx: Context
    ) -> PaymentLink:
        """Link a customer's payment account: sends the user to the payment provider's consent page
        (a URL elicitation) and tells the client when the flow is complete. Needs a 2025-11-25 session."""
        if _is_modern(ctx):
            raise ToolError(
                "link_payment_account sends the user to the payment provider's consent page during the call, "
                "which needs a 2025-11-25 session; link the account from a client on that protocol."
            )
        capabilities = ctx.client_capabilities
        elicitation = capabilities.elicitation if capabilities is not None else None
        if elicitation is None or elicitation.url is None:
            raise ToolError(
                "link_payment_account needs a client that supports URL elicitation (elicitation.url), to open "
                "the payment provider's consent page; this client did not declare it."
            )
        link_id = f"link-{uuid.uuid4().hex[:12]}"
        provider = (payments_url or "https://payments.example").rstrip("/")
        answer = await ctx.elicit_url(
            f"Link a payment account for {email} on the payment provider's page.",
            f"{provider}/consent?link={link_id}",
            link_id,
        )
        if answer.action != "accept":
            action: Literal["declined", "cancelled"] = "declined" if answer.action == "decline" else "cancelled"
            return PaymentLink(email=email, link_id=link_id, action=action, linked=False)
        # The demo takes the user's accept as the finished consent flow (a real shop would wait for the
        # provider's callback), and says so on this request's stream, which every transport delivers.
        await ctx.session.send_elicit_complete(link_id, related_request_id=ctx.request_id)
        return PaymentLink(email=email, link_id=link_id, action="accepted", linked=True)

    # ---- runtime tool list changes

    def purge_orders() -> PurgeReport:
        """Delete every cancelled order from the order table (admin only). This cannot be undone."""
        return PurgeReport(purged=store.purge_orders())

    @server.tool(annotations=writes)
    async def enable_admin_tools(ctx: Context) -> AdminTools:
        """Enable the admin tools (adds purge_orders) and notify the client that the tool list changed."""
        names = {tool.name for tool in await server.list_tools()}
        added: list[str] = []
        if "purge_orders" not in names:
            server.add_tool(purge_orders, annotations=destructive)
            added.append("purge_orders")
        await _tools_changed(ctx)
        return AdminTools(added=added)

    # ---- resources

    @server.resource(CATALOG_URI, name="catalog", mime_type="application/json")
    def catalog() -> str:
        """The product catalogue as JSON; updated whenever an order reserves or releases stock."""
        return json.dumps([p.model_dump() for p in store.products()], indent=2)

    @server.resource(LOGO_URI, name="logo", mime_type="image/png")
    def logo() -> bytes:
        """The shop logo (a PNG image)."""
        return LOGO_PNG

    @server.resource(DOCS_TEMPLATE, name="docs", mime_type="text/markdown")
    def docs(topic: str) -> str:
        """Shop documentation pages, one per topic (inventory, orders, payments, returns, shipping)."""
        if topic not in DOC_TOPICS:
            return f"# {topic}\n\nNo documentation yet. Known topics: {', '.join(DOC_TOPICS)}.\n"
        return f"# {topic.capitalize()}\n\nHow the shop handles {topic}. See also shop://catalog.\n"

    # ---- prompts and completions

    @server.prompt()
    def order_confirmation(order_id: str) -> list[Message]:
        """Draft a confirmation message for an order (a user request and the assistant's draft)."""
        try:
            order = store.order(order_id)
        except ToolError as exc:  # an unknown order is the caller's mistake: -32602, not an internal error
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None
        return [
            UserMessage(f"Write a confirmation for order {order.id} ({order.quantity} x {order.product_id})."),
            AssistantMessage(
                f"Thank you for your order {order.id}: {order.quantity} x {order.product_id}, "
                f"total {order.total}. Status: {order.status}."
            ),
        ]

    @server.prompt()
    async def gift_note(product_id: str, ctx: Context) -> list[Message] | InputRequiredResult:
        """Draft a gift note for a product; asks the user for the occasion first (elicitation)."""
        occasion = await _occasion(ctx)
        if isinstance(occasion, InputRequiredResult):
            return occasion
        return [UserMessage(f"Write a short gift note to go with {product_id}, for {occasion}.")]

    @server.prompt()
    def greeting(name: str) -> str:
        """Greet a customer by name."""
        return f"Please greet our customer {name} warmly and offer help with their order."

    @server.prompt()
    def product_card(product_id: str) -> list[Message]:
        """Draft a product card: the request, the shop logo, a link to the inventory docs and the policy."""
        policy = TextResourceContents(uri="shop://docs/returns", mime_type="text/markdown", text=RETURNS_POLICY)
        docs = ResourceLink(type="resource_link", uri="shop://docs/inventory", name="docs-inventory")
        return [
            UserMessage(f"Write a product card for {product_id} with the shop logo and the return policy."),
            UserMessage(Image(data=LOGO_PNG, format="png")),
            UserMessage(docs),
            UserMessage(EmbeddedResource(type="resource", resource=policy)),
        ]

    @server.completion()  # type: ignore[no-untyped-call, untyped-decorator]  # the SDK leaves it untyped
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        if isinstance(ref, PromptReference) and ref.name == "greeting" and argument.name == "name":
            candidates: tuple[str, ...] = GREETING_NAMES
        elif isinstance(ref, ResourceTemplateReference) and ref.uri == DOCS_TEMPLATE and argument.name == "topic":
            candidates = DOC_TOPICS
        elif isinstance(ref, PromptReference) and ref.name == "order_confirmation" and argument.name == "order_id":
            with store.read() as db:
                candidates = tuple(row[0] for row in db.execute("SELECT id FROM orders ORDER BY created_at"))
        else:
            return None
        values = [c for c in candidates if c.lower().startswith(argument.value.lower())]
        return Completion(values=values, total=len(values), has_more=False)

    return server


if __name__ == "__main__":
    create_server().run()
