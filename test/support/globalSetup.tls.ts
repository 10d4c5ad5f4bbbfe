import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';

/**
 * Makes one self-signed certificate for `localhost` that test HTTPS servers (the xsuaa stub) serve.
 * Node reads NODE_EXTRA_CA_CERTS only when a process starts, so this runs once in vitest's main process
 * before the workers are forked; the forks inherit process.env and so trust the certificate.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'fon-test-tls-'));
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  const certPath = join(dir, 'localhost.crt');
  const keyPath = join(dir, 'localhost.key');
  const caPath = join(dir, 'extra-ca.pem');
  // The workers see only this file, so keep a CA the caller already trusts (a corporate proxy's, say).
  const earlier = process.env.NODE_EXTRA_CA_CERTS;
  const kept = earlier ? await readFile(earlier, 'utf8').catch(() => '') : '';
  await writeFile(certPath, pems.cert);
  await writeFile(keyPath, pems.private, { mode: 0o600 });
  await writeFile(caPath, `${kept.trimEnd()}\n${pems.cert}`.trimStart());
  process.env.NODE_EXTRA_CA_CERTS = caPath;
  process.env.TEST_TLS_CERT = certPath;
  process.env.TEST_TLS_KEY = keyPath;
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}
