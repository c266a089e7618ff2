package sqlite

// LegacyDDL returns the CREATE TABLE statements of schema version v (1 …
// 3) in creation order, for tests that build a database of an older
// version.
func LegacyDDL(v int64) []string {
	var out []string
	for _, t := range legacy {
		if t.since <= v {
			out = append(out, t.ddlAt(v))
		}
	}
	return out
}
