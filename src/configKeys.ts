// Every environment variable the service reads. The deployment descriptors may only set keys from this list
// (test/unit/deployment.test.ts checks it), so a typo in mta.yaml or manifest.yml fails a test, not a deploy.
export const CONFIG_KEYS = [
  'PORT',
  'DATABASE_URL',
  'DATABASE_POOL_SIZE',
  'AMQP_URL',
  'AMQP_QUEUE',
  'AMQP_PREFETCH',
  'INGEST',
  'S4_DESTINATION',
  'S4_TIMEOUT_MS',
  'S4_API',
  'S4_MAX_CONCURRENT_READS',
  'S4_READ_BATCH',
  'SMTP_URL',
  'MAIL_DIR',
  'MAIL_FROM',
  'MAIL_TO',
  'MAIL_LEASE_SECONDS',
  'MAIL_LOCALE',
  'PORTAL_ORDER_URL',
  'DEDUP_RETENTION_DAYS',
  'MAIL_RETENTION_DAYS',
  'MAX_DELIVERIES',
  'MAX_MESSAGE_BYTES',
  'LOG_LEVEL',
  'AUTH',
  'EVENT_MESH_SETUP',
  'EVENT_MESH_TOPICS',
  'EVENT_MESH_MAX_REDELIVERY',
] as const;

export type ConfigKey = (typeof CONFIG_KEYS)[number];
