-- A refused message is refused once: its dead letter is also what recognises it when the broker sends it again,
-- as Event Mesh does with a rejected message. An event is recognised by its identity (any dead letter of that
-- source and id not yet replayed, through dead_letter_event); a message that never became an event by
-- message_hash, a hash of its content type, binary-mode attributes and body (src/events/messageHash.ts). A replay
-- is an operator's decision to try again, so only letters not yet replayed recognise.
alter table dead_letter
  add column payload_hash text,
  add column message_hash text;
-- The payload hash of a refused event, beside processed_event's for a conflict. Letters from before this
-- migration carry neither hash; several of one message may be among them, so only newer ones are unique.
create unique index dead_letter_refused_event on dead_letter (source, event_id)
  where replayed_at is null and payload_hash is not null;
create unique index dead_letter_refused_message on dead_letter (message_hash)
  where replayed_at is null and message_hash is not null;
