// What an S/4HANA answer means for every reader: its JSON body, or the failure it stands for (s4Failure.ts).
import type { HttpAnswer } from './httpGet.js';
import { UnexpectedResponseError } from './odataEntity.js';
import { httpFailure, parseRetryAfter, s4Failure } from './s4Failure.js';

/** The answer's JSON body; throws the failure a redirect, a body that is not JSON or an error status stands for. */
export function answerBody(answer: HttpAnswer, errorMessage: (body: unknown) => string): unknown {
  if (answer.status >= 300 && answer.status < 400) {
    // A redirect (typically to a logon page) is a destination to fix: the message waits instead of being
    // dead-lettered.
    throw s4Failure('transient', `S/4HANA redirected (HTTP ${answer.status}): check the destination`, {
      status: answer.status,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch (err) {
    if (answer.status >= 200 && answer.status < 300) {
      throw new UnexpectedResponseError('S/4HANA answered with a body that is not JSON', { cause: err });
    }
  }
  if (answer.status < 200 || answer.status >= 300) {
    throw httpFailure(answer.status, errorMessage(parsed), parseRetryAfter(answer.retryAfter));
  }
  return parsed;
}
