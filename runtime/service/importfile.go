package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// How an import lays out a file's lines in its session (docs/import.md,
// "What every import does"). Every line is a source/line record, followed
// by the typed inputs its Step gave when the session accepted them. The
// records and inputs of consecutive lines are appended in batches, each
// one operation (so all or nothing, even under kill -9) whose id names the
// lines it holds:
//
//	import:<first>-<last>:<h>     lines first … last (h: the first 16 hex
//	                              of the SHA-256 of their bytes)
//	import:<first>-<last>:<h>:e   the same, after an End of the mapper
//	                              whose inputs no operation holds (it gave
//	                              none, or the session refused them)
//	import:end-<last>:<h>         the inputs of the End that followed line
//	                              last (h: of that line's bytes)
//
// So the log tells exactly what the mapper was fed, and with which
// Accepted answers (an input group follows its record, or it does not):
// replaying it rebuilds the mapper's state, and an import continues where
// the log ends.
const (
	opPrefix    = "import:"
	opEndPrefix = "import:end-"
	opAfterEnd  = ":e"
	// A batch closes at batchLines lines or batchBytes bytes of inputs.
	batchLines = 64
	batchBytes = 512 << 10
)

// sourceFile is what the importer keeps of one file between calls.
type sourceFile struct {
	path    string
	dialect foreign.Dialect
	ident   foreign.Identity
	id      string // the session written: the file's, or its revision
	sess    *Session
	m       foreign.Mapper
	lines   int      // lines stored
	prefix  [32]byte // SHA-256 of the source bytes of those lines
	size    int      // their length
	endOpen bool     // the last pass's End is in no operation yet
	used    time.Time
}

// importFile imports one file (Import).
func (im *SourceImporter) importFile(ctx context.Context, path string, dialects []foreign.Dialect, r ImportSourceRequest) error {
	data, err := readSource(path)
	if err != nil {
		im.damage(path, 0, err.Error())
		return nil
	}
	lines := foreign.SplitLines(data)
	if r.CompleteLinesOnly && len(lines) > 0 && !lines[len(lines)-1].Newline {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil
	}
	f := im.files[path]
	if f != nil && f.sess.s.Closed() {
		// Released under the importer (serve's idle release): reopen.
		delete(im.files, path)
		f = nil
	}
	if f != nil && (f.size > len(data) || sha256.Sum256(data[:f.size]) != f.prefix) {
		// Rewritten since the last call: start over from the store.
		if _, err := im.forget(ctx, f); err != nil {
			return err
		}
		f = nil
	}
	if f == nil {
		// A followed file may not name its session yet (a Claude Code file
		// can start with a file-history-snapshot line): it is waited for,
		// not reported, and tried again when it grows.
		d := detect(dialects, lines)
		if d == nil {
			if !r.CompleteLinesOnly {
				im.damage(path, 0, "no dialect claims any of its lines")
			}
			return nil
		}
		ident, err := d.Identify(lines)
		if err != nil {
			if !r.CompleteLinesOnly {
				im.damage(path, 0, "not a "+d.Name()+" session: "+err.Error())
			}
			return nil
		}
		if ident.ParentSessionID != "" && ident.AgentID == "" {
			ident.AgentID = agentFromName(path)
		}
		id := r.As
		if id == "" {
			if id, err = foreign.SessionID(ident); err != nil {
				im.damage(path, 0, err.Error())
				return nil
			}
		}
		if f, err = im.attach(ctx, path, d, ident, id, lines); err != nil || f == nil {
			return err
		}
	}
	f.used = im.now()
	if f.lines >= len(lines) {
		return nil
	}
	if err := im.appendLines(ctx, f, lines); err != nil {
		// The mapper may have seen lines the store does not hold, or a
		// branch child may be missing: the next Import starts over from
		// the log (replay), so a repeated call appends nothing twice.
		_, ferr := im.forget(ctx, f)
		return errors.Join(err, ferr)
	}
	f.size = sourceLen(lines[:f.lines])
	f.prefix = sha256.Sum256(data[:f.size])
	return nil
}

// agentFromName is the agent id an old-style subagent file's name gives:
// "agent-<id>.jsonl[.zst]" → <id>; else the name without its extensions.
func agentFromName(path string) string {
	n := filepath.Base(path)
	n = strings.TrimSuffix(strings.TrimSuffix(n, ".zst"), ".jsonl")
	return strings.TrimPrefix(n, "agent-")
}

// sourceLen is the number of source bytes lines cover.
func sourceLen(lines []foreign.Line) int {
	n := 0
	for _, l := range lines {
		n += len(l.Text)
		if l.Newline {
			n++
		}
	}
	return n
}

// attach opens (or creates) the session of a file not held yet, replays
// its log and, when the file no longer matches it, moves to a revision.
// It returns nil when the file cannot go anywhere (reported as damage).
func (im *SourceImporter) attach(ctx context.Context, path string, d foreign.Dialect, ident foreign.Identity, id string, lines []foreign.Line) (*sourceFile, error) {
	f := &sourceFile{path: path, dialect: d, ident: ident, id: id}
	sess, err := im.open(ctx, f, id)
	if err != nil || sess == nil {
		return nil, err
	}
	if tool := sess.Header().Labels[labelTool]; tool != d.Name() {
		im.damage(path, 0, fmt.Sprintf("session %q exists and is not an import of %s (its %s label is %q)", id, d.Name(), labelTool, tool))
		return nil, im.release(ctx, sess)
	}
	f.sess = sess
	rp, err := im.replay(ctx, f, lines)
	if err != nil { // a branch child could not be made: hold nothing
		return nil, errors.Join(err, im.release(ctx, sess))
	}
	if rp.diverged < 0 {
		im.files[path] = f
		return f, nil
	}
	// The file was rewritten: the first revision that still matches it,
	// else a new one forked before the first difference.
	main := sess
	for n := 1; ; n++ {
		rid := foreign.ChildID(id, "rev-"+strconv.Itoa(n))
		rs, err := im.openExisting(ctx, rid)
		if err != nil {
			return nil, err
		}
		if rs == nil {
			rs, err = im.revise(ctx, f, main, rp.diverged, rid)
			if err != nil {
				return nil, err
			}
			im.touched(rid)
		}
		if err := im.release(ctx, main); err != nil {
			return nil, err
		}
		f.sess, f.id = rs, rid
		rr, err := im.replay(ctx, f, lines)
		if err != nil {
			return nil, errors.Join(err, im.release(ctx, rs))
		}
		if rr.diverged < 0 {
			im.files[path] = f
			return f, nil
		}
		main = rs
	}
}

// revise makes revision rid of the file's session main, which differs from
// the file from the raw record at seq at: a fork of main up to the event
// before it (a new session with main as parent when that is the first).
func (im *SourceImporter) revise(ctx context.Context, f *sourceFile, main *Session, at sdk.Seq, rid string) (*Session, error) {
	if at == 0 {
		o := im.createOptions(f)
		o.ParentSession = main.ID()
		return im.svc.Create(ctx, CreateRequest{ID: rid, Header: o})
	}
	cut := at - 1
	return im.svc.Fork(ctx, ForkRequest{Source: main.ID(), At: &cut, As: rid})
}

// The header labels of an imported session.
const (
	labelTool    = "import/tool"
	labelVersion = "import/version"
	labelFile    = "import/file"
)

func (im *SourceImporter) createOptions(f *sourceFile) events.CreateOptions {
	o := events.CreateOptions{Protocol: sdk.ProtocolLenient, Labels: map[string]string{labelTool: f.dialect.Name(), labelFile: f.path}}
	if strings.HasPrefix(f.ident.CWD, "/") {
		o.CWD = f.ident.CWD
	}
	if f.ident.Version != "" {
		o.Labels[labelVersion] = f.ident.Version
	}
	if p := foreign.ParentID(f.ident); p != "" {
		o.ParentSession, o.Origin, o.DelegationDepth = p, "subagent", 1
	}
	return o
}

// open holds session id for write, creating it (lenient, with the file's
// header) when it is absent. A session another file of this importer holds
// is shared.
func (im *SourceImporter) open(ctx context.Context, f *sourceFile, id string) (*Session, error) {
	sess, err := im.openExisting(ctx, id)
	if err != nil || sess != nil {
		return sess, err
	}
	o := im.createOptions(f)
	if err := sdk.ValidateLabels("import", o.Labels); err != nil {
		im.damage(f.path, 0, err.Error())
		return nil, nil
	}
	sess, err = im.svc.Create(ctx, CreateRequest{ID: id, Header: o})
	if err != nil {
		return nil, err
	}
	im.touched(id)
	return sess, nil
}

// openExisting holds stored session id for write without appending
// anything (no repair unless a torn tail forces one); nil when it does not
// exist.
func (im *SourceImporter) openExisting(ctx context.Context, id string) (*Session, error) {
	for _, o := range im.files {
		if o.id == id {
			return o.sess, nil
		}
	}
	sess, _, err := im.svc.OpenWrite(ctx, id, WriteOptions{Continue: true})
	if errors.Is(err, sdk.CodeSessionNotFound) {
		return nil, nil
	}
	return sess, err
}

// release releases sess unless a file of the importer still writes to it.
func (im *SourceImporter) release(ctx context.Context, sess *Session) error {
	for _, o := range im.files {
		if o.sess == sess {
			return nil
		}
	}
	return sess.Release(ctx)
}

// replayed is what a replay found.
type replayed struct {
	// diverged is the seq of the first raw record that differs from the
	// file (a rewrite), -1 when none does.
	diverged sdk.Seq
}

// replay rebuilds f's mapper from its session's log: it feeds the mapper
// the stored lines with their seqs, answers Accepted as the log proves,
// calls End where an operation records one, and makes sure every branch
// child exists. It stops at the first stored line that differs from the
// file.
func (im *SourceImporter) replay(ctx context.Context, f *sourceFile, lines []foreign.Line) (replayed, error) {
	f.m, f.lines, f.endOpen = f.dialect.NewMapper(f.ident), 0, false
	evs := f.sess.Events()
	for i := 0; i < len(evs); {
		ev := evs[i]
		op := operationID(ev.Envelope)
		if strings.HasPrefix(op, opEndPrefix) && !strings.Contains(op, "/") {
			st := f.m.End(ev.Seq)
			ok := matches(evs[i:], st.Inputs)
			f.m.Accepted(ok)
			if ok {
				i += len(st.Inputs)
			} else {
				i++
			}
			continue
		}
		if ev.Type != foreign.TypeSourceLine {
			i++ // a repair, fork closers, a lifecycle marker
			continue
		}
		if strings.HasPrefix(op, opPrefix) && strings.HasSuffix(op, opAfterEnd) {
			st := f.m.End(ev.Seq)
			f.m.Accepted(len(st.Inputs) == 0)
		}
		rec, err := foreign.DecodeRecord(ev.Data)
		if err != nil {
			return replayed{}, fmt.Errorf("session %s seq %d: %w", f.id, ev.Seq, err)
		}
		if rec.N != f.lines+1 {
			return replayed{}, sdk.Errorf(sdk.CodeCorruptLog, "import", "session %s: seq %d holds source line %d after line %d; an import stores lines in order", f.id, ev.Seq, rec.N, f.lines)
		}
		if f.lines >= len(lines) {
			// The file is shorter than what is stored and matches it as
			// far as it goes: nothing to add.
			return replayed{diverged: -1}, nil
		}
		if !rec.Same(lines[f.lines]) {
			return replayed{diverged: ev.Seq}, nil
		}
		st := f.m.Line(lines[f.lines], ev.Seq)
		f.lines++
		i++
		ok := matches(evs[i:], st.Inputs)
		f.m.Accepted(ok)
		if ok {
			i += len(st.Inputs)
		}
		if st.Branch != "" {
			if err := im.branch(ctx, f, st.Branch, ev.Seq); err != nil {
				return replayed{}, err
			}
		}
	}
	return replayed{diverged: -1}, nil
}

// operationID returns the operation id an envelope opens, "" when none.
func operationID(env []byte) string {
	i := strings.LastIndex(string(env), envelope.OperationMember)
	if i < 0 {
		return ""
	}
	rest := env[i+len(envelope.OperationMember) : len(env)-1]
	var op struct {
		ID    string `json:"id"`
		Count int64  `json:"count"`
	}
	if json.Unmarshal(rest, &op) != nil || op.Count < 1 {
		return ""
	}
	return op.ID
}

// matches reports whether evs begins with the events ins appends: the same
// types, surface operations, sources and (as JSON values) data. An empty
// ins always matches.
func matches(evs []events.Event, ins []events.Input) bool {
	if len(evs) < len(ins) {
		return false
	}
	for j, in := range ins {
		e := evs[j]
		if e.Type != in.Type || e.Type == foreign.TypeSourceLine || e.Ignorable != in.Ignorable ||
			(e.SurfaceOp == nil) != (in.SurfaceOp == nil) || (e.SurfaceOp != nil && *e.SurfaceOp != *in.SurfaceOp) ||
			!slicesEqual(e.SourceEventSeqs, in.SourceEventSeqs) || !sameJSON(e.Data, in.Data) {
			return false
		}
	}
	return true
}

func slicesEqual(a, b []sdk.Seq) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sameJSON(a, b []byte) bool {
	da, err := jsonv.Parse(a, jsonv.Options{})
	if err != nil {
		return false
	}
	db, err := jsonv.Parse(b, jsonv.Options{})
	if err != nil {
		return false
	}
	return jsonv.Equal(da.Root(), db.Root())
}

// branch makes the child "<id>-<name>" of f's session, forked at seq (the
// raw record of the line that asked for it), unless it exists.
func (im *SourceImporter) branch(ctx context.Context, f *sourceFile, name string, seq sdk.Seq) error {
	child := foreign.ChildID(f.id, name)
	c, err := im.svc.Fork(ctx, ForkRequest{Source: f.id, At: &seq, As: child})
	if errors.Is(err, sdk.CodeSessionAlreadyExists) || errors.Is(err, sdk.CodeAlreadyOwned) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fork %s at seq %d into %s: %w", f.id, seq, child, err)
	}
	im.touched(child)
	return c.Release(ctx)
}

// batcher builds the operations of a pass: events in order, each
// operation at most batchLines raw records and about batchBytes, and a
// group holding a replace (or another surface event an operation must hold
// alone, docs/format.md "Operation ids") in an operation with no other
// surface event.
type batcher struct {
	im      *SourceImporter
	f       *sourceFile
	base    sdk.Seq // the seq of ins[0]
	ins     []events.Input
	start   string // the op id's start: "N" (raw record N) or "N/k" (group k of line N)
	first   int    // the first line number the op covers
	last    int    // the last one
	raws    int
	size    int
	surface bool
	forks   []fork // to make once the op is stored
	lines   []foreign.Line
	damaged []DamagedLine
	stored  int // lines whose raw records the stored ops hold
}

// fork is a branch child to make: name, forked at seq.
type fork struct {
	name string
	at   sdk.Seq
}

// next is the seq the next queued event gets.
func (b *batcher) next() sdk.Seq { return b.base + sdk.Seq(len(b.ins)) }

func (b *batcher) queue(ins []events.Input, start string, line int) {
	if len(b.ins) == 0 {
		b.start, b.first = start, line
	}
	b.last = line
	for _, in := range ins {
		b.size += len(in.Data)
		if in.SurfaceOp != nil {
			b.surface = true
		}
	}
	b.ins = append(b.ins, ins...)
}

// flush appends the queued events as one operation.
func (b *batcher) flush(ctx context.Context) error {
	if len(b.ins) == 0 {
		return nil
	}
	id := opPrefix + b.start + "-" + strconv.Itoa(b.last) + ":" + lineHash(b.lines[b.first-1:b.last])
	if b.f.endOpen && !strings.Contains(b.start, "/") {
		id += opAfterEnd
	}
	if err := b.im.appendOp(ctx, b.f, b.ins, id, b.base); err != nil {
		return err
	}
	b.f.endOpen = false
	b.f.lines += b.raws
	b.im.summary.DamagedLines = append(b.im.summary.DamagedLines, b.damaged...)
	for _, k := range b.forks {
		if err := b.im.branch(ctx, b.f, k.name, k.at); err != nil {
			return err
		}
	}
	b.base = b.next()
	b.ins, b.raws, b.size, b.surface, b.forks, b.damaged = b.ins[:0], 0, 0, false, nil, nil
	return nil
}

// lonely reports whether a group holds a surface event an operation must
// hold alone.
func lonely(g []events.Input) bool {
	for _, in := range g {
		if in.SurfaceOp != nil && in.SurfaceOp.Replace || in.Type == events.TypeDeveloperMessage || strings.HasPrefix(in.Type, "projection:") {
			return true
		}
	}
	return false
}

// groups splits a Step's inputs into the atomic groups appended in order:
// foreign.Groups of the inputs before the branch fork, then of those after.
func groups(st foreign.Step) (before, after [][]events.Input) {
	k := 0
	if st.Branch != "" {
		k = min(max(st.BranchAfter, 0), len(st.Inputs))
	}
	return foreign.Groups(st.Inputs[:k]), foreign.Groups(st.Inputs[k:])
}

// addStep queues a Step's groups after the raw record of line n, and the
// branch fork after its first BranchAfter inputs.
func (b *batcher) addStep(ctx context.Context, n int, st foreign.Step) error {
	before, after := groups(st)
	k := 0
	for i, g := range append(before, after...) {
		if i == len(before) && st.Branch != "" {
			b.forks = append(b.forks, fork{name: st.Branch, at: b.next() - 1})
		}
		if lonely(g) {
			if b.surface {
				if err := b.flush(ctx); err != nil {
					return err
				}
			}
			b.queue(g, partStart(n, k), n)
			if err := b.flush(ctx); err != nil {
				return err
			}
		} else {
			b.queue(g, partStart(n, k), n)
		}
		k++
	}
	if len(after) == 0 && st.Branch != "" {
		b.forks = append(b.forks, fork{name: st.Branch, at: b.next() - 1})
	}
	return nil
}

// partStart is the op id start of group k (from 0) of line n's inputs,
// used when the group opens an operation: "n/k+1".
func partStart(n, k int) string { return strconv.Itoa(n) + "/" + strconv.Itoa(k+1) }

// appendLines appends lines[f.lines:] as operations, then the mapper's
// End. A batch the session refuses because of a line's inputs is undone:
// the mapper is rebuilt from the log and the rest of the pass goes line by
// line, each group of a line's inputs its own operation (a refused one
// ends the line's groups and answers Accepted(false)).
func (im *SourceImporter) appendLines(ctx context.Context, f *sourceFile, lines []foreign.Line) error {
	single := false
	for f.lines < len(lines) {
		b := &batcher{im: im, f: f, base: sdk.Seq(f.sess.Len()), lines: lines}
		var err error
		if single {
			err = im.appendOne(ctx, b, lines[f.lines])
		} else {
			err = im.appendBatch(ctx, b, lines)
		}
		if refused(err) && !single {
			// Undo the speculative Accepted answers: rebuild the mapper
			// from the log, which the refused operation did not touch.
			if _, err := im.replay(ctx, f, lines); err != nil {
				return err
			}
			single = true
			continue
		}
		if err != nil {
			return err
		}
	}
	return im.end(ctx, f, lines[f.lines-1])
}

// appendBatch appends up to batchLines lines (fewer when a lonely group
// closes an operation early), answering Accepted(true) ahead of the store.
func (im *SourceImporter) appendBatch(ctx context.Context, b *batcher, lines []foreign.Line) error {
	for k := b.f.lines; k < len(lines) && b.raws < batchLines && b.size < batchBytes; k++ {
		l := lines[k]
		raw := b.next()
		st := b.f.m.Line(l, raw)
		b.queue([]events.Input{foreign.Record{Line: l, Damage: st.Damage}.Input()}, strconv.Itoa(l.N), l.N)
		b.raws++
		if st.Damage != "" {
			b.damaged = append(b.damaged, DamagedLine{File: b.f.path, Line: l.N, Reason: st.Damage})
		}
		b.f.m.Accepted(true)
		if err := b.addStep(ctx, l.N, st); err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

// appendOne appends one line: its raw record, then each group of its
// inputs as an operation of its own, until one is refused.
func (im *SourceImporter) appendOne(ctx context.Context, b *batcher, l foreign.Line) error {
	raw := b.next()
	st := b.f.m.Line(l, raw)
	b.queue([]events.Input{foreign.Record{Line: l, Damage: st.Damage}.Input()}, strconv.Itoa(l.N), l.N)
	b.raws++
	if st.Damage != "" {
		b.damaged = append(b.damaged, DamagedLine{File: b.f.path, Line: l.N, Reason: st.Damage})
	}
	if err := b.flush(ctx); err != nil {
		return err
	}
	before, after := groups(st)
	ok := true
	for i, g := range append(before, after...) {
		if i == len(before) && st.Branch != "" {
			if err := im.branch(ctx, b.f, st.Branch, b.next()-1); err != nil {
				return err
			}
		}
		b.queue(g, partStart(l.N, i), l.N)
		err := b.flush(ctx)
		if refused(err) {
			b.ins, b.size, b.surface = b.ins[:0], 0, false
			ok = false
			break
		}
		if err != nil {
			return err
		}
	}
	if ok && len(after) == 0 && st.Branch != "" {
		if err := im.branch(ctx, b.f, st.Branch, b.next()-1); err != nil {
			return err
		}
	}
	b.f.m.Accepted(ok)
	return nil
}

// end calls the mapper's End after a pass and appends its inputs, each
// group an operation ("import:end-<last>…"); when it gives none, or the
// session refuses them, the next pass's first operation records the End
// instead (":e").
func (im *SourceImporter) end(ctx context.Context, f *sourceFile, last foreign.Line) error {
	st := f.m.End(sdk.Seq(f.sess.Len()))
	if len(st.Inputs) == 0 {
		f.m.Accepted(true)
		f.endOpen = true
		return nil
	}
	h := lineHash([]foreign.Line{last})
	for k, g := range foreign.Groups(st.Inputs) {
		id := opEndPrefix + strconv.Itoa(last.N) + ":" + h
		if k > 0 {
			id = opEndPrefix + strconv.Itoa(last.N) + "/" + strconv.Itoa(k) + ":" + h
		}
		err := im.appendOp(ctx, f, g, id, sdk.Seq(f.sess.Len()))
		if refused(err) && k == 0 {
			f.m.Accepted(false)
			f.endOpen = true
			return nil
		}
		if refused(err) {
			f.m.Accepted(false)
			f.endOpen = false
			return nil
		}
		if err != nil {
			return err
		}
	}
	f.m.Accepted(true)
	f.endOpen = false
	return nil
}

// appendOp appends ins as operation id, expecting the session's length to
// be at: the seq the mapper was told its first event gets.
func (im *SourceImporter) appendOp(ctx context.Context, f *sourceFile, ins []events.Input, id string, first sdk.Seq) error {
	at := sdk.Offset(first)
	res, err := f.sess.Append(ctx, AppendRequest{Inputs: ins, Expected: &at, OperationID: id})
	if err != nil {
		return err
	}
	if !res.Replayed {
		im.summary.Events += int64(len(res.Events))
	}
	im.touched(f.id)
	return nil
}

// lineHash is the first 16 hex digits of the SHA-256 of the lines' source
// bytes.
func lineHash(ls []foreign.Line) string {
	h := sha256.New()
	for _, l := range ls {
		r := foreign.Record{Line: l}
		h.Write(r.AppendSource(nil))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// refused reports whether err is the session refusing an input by the
// rules of docs/format.md (not a conflict, a closed session or a storage
// failure).
func refused(err error) bool {
	e := sdk.ErrorOf(err)
	if e == nil || e.Index == nil && e.Seq == nil && e.Op != "session" {
		return false
	}
	switch e.Code {
	case sdk.CodeSeqConflict, sdk.CodeOperationConflict, sdk.CodeOperationIDInvalid, sdk.CodeSessionClosed,
		sdk.CodeSessionReadOnly, sdk.CodeSessionFenced, sdk.CodeBackendBusy, sdk.CodeSessionNotLive,
		sdk.CodeIOError, sdk.CodeFlushFailed, sdk.CodeCorruptLog:
		return false
	}
	return true
}
