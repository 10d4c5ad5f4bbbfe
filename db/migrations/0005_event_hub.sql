-- Dead letters from SAP Cloud Application Event Hub's push endpoint are kept under their own channel.
alter table dead_letter drop constraint dead_letter_channel_check;
alter table dead_letter add constraint dead_letter_channel_check
  check (channel in ('amqp', 'webhook', 'event-hub'));
