// How every family's email catalogs are read: a message with its `{placeholders}` filled, and a status by name.

/** The catalog's message with its `{placeholders}` filled; a placeholder without a value stays as written. */
export function fillMessage(message: string, values: Readonly<Record<string, string>> = {}): string {
  return message.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}

/** A status by name in one of its forms (`status.Open`, `subjectStatus.Open`); one the catalog lacks as it is. */
export function statusText(
  catalog: Readonly<Record<string, string>>,
  status: string,
  form: 'status' | 'subjectStatus',
): string {
  const key = `${form}.${status}`;
  return Object.hasOwn(catalog, key) ? (catalog[key] as string) : status;
}
