"""A second demo server: sales analytics for the shop (the other half of a multi-server pipeline).

Configuration from the environment at factory time: `WAREHOUSE_URL` (an HTTP API serving
`GET /sales` as a JSON list of {"product_id", "quantity", "unit_price"}) and `REPORT_DIR` (where
`write_sales_report` writes `reports/sales.md`).

The shop's stores are a resource template, `analytics://stores/{region}/{store}`: while a person
types a store, completion offers the stores of the region already chosen (the request's
`context.arguments`), and none before a region is chosen.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx2
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import Completion, CompletionArgument, CompletionContext, PromptReference, ResourceTemplateReference
from pydantic import BaseModel

STORES_TEMPLATE = "analytics://stores/{region}/{store}"
#: the shop's stores by region
STORES: dict[str, tuple[str, ...]] = {
    "north": ("Bradford", "Leeds", "Newcastle", "York"),
    "south": ("Bath", "Brighton", "Bristol", "London"),
}


class StockValue(BaseModel):
    products: int
    units: int
    value: float


class SalesSummary(BaseModel):
    orders: int
    units: int
    revenue: float
    best_seller: str | None


def create_server() -> MCPServer:
    warehouse = os.environ.get("WAREHOUSE_URL", "").rstrip("/")
    report_dir = os.environ.get("REPORT_DIR", "")
    server = MCPServer("analytics", version="1.0.0", instructions="Sales analytics for the demo shop.")

    @server.tool()
    def stock_value(products: list[dict[str, object]]) -> StockValue:
        """Value of the stock in a product list (as returned by the shop's list_products): units x price."""
        units = 0
        value = 0.0
        for product in products:
            quantity = int(str(product.get("quantity") or 0))
            units += quantity
            value += quantity * float(str(product.get("price") or 0))
        return StockValue(products=len(products), units=units, value=round(value, 2))

    async def _sales() -> list[dict[str, object]]:
        if not warehouse:
            raise ToolError("No sales source is configured (WAREHOUSE_URL). Ask the operator to set it.")
        try:
            async with httpx2.AsyncClient(timeout=3, trust_env=False) as client:
                response = await client.get(f"{warehouse}/sales")
        except httpx2.HTTPError as exc:
            raise ToolError(f"The warehouse API is unreachable ({type(exc).__name__}); retry later.") from exc
        if response.status_code != 200:
            raise ToolError(f"The warehouse API answered HTTP {response.status_code}; retry later.")
        data = response.json()
        if not isinstance(data, list):
            raise ToolError("The warehouse API sent something other than a list of sales.")
        return data

    @server.tool()
    async def sales_summary() -> SalesSummary:
        """Summarize all sales from the warehouse API: orders, units, revenue and the best seller."""
        sales = await _sales()
        units_by_product: dict[str, int] = {}
        revenue = 0.0
        for sale in sales:
            quantity = int(str(sale.get("quantity", 0)))
            units_by_product[str(sale.get("product_id"))] = (
                units_by_product.get(str(sale.get("product_id")), 0) + quantity
            )
            revenue += quantity * float(str(sale.get("unit_price", 0)))
        best = max(units_by_product, key=lambda k: units_by_product[k]) if units_by_product else None
        return SalesSummary(
            orders=len(sales), units=sum(units_by_product.values()), revenue=round(revenue, 2), best_seller=best
        )

    @server.tool()
    async def write_sales_report(title: str = "Sales report") -> str:
        """Write the sales summary as Markdown to reports/sales.md in the report directory; returns the path."""
        if not report_dir:
            raise ToolError("No report directory is configured (REPORT_DIR).")
        summary = await sales_summary()
        path = Path(report_dir) / "reports" / "sales.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"# {title}\n\n- Orders: {summary.orders}\n- Units: {summary.units}\n"
            f"- Revenue: {summary.revenue:.2f}\n- Best seller: {summary.best_seller}\n\n"
            f"```json\n{json.dumps(summary.model_dump(), indent=2)}\n```\n"
        )
        return str(path.relative_to(report_dir))

    @server.resource(STORES_TEMPLATE, name="store", mime_type="text/markdown")
    def store_page(region: str, store: str) -> str:
        """One of the shop's stores, by region (north, south) and town: where it is and what to ask about it."""
        if store not in STORES.get(region, ()):
            known = ", ".join(f"{r}: {', '.join(towns)}" for r, towns in STORES.items())
            return f"# {store}\n\nNo store {store} in the {region} region. The stores: {known}.\n"
        return f"# {store}\n\nThe {store} store, in the {region} region. Its sales: call sales_summary.\n"

    @server.completion()  # type: ignore[no-untyped-call, untyped-decorator]  # the SDK leaves it untyped
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        if not isinstance(ref, ResourceTemplateReference) or ref.uri != STORES_TEMPLATE:
            return None
        if argument.name == "region":
            candidates: tuple[str, ...] = tuple(STORES)
        elif argument.name == "store":
            # the store is the second variable of the URI: without the region chosen first, none is offered
            region = ((context.arguments if context is not None else None) or {}).get("region", "")
            candidates = STORES.get(region, ())
        else:
            return None
        values = [c for c in candidates if c.lower().startswith(argument.value.lower())]
        return Completion(values=values, total=len(values), has_more=False)

    return server
