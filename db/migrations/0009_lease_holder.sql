-- Which instance claimed each email and push last (its lease holder), written by every claim and kept after the
-- row is booked: an operator, or a test, can tell whose crash a resend with the same Message-ID or
-- Idempotency-Key followed. Null for rows never claimed since this column exists.
alter table mail_outbox add column leased_by text;
alter table portal_push add column leased_by text;
