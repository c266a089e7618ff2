// Package provenance builds the provenance tree of one event of a session's
// log: what the event was derived from, recursively. `logbook why` prints
// it and GET /v1/sessions/{id}/why serves it, as the same JSON.
//
// An event's children are, in this order: the events of its
// sourceEventSeqs ("source", or "shadowed" when the event's replacement
// took that node off the surface); for a compaction/summary or
// compaction/prune, the events of its shadowedSeqs ("summarized"); for a
// tool/result, the latest earlier tool/call of its call id ("call") and the
// latest earlier assistant/message requesting that call ("answers"). Only
// earlier events are followed, so the tree is finite; an event is expanded
// once, and a later reference to an event that has children of its own is
// marked Repeated.
package provenance
