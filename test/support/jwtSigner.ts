import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { watchLogFor } from './logGuard.js';

export interface SignOptions {
  /** Negative for an expired token; mind xssec's 60 s leeway. */
  expiresInSeconds?: number;
  /** Sign with a key the issuer does not publish (same kid). */
  otherKey?: boolean;
  /** Flip one bit of the signature. */
  tamper?: boolean;
  /** Header fields beside alg, typ and kid. */
  header?: Record<string, unknown>;
}

export interface JwtSigner {
  /** The public key as the issuer publishes it. */
  jwk: Record<string, unknown>;
  /** An RS256 JWT of `claims` with a fresh jti, iat and exp. */
  sign(claims: Record<string, unknown>, opts?: SignOptions): string;
}

// What a user token says of the person beyond an id: personal data, which no log line may carry.
const PERSONAL_CLAIMS = ['user_name', 'email', 'given_name', 'family_name', 'mail'];

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });

/** A token issuer's signing key, published under `kid`, and a stranger's key that claims the same kid. */
export function jwtSigner(kid: string): JwtSigner {
  const signing = rsa();
  const stranger = rsa();
  return {
    jwk: { ...signing.publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' },
    sign(claims, opts = {}) {
      for (const claim of PERSONAL_CLAIMS) {
        const value = claims[claim];
        if (typeof value === 'string') watchLogFor(`a token's ${claim}`, value);
      }
      const now = Math.floor(Date.now() / 1000);
      const exp = now + (opts.expiresInSeconds ?? 600);
      const payload = { jti: randomUUID(), ...claims, iat: Math.min(now, exp - 60), exp };
      const data = `${b64({ alg: 'RS256', typ: 'JWT', kid, ...opts.header })}.${b64(payload)}`;
      const signature = sign('sha256', Buffer.from(data), (opts.otherKey ? stranger : signing).privateKey);
      if (opts.tamper) signature[10] = (signature[10] ?? 0) ^ 1;
      return `${data}.${signature.toString('base64url')}`;
    },
  };
}
