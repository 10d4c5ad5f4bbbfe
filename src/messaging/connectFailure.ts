// Why a connection to the broker failed, in words an operator acts on: the client's own errors name a TLS code
// or a SASL outcome, not what to change.

const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A reason for an AMQP connection error, or undefined where the client's message says enough. */
export function connectFailureReason(err: Error): string | undefined {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && UNTRUSTED_CERTIFICATE.has(code)) {
    return `the broker's TLS certificate is not trusted (${code}): add its CA to NODE_EXTRA_CA_CERTS or the bound service's ca`;
  }
  if (/sasl mechanism "[A-Z]+" failed/.test(err.message)) {
    return 'the broker refused the credentials (SASL): check the user and password, or the client certificate and its user on the broker';
  }
  if (/sasl mechanism/i.test(err.message)) {
    return `the broker does not offer the SASL mechanism the service uses: ${err.message}`;
  }
  return undefined;
}
