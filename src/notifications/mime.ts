import { foldLines } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { encode as quotedPrintable, wrap } from 'nodemailer/lib/qp';
import { PermanentError } from '../errors.js';
import { keptPerKey } from './keptPerKey.js';
import type { RenderedEmail } from './mailKind.js';

/** What goes over SMTP: the envelope and the whole message, CRLF line ends, before dot-stuffing. */
export interface ComposedEmail {
  envelope: { from: string; to: string[] };
  raw: string;
}

// Both parts are quoted-printable, in which "=" is always followed by two hex digits or a line end: a boundary
// that holds "=_" can never occur in either, whatever S/4HANA's free text says, so it needs no randomness.
const BOUNDARY = '=_fleet-order-notifier-alternative';

// Encodes header values as nodemailer's root node would (encoded words, message ids). It holds no message and
// keeps no state between values, so one serves every email.
const encoder = new MimeNode(false, { baseBoundary: BOUNDARY, keepBcc: false });

// Parsing an address list is the dearest part of the header block, and every email names the same sender and one
// of a few recipient lists: each list's envelope addresses and header value are kept.
const addressesOf = keptPerKey<{ envelope: string[]; header: string }>(100);

/** The envelope addresses of a From or To header, and its value encoded and ready to fold. */
function addresses(field: 'From' | 'To', value: string | string[]) {
  return addressesOf(JSON.stringify([field, value]), () => {
    const node = new MimeNode(false, { baseBoundary: BOUNDARY, keepBcc: false });
    node.setHeader(field, value);
    const { from, to } = node.getEnvelope();
    return {
      envelope: field === 'To' ? to : from === false ? [] : [from],
      header: node.encodeHeaderValue(field, value),
    };
  });
}

/**
 * Every email of the service has one shape: a plain text and an HTML alternative, with a few headers. Composing
 * it as one string costs a fraction of nodemailer's composer, which builds a tree of MIME nodes and a stream
 * pipeline for every message. Each header is encoded and folded by nodemailer's own functions (addresses,
 * encoded words, message ids), so a message reads exactly as nodemailer would write it.
 */
export function composeEmail(mail: RenderedEmail, date: Date = new Date()): ComposedEmail {
  const from = addresses('From', mail.from);
  const to = addresses('To', mail.to);
  const [sender] = from.envelope;
  // The same addresses fail the same way every time: parked, not retried.
  if (sender === undefined || to.envelope.length === 0) {
    throw new PermanentError('an email needs a sender and at least one recipient address');
  }
  const encode = (key: string, value: string | string[] | undefined) =>
    value === undefined ? '' : encoder.encodeHeaderValue(key, value);
  const fields: Array<[string, string]> = [
    ...Object.entries(mail.headers).map(([key, value]): [string, string] => [key, encode(key, value)]),
    ['From', from.header],
    ['To', to.header],
    ['In-Reply-To', encode('In-Reply-To', mail.inReplyTo)],
    ['References', encode('References', mail.references)],
    ['Subject', encode('Subject', mail.subject)],
    ['Message-ID', encode('Message-ID', mail.messageId)],
    ['Date', encode('Date', date.toUTCString().replace(/GMT/, '+0000'))],
    ['MIME-Version', '1.0'],
  ];
  const lines = fields
    // nodemailer never writes a header with an empty value; nor does this.
    .filter(([, value]) => value.trim() !== '')
    .map(([key, value]) => foldLines(`${key}: ${value}`, 76));
  return {
    envelope: { from: sender, to: [...to.envelope] },
    raw:
      `${lines.join('\r\n')}\r\n` +
      `Content-Type: multipart/alternative;\r\n boundary="${BOUNDARY}"\r\n\r\n` +
      part('text/plain', mail.text) +
      part('text/html', mail.html) +
      `--${BOUNDARY}--\r\n`,
  };
}

function part(type: string, content: string): string {
  const body = wrap(quotedPrintable(content.replace(/\r\n|\r|\n/g, '\r\n')), 76);
  return (
    `--${BOUNDARY}\r\nContent-Type: ${type}; charset=utf-8\r\n` +
    `Content-Transfer-Encoding: quoted-printable\r\n\r\n${body}\r\n`
  );
}
