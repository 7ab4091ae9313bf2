"""Turn what steps attach (bytes + a MIME type) into model records, safely.

Everything here handles untrusted input: a server decides what its payloads, image blocks and
stderr contain. So: images are kept only for raster MIME types whose data is valid base64
(an SVG can carry script, so it is never shown as an image); payloads over the limit are cut
with their full size kept; secrets in env/headers are masked before anything is stored.

Pure module: no behave, no mcp.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TypeVar, overload

from mcp_bdd.report.model import Attachment, Exchange, Image, ServerSurface, StderrTail
from mcp_bdd.secrets import MASK, mask, mask_data
from mcp_bdd.transcript import HOOKS_MIME, SERVER_MIME, STDERR_MIME, TEARDOWN_MIME, TRANSCRIPT_MIME

__all__ = [
    "CATALOG_ITEMS",
    "CATALOG_KEYS",
    "CATALOG_NAMES",
    "IMAGE_LIMIT",
    "MASK",
    "PAYLOAD_LIMIT",
    "SAFE_IMAGE_MIMES",
    "bounded",
    "exchange_from_json",
    "mask_again",
    "merge_surfaces",
    "parse_attachment",
    "safe_image",
    "surface_from_json",
]

#: Attachments that carry a list of exchanges: a step's, the before hooks', the teardown's.
EXCHANGE_MIMES = (TRANSCRIPT_MIME, HOOKS_MIME, TEARDOWN_MIME)
#: A single payload whose compact JSON is longer than this is cut (characters).
PAYLOAD_LIMIT = 20_000
#: A single image larger than this (base64 characters, ~1.5 MB decoded) is not embedded.
IMAGE_LIMIT = 2_000_000
#: Raster formats a browser renders without running anything. Never image/svg+xml.
SAFE_IMAGE_MIMES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/\r\n]*={0,2}")
_T = TypeVar("_T")


def safe_image(mime: object, data: object) -> Image | None:
    """An Image if `data` is valid base64 of an allowed raster type within the size limit."""
    if not isinstance(mime, str) or not isinstance(data, str):
        return None
    mime = mime.strip().lower()
    if mime not in SAFE_IMAGE_MIMES or len(data) > IMAGE_LIMIT or not _BASE64.fullmatch(data):
        return None
    try:
        size = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return None
    return Image(mime=mime, data="".join(data.split()), size=size)


def _extract_images(value: object, found: list[Image]) -> object:
    """Move image data out of a payload (content blocks and resource blobs) into `found`.

    The payload keeps a short marker instead, so that the 20 kB cut never eats a screenshot
    and the same bytes are not embedded twice.
    """
    if isinstance(value, dict):
        kind = value.get("type")
        mime = value.get("mimeType")
        key = "data" if kind == "image" else "blob" if "blob" in value else None
        if key is not None and isinstance(value.get(key), str):
            image = safe_image(mime, value[key])
            if image is not None:
                found.append(image)
                marker = f"<{image.mime}, {image.size} bytes: shown below as image {len(found)}>"
                return {**value, key: marker}
        return {k: _extract_images(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_extract_images(v, found) for v in value]
    return value


def _target(method: str, payload: object) -> str | None:
    if not isinstance(payload, dict):
        return None
    key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method)
    if key is None:
        return None
    value = payload.get(key)
    return value if isinstance(value, str) else None


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def exchange_from_json(item: object, limit: int = PAYLOAD_LIMIT) -> Exchange:
    """One transcript record (a dict from `Exchange.to_json`) -> the report's Exchange."""
    if not isinstance(item, dict):
        item = {"kind": "info", "method": "(unreadable record)", "payload": item}
    kind = str(item.get("kind", "info"))
    method = str(item.get("method", ""))
    raw = item.get("payload")
    is_error = kind == "error" or (kind == "response" and isinstance(raw, dict) and raw.get("isError") is True)
    images: list[Image] = []
    payload = mask_data(_extract_images(raw, images))
    text = json.dumps(payload, ensure_ascii=False, default=str, separators=(",", ":"))
    size = len(text.encode("utf-8"))
    preview = None
    if len(text) > limit:
        payload, preview = None, text[:limit]
    return Exchange(
        seq=_int(item.get("seq")) or 0,
        kind=kind,
        server=str(item.get("server", "")),
        method=method,
        at=_num(item.get("at")) or 0.0,
        duration_ms=_num(item.get("duration_ms")),
        related=_int(item.get("related")),
        payload=payload,
        preview=preview,
        size=size,
        images=tuple(images),
        target=_target(method, raw) if kind == "request" else None,
        is_error=is_error,
    )


@overload
def mask_again(item: Exchange) -> Exchange: ...
@overload
def mask_again(item: StderrTail) -> StderrTail: ...
@overload
def mask_again(item: Attachment) -> Attachment: ...
def mask_again(item: Exchange | StderrTail | Attachment) -> Exchange | StderrTail | Attachment:
    """A recorded piece of evidence masked with the values remembered since it was recorded (the
    same object when none of them shows in it)."""
    if isinstance(item, Exchange):
        payload, preview = mask_data(item.payload), mask(item.preview) if item.preview is not None else None
        if payload is item.payload and preview == item.preview:
            return item
        return replace(item, payload=payload, preview=preview)
    if item.text is None or (text := mask(item.text)) == item.text:
        return item
    return replace(item, text=text)


#: Records of one kind (tools, resources, ...) of a server's surface kept in full, in its order.
CATALOG_ITEMS = 100
#: The characters of one kind's records kept in full, in payload limits (each record is cut to one).
CATALOG_SPAN = 10
#: Records of one kind kept at all: past those in full by their name (or URI) only; the rest counted.
CATALOG_NAMES = 10_000
#: A name (or URI) of a record kept by name only is cut at this many characters.
NAME_LIMIT = 300
#: Each kind of record, and the field that names one.
CATALOG_KEYS = {"tools": "name", "resources": "uri", "resource_templates": "uriTemplate", "prompts": "name"}


@overload
def bounded(value: str, limit: int) -> str: ...
@overload
def bounded(value: Mapping[str, object], limit: int) -> dict[str, object]: ...
@overload
def bounded(value: object, limit: int) -> object: ...
def bounded(value: object, limit: int) -> object:
    """`value` with its strings cut so that the whole stays near `limit` characters (a string past
    what is left keeps its start and says its size, as a cut payload does; a container past it says
    how many items were left out). Every item costs a little, so depth and width are bounded too."""
    budget = [limit]

    def cut(item: object) -> object:
        budget[0] -= 8  # the JSON around any item: a key's quotes, a comma
        if isinstance(item, str):
            room = max(0, budget[0])
            budget[0] -= min(len(item), room)
            return item if len(item) <= room else f"{item[:room]}… ({len(item):,} characters in all)"
        if isinstance(item, dict):
            out: dict[str, object] = {}
            for i, (key, inner) in enumerate(item.items()):
                if budget[0] <= 0:
                    out["…"] = f"{len(item) - i:,} more keys, left out"
                    break
                name = str(key)[:NAME_LIMIT]
                budget[0] -= len(name)
                out[name] = cut(inner)
            return out
        if isinstance(item, list):
            kept: list[object] = []
            for i, inner in enumerate(item):
                if budget[0] <= 0:
                    kept.append(f"… ({len(item) - i:,} more items, left out)")
                    break
                kept.append(cut(inner))
            return kept
        return item

    return cut(value)


def _catalog(value: object, key: str, limit: int) -> tuple[tuple[dict[str, object], ...] | None, int, int]:
    """A kind's records as kept, how many of them keep their name only, and how many are not kept.

    In full: the first CATALOG_ITEMS, each cut to `limit` characters, while they add up to
    `CATALOG_SPAN` times `limit`; past them, names only (a name can be a tool the scenarios called);
    past CATALOG_NAMES, a count. Masked before they are cut: a cut could split a secret that
    masking would then no longer recognise."""
    if not isinstance(value, list):
        return None, 0, 0
    items = [v for v in value if isinstance(v, dict)]
    full: list[dict[str, object]] = []
    spent = 0
    for item in items[:CATALOG_ITEMS]:
        if spent >= CATALOG_SPAN * limit:
            break
        full.append(bounded(mask_data(item, any_key=True), limit))
        spent += len(json.dumps(full[-1], ensure_ascii=False, default=str))
    names = tuple(
        {key: mask_data(v[key])[:NAME_LIMIT]} for v in items[len(full) : CATALOG_NAMES] if isinstance(v.get(key), str)
    )
    return (*full, *names), len(names), len(items) - len(full) - len(names)


def _str(value: object, limit: int = PAYLOAD_LIMIT) -> str | None:
    return None if value is None else bounded(str(value), limit)


_SURFACE_KEYS = frozenset(
    {"server", "name", "version", "protocol", "transport", "capabilities", "instructions"} | set(CATALOG_KEYS)
)


def surface_from_json(data: Mapping[str, object], limit: int = PAYLOAD_LIMIT) -> ServerSurface:
    """A server's surface as attached, bounded: its catalog by `CATALOG_ITEMS` / `CATALOG_NAMES`,
    each string by `limit` (the payload limit), so the report's size does not follow the server's."""
    capabilities = data.get("capabilities")
    catalog = {kind: _catalog(data.get(kind), key, limit) for kind, key in CATALOG_KEYS.items()}
    return ServerSurface(
        server=str(data.get("server") or data.get("name") or "server")[:NAME_LIMIT],
        name=_str(data.get("name"), NAME_LIMIT),
        version=_str(data.get("version"), NAME_LIMIT),
        protocol=_str(data.get("protocol"), NAME_LIMIT),
        transport=_str(data.get("transport"), NAME_LIMIT),
        capabilities=bounded(mask_data(capabilities, any_key=True), limit) if isinstance(capabilities, dict) else None,
        instructions=_str(data.get("instructions"), limit),
        tools=catalog["tools"][0],
        resources=catalog["resources"][0],
        resource_templates=catalog["resource_templates"][0],
        prompts=catalog["prompts"][0],
        extra=bounded(mask_data({k: v for k, v in data.items() if k not in _SURFACE_KEYS}, any_key=True), limit),
        named_only={kind: named for kind, (_, named, _) in catalog.items() if named},
        left_out={kind: out for kind, (_, _, out) in catalog.items() if out},
    )


def merge_surfaces(old: ServerSurface, new: ServerSurface) -> ServerSurface:
    """Later attachments fill in what earlier ones lacked: per field, non-null wins (newest first);
    a kind's counts of records cut come with its records."""

    def pick(a: _T, b: _T) -> _T:
        return b if b is not None else a

    def counts(field: str) -> dict[str, int]:
        mine = {k: n for k, n in getattr(new, field).items() if getattr(new, k) is not None}
        return {**{k: n for k, n in getattr(old, field).items() if getattr(new, k) is None}, **mine}

    return ServerSurface(
        server=old.server,
        name=pick(old.name, new.name),
        version=pick(old.version, new.version),
        protocol=pick(old.protocol, new.protocol),
        transport=_every(old.transport, new.transport),
        capabilities=pick(old.capabilities, new.capabilities),
        instructions=pick(old.instructions, new.instructions),
        tools=pick(old.tools, new.tools),
        resources=pick(old.resources, new.resources),
        resource_templates=pick(old.resource_templates, new.resource_templates),
        prompts=pick(old.prompts, new.prompts),
        extra={**old.extra, **new.extra},
        named_only=counts("named_only"),
        left_out=counts("left_out"),
    )


def _every(old: str | None, new: str | None) -> str | None:
    """Both transports a server was reached over, once each ("stdio, streamable-http"): a server
    exercised over several is not shown as if one of them were all."""
    seen = [t for t in (old or "").split(", ") if t]
    return ", ".join([*seen, new] if new and new not in seen else seen) or None


Parsed = tuple[Exchange, ...] | ServerSurface | StderrTail | Attachment


def _generic(mime: str, data: bytes) -> Attachment:
    mime = mime.strip().lower()
    if mime in SAFE_IMAGE_MIMES:
        image = safe_image(mime, base64.b64encode(data).decode("ascii"))
        return Attachment(mime=mime, size=len(data), image=image)
    if mime.startswith("text/") or mime.endswith("json") or mime.endswith("+xml"):
        text = mask(data.decode("utf-8", errors="replace"))
        if len(text) > PAYLOAD_LIMIT:
            text = text[:PAYLOAD_LIMIT]
        return Attachment(mime=mime, size=len(data), text=text)
    return Attachment(mime=mime, size=len(data))


def parse_attachment(mime_type: str, data: bytes, limit: int = PAYLOAD_LIMIT) -> Parsed:
    """Classify and parse one `context.attach(mime_type, data)`; never raises on bad data."""
    if mime_type in (*EXCHANGE_MIMES, SERVER_MIME, STDERR_MIME):
        try:
            decoded = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            note = f"unreadable {mime_type} attachment: {exc}"
            return Attachment(mime="text/plain", size=len(data), text=note)
        if mime_type in EXCHANGE_MIMES:
            items = decoded if isinstance(decoded, list) else [decoded]
            return tuple(exchange_from_json(item, limit) for item in items)
        if mime_type == SERVER_MIME and isinstance(decoded, dict):
            return surface_from_json(decoded, limit)
        if mime_type == STDERR_MIME and isinstance(decoded, dict):
            text = mask(str(decoded.get("text", "")))
            return StderrTail(server=str(decoded.get("server", "")), text=text[-limit:])
    return _generic(mime_type, data)
