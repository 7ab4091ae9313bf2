"""The demo shop's orders on PostgreSQL: a small MCP server for the `postgres` fake's features.

Configuration from the environment at factory time: `DATABASE_URL`, a `postgresql://` URL of a
database with the schema in `demo/db/orders.sql` (products, orders). Every call opens its own
connection and commits before it answers, so what a scenario's steps check is what the server did.

Needs psycopg (the `postgres` extra).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel


class Product(BaseModel):
    id: str
    name: str
    price: float
    stock: int


class Catalogue(BaseModel):
    count: int
    items: list[Product]


class Order(BaseModel):
    order_id: int
    product_id: str
    quantity: int
    total: float
    status: str


def create_server() -> MCPServer:
    url = os.environ.get("DATABASE_URL", "")
    server = MCPServer("orders-pg", version="1.0.0", instructions="Orders of the demo shop, kept in PostgreSQL.")

    @contextmanager
    def transaction() -> Iterator[Any]:
        import psycopg

        if not url:
            raise ToolError("No database is configured (DATABASE_URL). Ask the operator to set it.")
        try:
            with psycopg.connect(url, connect_timeout=5) as conn, conn.transaction():
                yield conn
        except psycopg.OperationalError as exc:
            raise ToolError(f"The database is unreachable ({type(exc).__name__}); retry later.") from exc

    @server.tool()
    def list_products() -> Catalogue:
        """The active products, by id, with their price and stock."""
        with transaction() as db:
            rows = db.execute("SELECT id, name, price, stock FROM products WHERE active ORDER BY id").fetchall()
        items = [Product(id=r[0], name=r[1], price=float(r[2]), stock=r[3]) for r in rows]
        return Catalogue(count=len(items), items=items)

    @server.tool()
    def place_order(product_id: str, quantity: int) -> Order:
        """Order a quantity of an active product: takes it from the stock and records the order."""
        if quantity <= 0:
            raise ToolError(f"Quantity must be positive, got {quantity}.")
        with transaction() as db:
            row = db.execute(
                "SELECT price, stock FROM products WHERE id = %s AND active FOR UPDATE", [product_id]
            ).fetchone()
            if row is None:
                raise ToolError(f"Unknown product {product_id!r}.")
            price, stock = Decimal(row[0]), int(row[1])
            if stock < quantity:
                raise ToolError(f"Only {stock} of {product_id} in stock; {quantity} were ordered.")
            total = price * quantity
            db.execute("UPDATE products SET stock = stock - %s WHERE id = %s", [quantity, product_id])
            order_id = db.execute(
                "INSERT INTO orders (product_id, quantity, total) VALUES (%s, %s, %s) RETURNING id",
                [product_id, quantity, total],
            ).fetchone()[0]
        return Order(order_id=order_id, product_id=product_id, quantity=quantity, total=float(total), status="placed")

    @server.tool()
    def cancel_order(order_id: int) -> Order:
        """Cancel a placed order and put its quantity back in stock."""
        with transaction() as db:
            row = db.execute(
                "SELECT product_id, quantity, total, status FROM orders WHERE id = %s FOR UPDATE", [order_id]
            ).fetchone()
            if row is None:
                raise ToolError(f"Unknown order {order_id}.")
            if row[3] != "placed":
                raise ToolError(f"Order {order_id} is {row[3]}; only placed orders can be cancelled.")
            db.execute("UPDATE orders SET status = 'cancelled' WHERE id = %s", [order_id])
            db.execute("UPDATE products SET stock = stock + %s WHERE id = %s", [row[1], row[0]])
        return Order(order_id=order_id, product_id=row[0], quantity=row[1], total=float(row[2]), status="cancelled")

    return server
