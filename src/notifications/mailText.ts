// How S/4HANA's free text goes into any family's email: on one line, and escaped for HTML.

/** Free text on one line: line breaks, tabs and other control or format characters become single spaces. */
export function oneLine(text: string | null): string {
  return (text ?? '').replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\s]+/gu, ' ').trim();
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
