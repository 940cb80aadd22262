-- The table the store's resolutions write (pgstore's billing_movements at schema
-- version 5, with its indexes), for pgbench's floor of the same statements.
DROP SCHEMA IF EXISTS pgbench_billing CASCADE;
CREATE SCHEMA pgbench_billing;
SET search_path TO pgbench_billing;
CREATE TABLE billing_movements (
	callback_kind text NOT NULL, client_reference text NOT NULL, kind text,
	started_at timestamptz, deadline timestamptz, next_check_at timestamptz,
	checks integer NOT NULL DEFAULT 0, lease_owner text, lease_until timestamptz,
	outcome_id text, state text, code text NOT NULL DEFAULT '', transaction_id text NOT NULL DEFAULT '',
	external_transaction_id text NOT NULL DEFAULT '', amount bigint NOT NULL DEFAULT 0,
	charges bigint NOT NULL DEFAULT 0, source text, settled_at timestamptz, body bytea,
	by_callback boolean NOT NULL DEFAULT false, by_status_check boolean NOT NULL DEFAULT false,
	disagreed boolean NOT NULL DEFAULT false, reported_at timestamptz, report_owner text,
	report_until timestamptz, report_attempts integer NOT NULL DEFAULT 0,
	asked_amount bigint NOT NULL DEFAULT 0, asked_currency text NOT NULL DEFAULT '',
	service_reference text NOT NULL DEFAULT '', caller_started_at timestamptz,
	currency text NOT NULL DEFAULT '', outcome_service_reference text NOT NULL DEFAULT '',
	outcome_kind text NOT NULL DEFAULT '', forgotten_at timestamptz, track_id text NOT NULL DEFAULT '',
	PRIMARY KEY (callback_kind, client_reference)
);
CREATE INDEX billing_movements_due ON billing_movements (next_check_at) WHERE outcome_id IS NULL AND kind IS NOT NULL;
CREATE INDEX billing_movements_unreported ON billing_movements (settled_at)
	WHERE outcome_id IS NOT NULL AND kind IS NOT NULL AND reported_at IS NULL;
CREATE UNIQUE INDEX billing_movements_outcome ON billing_movements (outcome_id);
CREATE INDEX billing_movements_started ON billing_movements (started_at) WHERE kind IS NOT NULL;
CREATE INDEX billing_movements_forgettable ON billing_movements (coalesce(reported_at, settled_at))
	WHERE outcome_id IS NOT NULL AND (reported_at IS NOT NULL OR kind IS NULL);
