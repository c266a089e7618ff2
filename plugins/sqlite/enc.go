package sqlite

// encID is enc(id) of docs/storage.md, the file-name form of a session id used
// for lock files and torn-row artifacts: over the id's UTF-8 bytes it keeps
// a–z, 0–9, '_', '-', and '.' except at position 0, and writes every other
// byte (A–Z included) as '~' plus two uppercase hex digits. It is injective,
// free of path separators and traversal, and collision-free under ASCII
// case folding. It is written here rather than imported because plugins
// depend on sdk only.
func encID(id string) string {
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(id))
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-', c == '.' && i > 0:
			b = append(b, c)
		default:
			b = append(b, '~', hex[c>>4], hex[c&15])
		}
	}
	return string(b)
}
