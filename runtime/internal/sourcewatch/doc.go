// Package sourcewatch watches directory trees for session files of other
// agent tools (names ending in .jsonl or .jsonl.zst) that are created or
// grow, so the live mirror (logbook import --follow, serve's mirror block)
// can import each change shortly after it is written.
//
// # What it reports
//
// A Watcher remembers the size and modification time of every matching
// file under its roots. Run calls its function with the files whose size or
// modification time changed since they were last reported (or that
// appeared), in lexical order, one call per quiet period: notifications
// that arrive within Debounce of each other are merged into one call, so a
// line written in several writes is imported once; a stream of writes that
// never pauses is still reported every MaxDelay. A file that is removed is
// forgotten (nothing is reported); a file that is rewritten in place is
// reported like a grown one, and the importer decides what it is.
//
// Files present when the Watcher is made are its starting state: they are
// not reported until they change. The caller imports them first (after New
// returns, so that no write falls between the import and the watch).
//
// # Modes
//
// ModeNotify uses the operating system's notifications (fsnotify: inotify
// on Linux, kqueue on the BSDs and macOS, ReadDirectoryChangesW on
// Windows), with a watch on every directory of the trees; a directory that
// appears is watched and scanned at once, so files created in it before its
// watch existed are reported too. A lost notification (a queue overflow)
// makes it rescan the trees.
//
// ModePoll stats every file of the trees every PollInterval. A Watcher runs
// in it when asked (Options.Poll: file systems that deliver no
// notifications for writes made on other machines, such as NFS), or when
// notifications fail: no notification instance is left, a directory cannot
// be watched (the inotify watch limit, fs.inotify.max_user_watches), or the
// notifications stop. It then stays in ModePoll; Mode and Why say so.
package sourcewatch
