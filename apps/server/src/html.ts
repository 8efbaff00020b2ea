// HTML text for mails and pages: the five characters that could break out of text or an attribute.
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
