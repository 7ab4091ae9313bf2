"""Attachments -> records: the 20 kB cut, safe images only, masked secrets, no crash on junk."""

from __future__ import annotations

import base64
import json

from mcp_bdd.report.evidence import (
    exchange_from_json,
    merge_surfaces,
    parse_attachment,
    surface_from_json,
)
from mcp_bdd.report.model import Attachment, ServerSurface, StderrTail
from mcp_bdd.secrets import MASK
from mcp_bdd.transcript import SERVER_MIME, STDERR_MIME, TRANSCRIPT_MIME, Transcript, evidence

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 30).decode()


def test_a_real_transcript_record_parses() -> None:
    transcript = Transcript()
    req = transcript.record("request", "shop", "tools/call", {"name": "add", "arguments": {"a": 1}})
    transcript.record("response", "shop", "tools/call", {"content": [], "isError": True}, related=req.seq)
    parsed = parse_attachment(TRANSCRIPT_MIME, evidence(transcript.drain()))
    assert isinstance(parsed, tuple)
    request, response = parsed
    assert (request.kind, request.target, request.is_error) == ("request", "add", False)
    assert (response.related, response.is_error, response.target) == (1, True, None)


def test_payloads_over_the_limit_are_cut_with_their_full_size_kept() -> None:
    big = {"contents": [{"uri": "x://y", "text": "a" * 50_000}]}
    x = exchange_from_json({"seq": 1, "kind": "response", "server": "s", "method": "resources/read", "payload": big})
    assert x.truncated and x.payload is None
    assert x.preview is not None and len(x.preview) == 20_000
    assert x.size > 50_000
    small = exchange_from_json({"seq": 2, "kind": "response", "method": "m", "payload": {"ok": True}})
    assert not small.truncated and small.payload == {"ok": True}


def test_raster_images_are_moved_out_and_svg_never_kept_as_image() -> None:
    payload = {
        "content": [
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {
                "type": "image",
                "data": base64.b64encode(b"<svg onload=alert(1)>").decode(),
                "mimeType": "image/svg+xml",
            },
            {"type": "image", "data": "not base64 <script>", "mimeType": "image/png"},
        ]
    }
    x = exchange_from_json({"seq": 1, "kind": "response", "method": "tools/call", "payload": payload})
    assert [i.mime for i in x.images] == ["image/png"]
    assert x.images[0].data == PNG
    blocks = x.payload["content"]
    assert "shown below" in blocks[0]["data"]  # the bytes are not carried twice
    assert blocks[1]["mimeType"] == "image/svg+xml"  # shown as JSON text, never as an image


def test_a_big_screenshot_survives_the_payload_cut() -> None:
    image = base64.b64encode(b"\x89PNG" + bytes(range(256)) * 200).decode()  # ~68 kB of base64
    payload = {"content": [{"type": "image", "data": image, "mimeType": "image/png"}]}
    x = exchange_from_json({"seq": 1, "kind": "response", "method": "tools/call", "payload": payload})
    assert not x.truncated and len(x.images) == 1


def test_server_surfaces_merge_with_non_null_winning() -> None:
    first = surface_from_json({"server": "shop", "name": "Shop", "tools": [{"name": "a"}], "prompts": None})
    later = surface_from_json({"server": "shop", "version": "2", "tools": None, "prompts": [{"name": "p"}]})
    merged = merge_surfaces(first, later)
    assert (merged.name, merged.version) == ("Shop", "2")
    assert merged.tools == ({"name": "a"},) and merged.prompts == ({"name": "p"},)


def test_server_info_secrets_masked_on_parse() -> None:
    data = {"server": "remote", "headers": {"Authorization": "Bearer s3cret"}, "env": {"MY_TOKEN": "x"}}
    surface = parse_attachment(SERVER_MIME, json.dumps(data).encode())
    assert isinstance(surface, ServerSurface)
    assert "s3cret" not in json.dumps(surface.extra) and surface.extra["env"]["MY_TOKEN"] == MASK


def test_stderr_and_junk_attachments() -> None:
    tail = parse_attachment(STDERR_MIME, json.dumps({"server": "shop", "text": "boom PASSWORD=hunter2"}).encode())
    assert isinstance(tail, StderrTail) and "hunter2" not in tail.text
    junk = parse_attachment(TRANSCRIPT_MIME, b"{not json")
    assert isinstance(junk, Attachment) and junk.text is not None and "unreadable" in junk.text
    svg = parse_attachment("image/svg+xml", b"<svg/>")
    assert isinstance(svg, Attachment) and svg.image is None
    png = parse_attachment("image/png", base64.b64decode(PNG))
    assert isinstance(png, Attachment) and png.image is not None
