// JSON as the panel shows it: indented, with each string's line breaks
// drawn as line breaks, so a tool result or a prompt reads as its lines.

/**
 * The JSON text of v indented by two spaces, as JSON.stringify writes it,
 * except that the escape \n inside a string is a real line break. In
 * JSON.stringify's output a backslash only starts an escape pair, so the
 * pairs are read left to right and an escaped backslash followed by "n"
 * stays as it is.
 */
export function prettyJSON(v: unknown): string {
  return (JSON.stringify(v, null, 2) ?? "").replace(/\\(.)/g, (pair, c: string) => (c === "n" ? "\n" : pair));
}
