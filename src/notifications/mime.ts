import { foldLines } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { encode as quotedPrintable, wrap } from 'nodemailer/lib/qp';
import { PermanentError } from '../errors.js';
import type { RenderedEmail } from './mailKind.js';

/** What goes over SMTP: the envelope and the whole message, CRLF line ends, before dot-stuffing. */
export interface ComposedEmail {
  envelope: { from: string; to: string[] };
  raw: string;
}

// Both parts are quoted-printable, in which "=" is always followed by two hex digits or a line end: a boundary
// that holds "=_" can never occur in either, whatever S/4HANA's free text says, so it needs no randomness.
const BOUNDARY = '=_fleet-order-notifier-alternative';

/**
 * Every email of the service has one shape: a plain text and an HTML alternative, with a few headers. Composing
 * it as one string costs a fraction of nodemailer's composer, which builds a tree of MIME nodes and a stream
 * pipeline for every message. Each header is encoded and folded by nodemailer's own functions (addresses,
 * encoded words, message ids), so a message reads exactly as nodemailer would write it.
 */
export function composeEmail(mail: RenderedEmail, date: Date = new Date()): ComposedEmail {
  // Holds no message: it parses the addresses and encodes the header values, as nodemailer's root node would.
  const head = new MimeNode(false, { baseBoundary: BOUNDARY, keepBcc: false });
  head.setHeader('From', mail.from);
  head.setHeader('To', mail.to);
  const envelope = head.getEnvelope();
  // The same addresses fail the same way every time: parked, not retried.
  if (envelope.from === false || envelope.to.length === 0) {
    throw new PermanentError('an email needs a sender and at least one recipient address');
  }
  const fields: Array<[string, string | string[] | undefined]> = [
    ...Object.entries(mail.headers),
    ['From', mail.from],
    ['To', mail.to],
    ['In-Reply-To', mail.inReplyTo],
    ['References', mail.references],
    ['Subject', mail.subject],
    ['Message-ID', mail.messageId],
    ['Date', date.toUTCString().replace(/GMT/, '+0000')],
    ['MIME-Version', '1.0'],
  ];
  const lines = fields
    .map(([key, value]) => [key, value === undefined ? '' : head.encodeHeaderValue(key, value)] as const)
    // nodemailer never writes a header with an empty value; nor does this.
    .filter(([, value]) => value.trim() !== '')
    .map(([key, value]) => foldLines(`${key}: ${value}`, 76));
  return {
    envelope: { from: envelope.from, to: envelope.to },
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
