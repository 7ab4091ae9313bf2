-- Schema of demo/orders_pg.py, applied once per run to the fake PostgreSQL template database.
CREATE TABLE products (
    id         text PRIMARY KEY,
    name       text NOT NULL,
    price      numeric(10, 2) NOT NULL CHECK (price >= 0),
    stock      integer NOT NULL DEFAULT 0 CHECK (stock >= 0),
    active     boolean NOT NULL DEFAULT true,
    attributes jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE orders (
    id         serial PRIMARY KEY,
    product_id text NOT NULL REFERENCES products (id),
    quantity   integer NOT NULL CHECK (quantity > 0),
    total      numeric(10, 2) NOT NULL,
    status     text NOT NULL DEFAULT 'placed',
    placed_at  timestamptz NOT NULL DEFAULT now()
);
