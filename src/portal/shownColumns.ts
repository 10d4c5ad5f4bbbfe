// The order values the portal shows, as portal_push holds them beside portal_order_status: a change of any of them
// is a change the portal must be told of, and a push booked done records them as pushed_* (pushOutbox.ts) for the
// sales-order family's effect to compare with.
export const SHOWN_COLUMNS = [
  'portal_status',
  'requested_delivery_date',
  'sold_to_party',
  'customer_reference',
] as const;
