-- One resolution on Run's path, as pgbench's transaction: the statements pgstore runs for
-- a movement (Track, the claim of its status check, its first outcome, the claim of its
-- report, the mark of its report), each by its key, in one transaction. The store runs
-- them in statements of many movements each; this is the database's rate for the same
-- writes one movement at a time.
\set n random(1, 2000000000)
BEGIN;
INSERT INTO pgbench_billing.billing_movements (callback_kind, client_reference, kind, started_at, deadline,
	next_check_at, caller_started_at, track_id)
	VALUES ('payout', 'pgb' || :n, 'send', now(), now(), now(), now(), 'pgbench')
	ON CONFLICT (callback_kind, client_reference) DO NOTHING;
UPDATE pgbench_billing.billing_movements SET lease_owner = 'pgbench', lease_until = now() + interval '1 minute'
	WHERE callback_kind = 'payout' AND client_reference = 'pgb' || :n AND outcome_id IS NULL;
INSERT INTO pgbench_billing.billing_movements AS m (callback_kind, client_reference, outcome_id, state, source, settled_at)
	VALUES ('payout', 'pgb' || :n, 'payout/succeeded/pgb' || :n, 'succeeded', 'status_check', now())
	ON CONFLICT (callback_kind, client_reference) DO UPDATE SET outcome_id = EXCLUDED.outcome_id,
		state = EXCLUDED.state, source = EXCLUDED.source, settled_at = EXCLUDED.settled_at,
		lease_owner = NULL, lease_until = NULL
	WHERE m.outcome_id IS NULL;
UPDATE pgbench_billing.billing_movements SET report_owner = 'pgbench', report_until = now() + interval '1 minute'
	WHERE callback_kind = 'payout' AND client_reference = 'pgb' || :n AND reported_at IS NULL;
UPDATE pgbench_billing.billing_movements SET reported_at = now(), report_owner = NULL, report_until = NULL
	WHERE outcome_id = 'payout/succeeded/pgb' || :n AND reported_at IS NULL;
END;
