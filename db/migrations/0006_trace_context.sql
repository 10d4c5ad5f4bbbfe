-- The W3C traceparent of the span that queued an email (null when tracing is off), so that its send, later and
-- perhaps on another instance, links to the event that caused it.
alter table mail_outbox add column trace_parent text;
