// Package sdk holds what both the logbook host and its plugins import: the
// stable error codes and the *Error type of docs/errors.md, the sequence types of
// docs/format.md, and the small wire types shared across the process boundary.
//
// sdk depends on nothing in runtime/ or plugins/; the arrows point down.
package sdk
