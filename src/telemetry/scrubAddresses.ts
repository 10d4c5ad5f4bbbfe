// Email addresses are personal data: they never reach a log line or a stored failure reason, which the admin API
// shows to a Viewer. The relay's replies, pg's messages and answers' bodies quote them.

// A local part (anything that cannot end an address) @ a domain name: also catches `user:password@host` in a
// connection string.
const ADDRESS = /[^\s<>()[\]{}"',;:]+@[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)*/gu;

/** `text` with each email address (or `user@host`) replaced by `[address]`. */
export function scrubAddresses(text: string): string {
  return text.replace(ADDRESS, '[address]');
}
