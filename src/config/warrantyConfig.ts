// Which customer returns are warranty cases: WARRANTY_RETURN_REASONS, a comma-separated list of return reasons
// (S/4HANA's three-character codes, matched as written). Unset: every return is a case.
import type { EnvReader } from './envReader.js';

const REASON = /^[A-Za-z0-9]{1,3}$/;

/** The customer-return family's settings. */
export interface CustomerReturnSettings {
  /** WARRANTY_RETURN_REASONS; undefined: every customer return is a warranty case. */
  warrantyReturnReasons: ReadonlySet<string> | undefined;
}

export function customerReturnConfig(read: EnvReader): CustomerReturnSettings {
  return { warrantyReturnReasons: warrantyReturnReasons(read) };
}

export function warrantyReturnReasons(read: EnvReader): ReadonlySet<string> | undefined {
  if (read.optional('WARRANTY_RETURN_REASONS') === undefined) return undefined;
  const reasons = read.list('WARRANTY_RETURN_REASONS');
  const wrong = reasons.filter((reason) => !REASON.test(reason));
  if (reasons.length === 0) read.problems.push('WARRANTY_RETURN_REASONS lists no return reason');
  else if (wrong.length > 0) {
    read.problems.push(
      `WARRANTY_RETURN_REASONS takes return reasons of 1 to 3 letters or digits, got ${wrong.map((r) => `"${r}"`).join(', ')}`,
    );
  }
  return new Set(reasons);
}
