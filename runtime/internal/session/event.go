package session

import (
	"bytes"
	"io"
	"strconv"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// SurfaceOp is an event's surface operation (docs/format.md): the
// harnesses' events.SurfaceOp. Replace=false means "append"; Replace=true
// replaces the current span StartSeq..EndSeq (inclusive, in surface order)
// with the event.
type SurfaceOp = events.SurfaceOp

// Event is one accepted, immutable event. It is a small handle to a record
// that nobody can change: byte accessors return copies and DataView offers
// only read methods. The zero Event is not an event; IsZero reports it.
type Event struct{ r *record }

// record is the immutable body of an Event. Every field is written before the
// record is published and never again.
//
// A record keeps its parsed data (the jsonv tape) only while it is
// validated and folded: commit drops it (settle), except for the events the
// folds read again and again (request/header, request/context), and
// dataView parses the stored bytes again on demand. The tape is about as
// large as the envelope, so a long log held in memory costs its canonical
// bytes plus a small record per event instead of twice its size.
type record struct {
	env  []byte // canonical envelope; never handed out without a copy
	seq  sdk.Seq
	time int64
	typ  string
	// data is the parsed data until the record is settled; then the zero
	// Value (read it through dataView).
	data               jsonv.Value
	dataStart, dataEnd uint32 // the data's span in env
	meta               surfaceMeta
	msg                *msgRec // recorded message of a surface event; nil when it has none
	msgStart           uint32  // the offset of msg.json in env
	cls                class
	ignorable          bool
	yields             bool // msg is a model message (non-empty content where docs/format.md asks)
	flags              recordFlags
}

// recordFlags are a record's flags, kept in one byte.
type recordFlags uint8

const (
	// flagChecked: a StoredParser ran the class rule and the event-local
	// checks and they passed; the restore that takes the record over
	// skips them once and clears the flag.
	flagChecked recordFlags = 1 << iota
	// flagOperation: the envelope ends with an operation member
	// (docs/format.md, "Operation ids"); operation reads it.
	flagOperation
)

// dataView returns the parsed data: the parse the record keeps, or a fresh
// parse of its stored data bytes (which are canonical and were validated,
// so the parse cannot fail).
func (r *record) dataView() jsonv.Value {
	if r.data.Exists() {
		return r.data
	}
	doc, err := jsonv.Parse(r.env[r.dataStart:r.dataEnd], jsonv.Options{})
	if err != nil {
		return jsonv.Value{}
	}
	return doc.Root()
}

// keepsParse reports whether the record keeps its parsed data once
// settled: the folded request header and context are read on every
// request and tool check.
func (r *record) keepsParse() bool {
	return r.typ == TypeRequestHeader || r.typ == TypeRequestContext
}

// settle drops the parse of a record that has been validated and folded
// (see record). Called before the record is visible to readers; a record
// settled already (a fork's shared prefix, folded again) is only read, so
// folding it beside its readers is no data race.
func (r *record) settle() {
	if r.keepsParse() || !r.data.Exists() && r.meta.raw == nil {
		return
	}
	r.data = jsonv.Value{}
	r.meta.raw = nil
}

// rawMeta holds the surfaceOp and sourceEventSeqs values as stored: the
// surface rules quote them in their errors, and a plugin type's op is
// rendered verbatim.
type rawMeta struct{ op, src jsonv.Value }

// rawValues returns the stored surfaceOp and sourceEventSeqs values,
// parsing the envelope again when the record no longer keeps them.
func (r *record) rawValues() rawMeta {
	if r.meta.raw != nil {
		return *r.meta.raw
	}
	doc, err := jsonv.Parse(r.env, jsonv.Options{Enclosing: 1})
	if err != nil {
		return rawMeta{}
	}
	root := doc.Root()
	return rawMeta{op: root.Get("surfaceOp"), src: root.Get("sourceEventSeqs")}
}

// surfaceMeta is an event's surface metadata: interpreted when well-formed,
// raw (for class U, and for the surface pipeline's shape checks) when read
// from an envelope.
// The raw values are kept only until the record is settled.
type surfaceMeta struct {
	opPresent   bool
	opOK        bool // op holds the interpreted value
	opCanonical bool // render op canonically even though raw.op is set (core surface types)
	srcPresent  bool
	srcOK       bool
	op          SurfaceOp
	sources     []sdk.Seq
	raw         *rawMeta // nil on the append path and once settled
}

// IsZero reports whether e is the zero Event.
func (e Event) IsZero() bool { return e.r == nil }

// Seq returns the event's position in its log.
func (e Event) Seq() sdk.Seq { return e.r.seq }

// Time returns the event's epoch-millisecond time from the session clock.
func (e Event) Time() int64 { return e.r.time }

// Type returns the event type.
func (e Event) Type() string { return e.r.typ }

// Ignorable reports whether the envelope carries "ignorable": true.
func (e Event) Ignorable() bool { return e.r.ignorable }

// SurfaceOp returns the interpreted surface operation; ok is false when the
// event has none, or (class U only) when it is not a well-formed one.
func (e Event) SurfaceOp() (op SurfaceOp, ok bool) {
	return e.r.meta.op, e.r.meta.opOK
}

// Data returns a fresh copy of the canonical data bytes.
func (e Event) Data() []byte { return append([]byte(nil), e.r.env[e.r.dataStart:e.r.dataEnd]...) }

// DataView returns a read-only view of the parsed data. Except for
// request/header and request/context events it parses the stored bytes
// on each call: keep the view while you need it.
func (e Event) DataView() jsonv.Value { return e.r.dataView() }

// SourceEventSeqs returns a fresh copy of the sources; nil when absent (or,
// for class U, not a well-formed list).
func (e Event) SourceEventSeqs() []sdk.Seq {
	if !e.r.meta.srcOK {
		return nil
	}
	return append([]sdk.Seq{}, e.r.meta.sources...)
}

// Envelope returns a fresh copy of the canonical envelope (docs/format.md).
func (e Event) Envelope() []byte { return append([]byte(nil), e.r.env...) }

// AppendEnvelope appends the canonical envelope to dst.
func (e Event) AppendEnvelope(dst []byte) []byte { return append(dst, e.r.env...) }

// WriteEnvelope writes the canonical envelope to w in one Write of the
// session's own bytes, not a copy, so any number of readers stream an event
// without a copy each; w must not modify or keep them (the io.Writer
// contract).
func (e Event) WriteEnvelope(w io.Writer) (int, error) { return w.Write(e.r.env) }

// EnvelopeLen returns the size of the canonical envelope in bytes.
func (e Event) EnvelopeLen() int { return len(e.r.env) }

// buildEnvelope renders the canonical envelope around data (rules A6, A8):
// data is validated by the lossless-JSON pass while it is copied into the
// envelope buffer, so the bytes are scanned exactly once.
func buildEnvelope(seq sdk.Seq, time int64, typ string, data []byte, meta *surfaceMeta, ignorable bool, op []byte) (*record, error) {
	size := 48 + len(typ) + len(data) + 64 + 20*len(meta.sources) + len(op)
	buf := make([]byte, 0, size)
	buf = append(buf, `{"seq":`...)
	buf = strconv.AppendInt(buf, int64(seq), 10)
	buf = append(buf, `,"time":`...)
	buf = strconv.AppendInt(buf, time, 10)
	buf = append(buf, `,"type":`...)
	buf = jsonv.AppendString(buf, typ)
	buf = append(buf, `,"data":`...)
	// data is parsed alone: its own depth is the one limited.
	buf, doc, err := jsonv.AppendParse(buf, data, jsonv.Options{})
	if err != nil {
		return nil, err
	}
	buf = appendMeta(buf, meta)
	if ignorable {
		buf = append(buf, `,"ignorable":true`...)
	}
	buf = append(buf, op...)
	buf = append(buf, '}')
	root := doc.Root()
	start, end := root.Span()
	r := &record{env: buf[:len(buf):len(buf)], seq: seq, time: time, typ: typ, ignorable: ignorable, data: root, dataStart: uint32(start), dataEnd: uint32(end), meta: *meta}
	if op != nil {
		r.flags |= flagOperation
	}
	return r, nil
}

// appendMeta renders surfaceOp and sourceEventSeqs in canonical form.
func appendMeta(buf []byte, meta *surfaceMeta) []byte {
	if meta.opPresent {
		if meta.opOK && meta.raw == nil || meta.opOK && meta.opCanonical {
			buf = append(buf, `,"surfaceOp":`...)
			buf = appendSurfaceOp(buf, meta.op)
		} else {
			buf = append(buf, `,"surfaceOp":`...)
			buf = meta.raw.op.AppendRaw(buf)
		}
	}
	if meta.srcPresent {
		buf = append(buf, `,"sourceEventSeqs":`...)
		if meta.srcOK {
			buf = appendSeqs(buf, meta.sources)
		} else {
			buf = meta.raw.src.AppendRaw(buf)
		}
	}
	return buf
}

func appendSurfaceOp(buf []byte, op SurfaceOp) []byte {
	if !op.Replace {
		return append(buf, `"append"`...)
	}
	buf = append(buf, `{"op":"replace","startSeq":`...)
	buf = strconv.AppendInt(buf, int64(op.StartSeq), 10)
	buf = append(buf, `,"endSeq":`...)
	buf = strconv.AppendInt(buf, int64(op.EndSeq), 10)
	return append(buf, '}')
}

func appendSeqs(buf []byte, seqs []sdk.Seq) []byte {
	buf = append(buf, '[')
	for i, s := range seqs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, int64(s), 10)
	}
	return append(buf, ']')
}

// envelopeMembers is the canonical member order of docs/format.md.
var envelopeMembers = [...]string{"seq", "time", "type", "data", "surfaceOp", "sourceEventSeqs", "ignorable", "operation"}

// ParseEnvelope reads one stored envelope (docs/format.md): the whole envelope
// is checked by the lossless-JSON rules, its members by the envelope rules
// (ENVELOPE_INVALID naming the member). The returned Event has not been
// through the class, payload or surface rules; Restore runs those. The
// bytes are copied; the Event never aliases b.
func ParseEnvelope(b []byte, maxEventBytes int) (Event, error) {
	r, err := parseEnvelope(b, maxEventBytes)
	if err != nil {
		return Event{}, err
	}
	return Event{r}, nil
}

// A StoredParser reads stored envelopes for a restore, as ParseEnvelope
// does, with three differences that make a long log cheap to load:
//   - the Event may alias b when b is already canonical (a stored log
//     normally is), so the caller must never modify b afterwards;
//   - it parses into a tape it reuses, and keeps a parse only where the
//     restore reads it again (see record);
//   - for an event of a core type other than request/header it also runs
//     the rules that depend on nothing before the event — its class and its
//     payload and message shape (docs/format.md) — so that
//     Restorer.AddEvents skips them. A rule the event breaks is not
//     reported here: the restore checks that event again and reports it in
//     log order, exactly as for a fresh envelope.
//
// A StoredParser is not safe for concurrent use; use one per goroutine.
// Its zero value is ready to use.
type StoredParser struct {
	rp  jsonv.Reparser
	buf []byte // the canonical encoding of the last envelope
}

// Parse reads one stored envelope; see StoredParser.
func (p *StoredParser) Parse(b []byte, maxEventBytes int) (Event, error) {
	r, err := p.parse(b, maxEventBytes)
	if err != nil {
		return Event{}, err
	}
	return Event{r}, nil
}

func (p *StoredParser) parse(b []byte, maxEventBytes int) (*record, error) {
	r, err := parseEnvelopeInto(b, maxEventBytes, p)
	if err != nil {
		return nil, err
	}
	r.precheck()
	if r.flags&flagChecked != 0 && !r.keepsParse() && !r.meta.malformed() {
		r.settle() // the reused tape is overwritten by the next parse
		return r, nil
	}
	// The restore reads this one's parse again: give it its own.
	if r, err = parseEnvelope(r.env, maxEventBytes); err != nil {
		return nil, err
	}
	r.precheck()
	return r, nil
}

// malformed reports whether the surface metadata is present but not well
// formed: the surface rules' errors quote the raw values.
func (m *surfaceMeta) malformed() bool {
	return m.opPresent && !m.opOK || m.srcPresent && !m.srcOK
}

// precheck runs the log-independent rules on r; see StoredParser.
func (r *record) precheck() {
	c, ok := coreClass(r.typ)
	if !ok || r.ignorable || r.typ == TypeRequestHeader { // a header's checks need the log before it
		return
	}
	r.cls = c
	if checkLocal(r, false) != nil {
		r.cls = classU
		return
	}
	r.flags |= flagChecked
}

// parseEnvelope parses b into its own buffer and tape; see ParseEnvelope.
func parseEnvelope(b []byte, maxEventBytes int) (*record, error) {
	return parseEnvelopeInto(b, maxEventBytes, nil)
}

// parseEnvelopeInto is parseEnvelope, or with p the StoredParser's parse:
// the record's values point into p's reused tape and its envelope aliases b
// when b is canonical.
func parseEnvelopeInto(b []byte, maxEventBytes int, p *StoredParser) (*record, error) {
	if maxEventBytes <= 0 {
		maxEventBytes = sdk.DefaultMaxEventBytes
	}
	if raw := sdk.MaxRawEventBytes(maxEventBytes); len(b) > raw {
		return nil, sdk.Errorf(sdk.CodeEventTooLarge, "restore", "envelope is %d bytes; the raw input cap is %d (2 × MaxEventBytes)", len(b), raw)
	}
	opts := jsonv.Options{Enclosing: 1} // data inside the envelope
	var doc *jsonv.Doc
	var err error
	if p != nil {
		p.buf, doc, err = p.rp.AppendParse(p.buf[:0], b, opts)
	} else {
		doc, err = jsonv.Parse(b, opts)
	}
	if err != nil {
		return nil, err
	}
	root := doc.Root()
	if root.Kind() != jsonv.Object {
		return nil, envelopeError("", "the envelope must be a JSON object")
	}
	var vals [len(envelopeMembers)]jsonv.Value
	ordered, last := true, -1
	for k, v := range root.Members() {
		idx := -1
		for i, name := range envelopeMembers {
			if k.StrEqual(name) {
				idx = i
				break
			}
		}
		if idx < 0 {
			name, _ := k.Str()
			return nil, envelopeError(name, "unknown envelope member "+strconv.Quote(name))
		}
		if idx < last {
			ordered = false
		}
		last = idx
		vals[idx] = v
	}
	for _, i := range [...]int{0, 1, 2, 3} {
		if !vals[i].Exists() {
			return nil, envelopeError(envelopeMembers[i], "required member "+strconv.Quote(envelopeMembers[i])+" is missing")
		}
	}
	seq, ok := seqValue(vals[0])
	if !ok {
		return nil, envelopeError("seq", "seq must be an integer-form number in 0 … 2^53−1; got "+string(vals[0].Bytes()))
	}
	tm, ok := seqValue(vals[1])
	if !ok {
		return nil, envelopeError("time", "time must be an integer-form number in 0 … 2^53−1; got "+string(vals[1].Bytes()))
	}
	typ, ok := typeString(vals[2])
	if !ok {
		return nil, envelopeError("type", "type must be a string; got "+string(vals[2].Bytes()))
	}
	ignorable := false
	if vals[6].Exists() {
		if b, ok := vals[6].Bool(); !ok || !b {
			return nil, envelopeError("ignorable", "ignorable must be the literal true when present; got "+string(vals[6].Bytes()))
		}
		ignorable = true
	}
	var opID string
	var opCount int64
	if vals[7].Exists() {
		if opID, opCount, err = envelope.Operation(vals[7]); err != nil {
			return nil, envelopeError("operation", err.Error())
		}
	}
	raw := rawMeta{op: vals[4], src: vals[5]}
	meta := surfaceMeta{opPresent: raw.op.Exists(), srcPresent: raw.src.Exists()}
	meta.op, meta.opOK = interpretSurfaceOp(vals[4])
	if c, _ := coreClass(typ); c == classS {
		meta.opCanonical = true
	}
	meta.sources, meta.srcOK = interpretSources(vals[5])
	if meta.opCanonical && meta.opOK && meta.op.Replace && string(vals[4].Bytes()) != string(appendSurfaceOp(nil, meta.op)) {
		ordered = false // a surface event's replace op is rendered canonically; other types keep theirs verbatim
	}
	if !ordered {
		// Rebuild in canonical member order, then read the rebuilt bytes so
		// every span points into the envelope the record keeps.
		buf := make([]byte, 0, len(b))
		buf = append(buf, `{"seq":`...)
		buf = strconv.AppendInt(buf, int64(seq), 10)
		buf = append(buf, `,"time":`...)
		buf = strconv.AppendInt(buf, int64(tm), 10)
		buf = append(buf, `,"type":`...)
		buf = jsonv.AppendString(buf, typ)
		buf = append(buf, `,"data":`...)
		buf = vals[3].AppendRaw(buf)
		withRaw := meta
		withRaw.raw = &raw
		buf = appendMeta(buf, &withRaw)
		if ignorable {
			buf = append(buf, `,"ignorable":true`...)
		}
		if opID != "" {
			buf = envelope.AppendOperation(buf, opID, opCount)
		}
		buf = append(buf, '}')
		return parseEnvelope(buf, maxEventBytes)
	}
	env := canonicalBytes(doc)
	if len(env) > maxEventBytes {
		return nil, sdk.Errorf(sdk.CodeEventTooLarge, "restore", "canonical envelope of type %q is %d bytes; MaxEventBytes is %d", typ, len(env), maxEventBytes)
	}
	if p != nil {
		if bytes.Equal(env, b) {
			env = b[:len(b):len(b)]
		} else {
			env = bytes.Clone(env)
		}
	}
	if p == nil || meta.malformed() { // p's tape is reused; the surface rules quote only a malformed one's
		meta.raw = &rawMeta{op: raw.op, src: raw.src}
	}
	start, end := vals[3].Span()
	r := &record{env: env, seq: sdk.Seq(seq), time: int64(tm), typ: typ, ignorable: ignorable,
		data: vals[3], dataStart: uint32(start), dataEnd: uint32(end), meta: meta}
	if opID != "" {
		r.flags |= flagOperation
	}
	return r, nil
}

// typeString reads the type member, reusing the constant for core types so
// the common case does not allocate.
func typeString(v jsonv.Value) (string, bool) {
	for _, t := range coreTypes {
		if v.StrEqual(t) {
			return t, true
		}
	}
	return v.Str()
}

// canonicalBytes returns the document's canonical buffer as a clipped view.
func canonicalBytes(doc *jsonv.Doc) []byte {
	_, end := doc.Root().Span()
	return doc.Buffer()[:end:end]
}

func envelopeError(member, detail string) error {
	e := sdk.Errorf(sdk.CodeEnvelopeInvalid, "restore", "%s", detail)
	if member != "" {
		e.Detail = "member " + strconv.Quote(member) + ": " + detail
	}
	return e
}

// seqValue reads an integer-form number in the Seq domain.
func seqValue(v jsonv.Value) (sdk.Seq, bool) {
	if v.Kind() != jsonv.Number || !v.IsIntegerForm() {
		return 0, false
	}
	n, ok := v.Int()
	if !ok || n < 0 || n > sdk.MaxSeq {
		return 0, false
	}
	return sdk.Seq(n), true
}

// interpretSurfaceOp reads "append" or {"op":"replace","startSeq":…,"endSeq":…}
// with exactly those members and Seq endpoints (rule S2e).
func interpretSurfaceOp(v jsonv.Value) (SurfaceOp, bool) {
	switch v.Kind() {
	case jsonv.String:
		return SurfaceOp{}, v.StrEqual("append")
	case jsonv.Object:
		if v.Len() != 3 || !v.Get("op").StrEqual("replace") {
			return SurfaceOp{}, false
		}
		start, ok1 := seqValue(v.Get("startSeq"))
		end, ok2 := seqValue(v.Get("endSeq"))
		if !ok1 || !ok2 {
			return SurfaceOp{}, false
		}
		return SurfaceOp{Replace: true, StartSeq: start, EndSeq: end}, true
	}
	return SurfaceOp{}, false
}

// interpretSources reads an array of Seqs (rule S4b).
func interpretSources(v jsonv.Value) ([]sdk.Seq, bool) {
	if v.Kind() != jsonv.Array {
		return nil, false
	}
	out := make([]sdk.Seq, 0, v.Len())
	for _, el := range v.Elements() {
		s, ok := seqValue(el)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
