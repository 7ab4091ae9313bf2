"""The demo cart: an MCP App (the `io.modelcontextprotocol/ui` extension), written with the SDK's `mcp.server.apps`.

mcp-bdd's own features (features/apps/) open its app in a real browser, as a host does, click
its button and check the tool call and the message it asks the host for. So it touches every
part of the extension a scenario can check:

- ``show_cart`` is bound to the ``ui://cart/app.html`` app (``_meta.ui.resourceUri``). Its result
  carries the cart as structured content for the app, and a meaningful text for clients without
  the extension (the text says whether the client advertised it: a scenario can test both ways).
- ``checkout`` is visible to the app only (``_meta.ui.visibility = ["app"]``): the app's
  "Checkout" button calls it through the host, with the quantity typed into the "Quantity" field.
  The app then sends the conversation message "Order placed: <order id>" (``ui/message``).
- ``cart_total`` is a plain tool with no app.

The app is one self-contained HTML document that speaks the bridge itself (JSON-RPC 2.0 over
``postMessage`` to its parent): it loads nothing from the network, so the host's default
Content-Security-Policy (no connections, inline scripts only) suits it.
"""

from __future__ import annotations

import itertools
from typing import Any

from mcp.server.apps import Apps, ResourceCsp, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer

__all__ = ["APP_URI", "create_server"]

APP_URI = "ui://cart/app.html"

#: what the cart holds: (product, unit price in cents)
ITEMS: list[dict[str, Any]] = [
    {"product": "Blue mug", "price_cents": 1250},
    {"product": "Tea towel", "price_cents": 700},
]

APP_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Cart</title>
<style>
  body { font: 14px/1.35 var(--font-sans, system-ui, sans-serif); margin: 12px; color: #1d2430; background: #fff; }
  h1 { font-size: 18px; margin: 0 0 6px; }
  p, ul { margin: 6px 0; }
  ul { padding-left: 18px; }
  label { margin-right: 6px; }
  input { width: 4em; padding: 3px; }
  button { margin-left: 8px; padding: 4px 12px; border-radius: 6px; border: 1px solid #2456a6;
           background: #2f6fd6; color: #fff; font-weight: 600; cursor: pointer; }
  #status { font-weight: 600; color: #17763b; }
</style>
</head>
<body>
<h1>Your cart</h1>
<p id="loading">Loading…</p>
<ul id="items"></ul>
<label for="quantity">Quantity</label>
<input id="quantity" name="quantity" type="number" min="1" value="1">
<button id="checkout" type="button">Checkout</button>
<p id="status" role="status"></p>
<script>
(() => {
  let nextId = 1;
  const pending = new Map();
  function send(message) { window.parent.postMessage(message, "*"); }
  function request(method, params) {
    const id = nextId++;
    send({ jsonrpc: "2.0", id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  function notify(method, params) { send({ jsonrpc: "2.0", method, params }); }
  function show(cart) {
    const list = document.getElementById("items");
    list.textContent = "";
    for (const item of cart.items || []) {
      const li = document.createElement("li");
      li.textContent = item.product + " — " + (item.price_cents / 100).toFixed(2) + " €";
      list.appendChild(li);
    }
    document.getElementById("loading").textContent = (cart.items || []).length + " items";
  }
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const data = event.data || {};
    if (data.id !== undefined && pending.has(data.id) && !data.method) {
      const { resolve, reject } = pending.get(data.id);
      pending.delete(data.id);
      if (data.error) reject(new Error(data.error.message)); else resolve(data.result);
    } else if (data.method === "ui/notifications/tool-result") {
      show((data.params && data.params.structuredContent) || {});
    } else if (data.method === "ui/resource-teardown") {
      send({ jsonrpc: "2.0", id: data.id, result: {} });
    }
  });
  document.getElementById("checkout").addEventListener("click", async () => {
    const quantity = Number(document.getElementById("quantity").value || "1");
    const status = document.getElementById("status");
    try {
      const result = await request("tools/call", { name: "checkout", arguments: { quantity } });
      const order = (result.structuredContent || {}).order_id;
      status.textContent = "Order placed";
      await request("ui/message", { role: "user", content: [{ type: "text", text: "Order placed: " + order }] });
    } catch (error) {
      status.textContent = "Checkout failed: " + error.message;
    }
  });
  request("ui/initialize", {
    appInfo: { name: "cart", version: "1.0.0" },
    appCapabilities: { availableDisplayModes: ["inline"] },
    protocolVersion: "2026-01-26",
  }).then(() => {
    notify("ui/notifications/initialized", {});
    // the host sizes the frame to the app: tell it the height whenever it changes
    const root = document.documentElement;
    const height = () => Math.ceil(root.getBoundingClientRect().height);
    const size = () => notify("ui/notifications/size-changed", { height: height() });
    new ResizeObserver(size).observe(root);
  });
})();
</script>
</body>
</html>
"""


def create_server() -> MCPServer:
    """A fresh cart server: one app-bound tool, one app-only tool, one plain tool."""
    apps = Apps()
    orders = itertools.count(1001)

    @apps.tool(resource_uri=APP_URI, name="show_cart", title="Show the cart", description="Show the shopping cart")
    def show_cart(ctx: Context) -> dict[str, Any]:
        """The cart as structured content (the app renders it); the text is for clients without apps."""
        total = sum(item["price_cents"] for item in ITEMS)
        return {
            "items": ITEMS,
            "total_cents": total,
            "shown_as": "app" if client_supports_apps(ctx) else "text",
        }

    @apps.tool(
        resource_uri=APP_URI,
        visibility=["app"],
        name="checkout",
        description="Place the order for the cart (called by the cart app)",
    )
    def checkout(quantity: int = 1) -> dict[str, Any]:
        if quantity < 1:
            raise ValueError("quantity must be at least 1")
        return {"order_id": f"ORD-{next(orders)}", "quantity": quantity, "status": "placed"}

    apps.add_html_resource(
        APP_URI,
        APP_HTML,
        name="cart app",
        description="The interactive cart",
        csp=ResourceCsp(connect_domains=[], resource_domains=[]),
        prefers_border=True,
    )

    server = MCPServer("cart", version="1.0.0", extensions=[apps])

    @server.tool(description="The cart's total in cents")
    def cart_total() -> int:
        return sum(item["price_cents"] for item in ITEMS)

    return server
