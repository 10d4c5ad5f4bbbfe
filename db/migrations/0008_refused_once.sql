-- A refused message is refused once: its dead letter is also what recognises it when the broker sends it again,
-- as Event Mesh does with a rejected message. An event is recognised by its identity and payload hash (so another
-- payload under a refused identity gets a letter of its own); a message that never became an event by
-- message_hash, a hash of its channel, content type, binary-mode attributes and body (src/events/messageHash.ts).
-- A replay is an operator's decision to try again, so only letters not yet replayed recognise. Letters from before
-- this migration carry neither hash, and several of one message may be among them: they recognise nothing.
alter table dead_letter
  add column payload_hash text,
  add column message_hash text;
create unique index dead_letter_refused_event on dead_letter (source, event_id, payload_hash)
  where replayed_at is null and payload_hash is not null;
create unique index dead_letter_refused_message on dead_letter (message_hash)
  where replayed_at is null and message_hash is not null;
