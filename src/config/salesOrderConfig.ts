// The sales-order family's settings: what its emails link to.
import type { EnvReader } from './envReader.js';

export interface SalesOrderSettings {
  /** PORTAL_ORDER_URL: a URL template with `{salesOrder}`, or undefined: no link. */
  portalOrderUrl: string | undefined;
}

export function salesOrderConfig(read: EnvReader): SalesOrderSettings {
  const portalOrderUrl = read.optional('PORTAL_ORDER_URL');
  if (portalOrderUrl !== undefined && !isUrlTemplate(portalOrderUrl)) {
    read.problems.push(
      `PORTAL_ORDER_URL must be an http(s) URL with {salesOrder} in it, e.g. https://portal.example.com/orders/{salesOrder}, got "${portalOrderUrl}"`,
    );
  }
  return { portalOrderUrl };
}

function isUrlTemplate(template: string): boolean {
  if (!template.includes('{salesOrder}')) return false;
  try {
    const url = new URL(template.replaceAll('{salesOrder}', '1000474'));
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
