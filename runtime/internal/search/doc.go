// Package search finds the messages and tool results of stored sessions
// that contain a text, reading every session through its persistence
// backend's Read (docs/operations.md, "Searching sessions").
//
// A scan never parses an event it can rule out: each stored envelope is
// first tested with a byte search for the text in its JSON-escaped form
// (folded to lower case unless the search is case-sensitive); only the
// envelopes that pass are parsed, and a hit is reported only when the text
// is in what the message says — the text of its text blocks and the names
// and arguments of its tool calls — not in an id or another member.
//
// Hits come newest first: sessions by creation time, newest first, and
// within a session the latest event first. Several sessions are read at
// once (a compressed log is decoded by its backend while another is being
// searched), and the hits of each are reported as soon as it and every
// newer session are done, so a caller sees results while the scan goes on.
package search
