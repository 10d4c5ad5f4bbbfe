import { randomBytes } from 'node:crypto';

/** Makes the SDK's `destinations` variable name a destination for a local stand-in (S/4HANA, the portal); returns its name. */
export function registerDestination(url: string): string {
  const name = `S4_${randomBytes(4).toString('hex')}`;
  const existing = JSON.parse(process.env.destinations ?? '[]') as unknown[];
  process.env.destinations = JSON.stringify([...existing, { name, url }]);
  return name;
}
