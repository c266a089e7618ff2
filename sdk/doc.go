// Package sdk holds what both the logbook host and its plugins import: the
// stable error codes and the *Error type of SPEC §1.4, the sequence types of
// SPEC §2.1, and the small wire types shared across the process boundary.
//
// sdk depends on nothing in runtime/ or plugins/; the arrows point down.
package sdk
