// Package store owns live sessions (docs/architecture.md): their lifecycle (Create,
// Open with durable repair, Inspect, Fork, Salvage of a damaged log, Import,
// Release, Close), the write-behind queues that feed every persistence
// backend, the flush fan-out that waits for all of them, and the event feed
// for observers.
//
// Each live session holds one queue per configured backend. A committed
// event enters every queue by reference; a queue writes when its window
// (200 ms by default, started by the first event of an idle queue) expires,
// or at once when a flush drains it. Failures keep the batch at the front and
// retry with backoff; a final failure fences the session (primary) or
// detaches the mirror. After a plugin restart a queue re-opens its backend,
// verifies the stored events beyond its watermark byte for byte against the
// queue and resends the rest, so nothing acknowledged is lost and nothing is
// stored twice.
package store
