// Package logbook runs logbook inside a Go program: the event-sourced
// session log of an LLM agent, with its plugins and durable storage, behind
// one door. (The same runtime serves other processes as `logbook serve`;
// package client talks to it with the same method names and types.)
//
// A program opens a Runtime, creates or resumes sessions, appends the
// events of each turn, built with package events, and reads back the
// model messages the log derives to:
//
//	func main() {
//		logbook.ServePlugins() // first: this program also runs the bundled plugins
//		ctx := context.Background()
//		rt, err := logbook.Open(ctx, logbook.Options{DataDir: "agent-data"})
//		if err != nil {
//			log.Fatal(err)
//		}
//		defer rt.Close(ctx)
//		s, err := rt.Create(ctx, "s1", events.CreateOptions{})
//		…
//		_, err = s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}))
//		…
//		err = s.Flush(ctx)   // the durability checkpoint
//		msgs, err := s.Messages()
//		err = s.Release(ctx) // later: rt.Resume(ctx, "s1")
//	}
//
// # Plugins
//
// Storage backends, the summarizer and the pruner are plugins: separate
// processes the runtime starts and supervises (docs/plugins.md). The
// bundled ones (jsonl, sqlite, postgres, memory, compactor-summary, pruner)
// run from this program itself, started again as `<program> plugin <name>`,
// which is why ServePlugins must come first in main. This package links
// jsonl, memory and pruner; the program links each other one by importing
// its registration package (`import _ ".../plugins/sqlite/bundle"`, see
// ServePlugins), so it links only the backends it uses. A program that
// cannot call ServePlugins sets Options.PluginBinary to an installed
// logbook binary instead, which bundles them all; with neither, or with a
// configuration naming a bundled plugin the program does not link, Open
// fails at once with PLUGIN_UNAVAILABLE naming the remedy. Third-party
// plugins are named in the configuration (Options.Config or ConfigFile).
//
// # Configuration
//
// With only Options.DataDir set, Open uses the embedded default
// configuration (config.Default): JSONL files with zstd under DataDir, and
// compaction with the bundled compactor-summary plugin and the pruner. This
// package does not link compactor-summary, so a program that relies on the
// default imports its registration package,
//
//	import _ "github.com/seed-e5e476df/logbook/plugins/compactor-summary/bundle"
//
// or sets Options.PluginBinary, or passes config.Headless (the same without
// compaction) as Options.Config; otherwise Open fails with
// PLUGIN_UNAVAILABLE. Options.ConfigFile reads an HCL file and
// Options.Config takes one built with package config (docs/operations.md
// lists every key).
//
// # Sessions
//
// Runtime.Create makes a session; Runtime.Resume makes a stored one live
// again after a restart or a crash, cutting a torn tail and closing an
// interrupted turn (its service.RepairReport says what it did);
// Runtime.Fork starts a new session from a prefix of another;
// Runtime.Inspect reads one without writing; Runtime.List lists them. A Session belongs to the Runtime that
// returned it and is live there until Release or Runtime.Close.
//
// Session.Append validates every event against the rules of
// docs/format.md and appends it at once in memory; the backends get it
// within the write window (200 ms by default), and Session.Flush waits
// until they hold it. Append appends its inputs in order and stops at the
// first rejected one, keeping those before it; AppendGroup is all or
// nothing; AppendAt and AppendGroupAt refuse with SEQ_CONFLICT unless the
// log has the expected length, which makes a retried append safe.
//
// Session.Compact summarizes the head of the surface (or a region of it)
// into one checkpoint message with the configured summarizer
// (docs/compaction.md); the log keeps every event.
//
// Reads are snapshots that never wait for storage: Events (the log),
// Messages (what the model is sent: the surface after rewrites, pruning
// and projections), Transcript (what a human reads), Surface and Header.
//
// # Errors
//
// Every error carries a stable code (docs/format.md and sdk's Code
// constants); test it with errors.Is(err, sdk.CodeSeqConflict) and read
// its details with errors.As into *sdk.Error.
package logbook
