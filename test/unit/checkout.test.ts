import { describe, expect, it } from 'vitest';
import { sourcesMatching } from '../support/sourceFiles.js';

// A client checked out of the pg pool without an error listener turns a database failover into an uncaught
// exception. src/db/checkout.ts is the one place that checks clients out; this keeps it the only one.
describe('pool checkout', () => {
  it('happens only in src/db/checkout.ts', () => {
    expect(sourcesMatching(/from 'pg'/, /\.connect\(/)).toEqual(['db/checkout.ts']);
  });
});
