// Whether a message's content type can carry a CloudEvent the parser reads: JSON in UTF-8, and which mode.
import { BATCH_MEDIA_TYPE } from './cloudEventBatch.js';
import { type Failure, fail, show } from './reasonText.js';

// RFC 9110 8.3.1: type "/" subtype, each a token.
const MEDIA_TYPE = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/;
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
// What the AMQP client hands over for an amqp-value body that is not a string (see amqpMessage.ts, toInbound).
const AMQP_VALUE_TYPE = 'amqp-1.0';

/** `structured`: the content type says the whole event is the body, whatever else the message carries. */
export function checkContentType(
  contentType: string | undefined,
): { ok: true; structured: boolean } | Failure {
  if (contentType === AMQP_VALUE_TYPE) return fail('body is an AMQP value section, not JSON data');
  const media = mediaType(contentType);
  if (media === '' && (contentType ?? '').trim() === '') return { ok: true, structured: false };
  if (!MEDIA_TYPE.test(media)) return fail(`content type ${show(contentType)} is not a valid media type`);
  if (media === BATCH_MEDIA_TYPE) return fail('batched CloudEvents are not supported');
  if (!JSON_MEDIA_TYPE.test(media)) return fail(`content type ${show(contentType)} is not JSON`);
  for (const parameter of (contentType ?? '').split(';').slice(1)) {
    const [name = '', value = ''] = parameter.split('=', 2).map((part) => part.trim());
    const charset = value.replace(/^"(.*)"$/, '$1').toLowerCase();
    if (name.toLowerCase() === 'charset' && charset !== 'utf-8' && charset !== 'utf8') {
      return fail(`content type charset ${show(value)} is not UTF-8`);
    }
  }
  // The CloudEvents bindings: this media type marks structured mode, whatever else the message carries.
  return { ok: true, structured: media.startsWith('application/cloudevents') };
}

/** The type/subtype of a content type, lower case, without parameters; '' for none. */
export function mediaType(contentType: string | undefined): string {
  return ((contentType ?? '').split(';')[0] ?? '').trim().toLowerCase();
}
