-- What an email needs to say what changed, in whose language, and in which conversation, recorded in the
-- effect's transaction so that a resend after a crash says exactly what the first send said.

-- The fleet manager's language per sold-to party (a BCP 47 tag such as de or de-AT); null: MAIL_LOCALE.
alter table mail_recipient add column locale text
  check (locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$');

-- The pair notified before the last one (the update that records a new pair returns the old one from here,
-- read under the row's lock), and the Message-ID of the order's first email, which later emails refer to.
alter table order_notification
  add column previous_portal_status text,
  add column previous_requested_delivery_date date,
  add column thread_message_id text;
-- Orders notified before this migration: their conversation starts at their oldest email still kept.
update order_notification n set thread_message_id = (
  select m.message_id from mail_outbox m where m.sales_order = n.sales_order order by m.id limit 1
);

-- Per email: 'new' (the order's first notification) or 'changed' (from the previous pair recorded here);
-- null only for emails queued before this migration, which state the current pair alone. The locale is
-- resolved when the email is queued; null only for those older emails (they go out in MAIL_LOCALE).
-- in_reply_to is the thread's first Message-ID, null for that first email itself.
alter table mail_outbox
  add column change text check (change in ('new', 'changed')),
  add column previous_portal_status text,
  add column previous_requested_delivery_date date,
  add column locale text,
  add column in_reply_to text;
