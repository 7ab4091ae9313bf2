-- The schema the @realworld server-postgres scenarios query (applied once per run to the template).
CREATE TABLE shipments (
    id          serial PRIMARY KEY,
    destination text NOT NULL,
    weight_kg   numeric(8, 2) NOT NULL,
    express     boolean NOT NULL DEFAULT false,
    labels      jsonb NOT NULL DEFAULT '[]',
    shipped_at  timestamptz
);
