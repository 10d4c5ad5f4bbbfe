-- Retention deletes sent mail by the time it was sent, in small batches. Without an index each batch would
-- scan the whole outbox; partial, because pending and parked mail is never deleted by age.
create index mail_outbox_sent_at on mail_outbox (sent_at) where state = 'sent';

-- Retention deletes dead letters only after they were replayed. The index on received_at would walk past
-- every old unreplayed letter (kept for an operator, possibly many after a flood of bad messages) on each
-- batch; this one holds replayed letters only.
create index dead_letter_replayed_at on dead_letter (replayed_at) where replayed_at is not null;

-- The admin API answers "what happened to this event", dead letters included, by CloudEvent identity.
create index dead_letter_event on dead_letter (source, event_id) where event_id is not null;
