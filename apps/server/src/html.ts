// HTML text for mails and pages: the five characters that could break out of text or an attribute.
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Text a person gave (a file name, a typed name, a value a workflow quotes) as a page shows it:
 * without the bidirectional embeddings, overrides and isolates that would make the service's own
 * words around it read backwards ("‮evil" turned "is onboarded" into "debraobno si"); right-to-
 * left text needs none of them to show as it is written. Then escaped.
 */
export function escapePersonText(text: string): string {
  return escapeHtml(text.replace(/[\u202A-\u202E\u2066-\u2069]/g, ''));
}
