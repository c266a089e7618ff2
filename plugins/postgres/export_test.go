package postgres

import (
	"strconv"
	"strings"
)

// SetBeforeCAS makes every append transaction of b call f just before its
// compare-and-set, so a test can hold a transaction open while another
// host takes the session over.
func SetBeforeCAS(b *Backend, f func()) {
	b.mu.Lock()
	b.beforeCAS = f
	b.mu.Unlock()
}

// LegacySchema returns the statements that make schema (quoted) a schema
// at version v (0 < v < SchemaVersion) with store id storeID, as the build
// of that version left it, for tests of the migration.
func LegacySchema(schema, storeID string, v int) string {
	q := "CREATE SCHEMA IF NOT EXISTS " + schema + ";" +
		"CREATE TABLE " + schema + ".schema_version(singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), version integer NOT NULL, store_id text NOT NULL);" +
		"INSERT INTO " + schema + ".schema_version(version, store_id) VALUES (" + strconv.Itoa(v) + ", '" + storeID + "');"
	for _, m := range migrations[:v] {
		q += strings.ReplaceAll(m, "%s", schema) + ";"
	}
	return q
}
