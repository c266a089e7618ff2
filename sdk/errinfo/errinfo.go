// Package errinfo carries a logbook error (*sdk.Error) across gRPC as a
// google.rpc.ErrorInfo detail: reason = the error code, domain
// "logbook", metadata = op, detail, session_id, seq, index and cause, plus
// one entry per member of the error's Meta (the "expected" and "actual"
// lengths of a SEQ_CONFLICT, the "appended" count of a failed append). The
// plugin protocol (sdk/pluginrpc), the server API (logbook serve) and its
// Go client (client) all speak it, so one decoder reads every logbook error.
// It lives in sdk because the plugin side of the protocol and the client
// use it, not only the host.
package errinfo

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Domain is the ErrorInfo domain of logbook errors.
const Domain = "logbook"

// MaxText bounds a status message and each metadata value: over gRPC they
// travel in HTTP/2 trailers, whose size is limited.
const MaxText = 8 << 10

// fixed names the metadata entries of the fields of sdk.Error; a Meta entry
// of one of these names is not carried (the field wins).
var fixed = map[string]bool{"op": true, "detail": true, "session_id": true, "seq": true, "index": true, "cause": true}

// Encode renders e as an ErrorInfo, every text clipped to MaxText. Each Meta
// entry becomes a metadata entry of its own, except one whose name is a
// field's.
func Encode(e *sdk.Error) *errdetails.ErrorInfo {
	md := make(map[string]string, 6+len(e.Meta))
	for k, v := range e.Meta {
		if !fixed[k] {
			md[k] = Clip(v)
		}
	}
	md["op"], md["detail"] = Clip(e.Op), Clip(e.Detail)
	if e.SessionID != "" {
		md["session_id"] = Clip(e.SessionID)
	}
	if e.Seq != nil {
		md["seq"] = strconv.FormatInt(*e.Seq, 10)
	}
	if e.Index != nil {
		md["index"] = strconv.Itoa(*e.Index)
	}
	if e.Err != nil {
		md["cause"] = Clip(e.Err.Error())
	}
	return &errdetails.ErrorInfo{Reason: string(e.Code), Domain: Domain, Metadata: md}
}

// Decode rebuilds the *sdk.Error an ErrorInfo carries; nil when info is
// not a logbook error (another domain, or no reason). The cause comes back
// as its text; every metadata entry that is not a field's comes back in
// Meta (nil when there is none).
func Decode(info *errdetails.ErrorInfo) *sdk.Error {
	if info.GetDomain() != Domain || info.GetReason() == "" {
		return nil
	}
	md := info.GetMetadata()
	e := &sdk.Error{Code: sdk.Code(info.GetReason()), Op: md["op"], SessionID: md["session_id"], Detail: md["detail"]}
	if v, err := strconv.ParseInt(md["seq"], 10, 64); err == nil {
		e.Seq = &v
	}
	if v, err := strconv.Atoi(md["index"]); err == nil {
		e.Index = &v
	}
	if c, ok := md["cause"]; ok {
		e.Err = errors.New(c)
	}
	for k, v := range md {
		if !fixed[k] {
			if e.Meta == nil {
				e.Meta = map[string]string{}
			}
			e.Meta[k] = v
		}
	}
	return e
}

// Clip shortens s to at most MaxText bytes, on a UTF-8 boundary.
func Clip(s string) string {
	if len(s) <= MaxText {
		return s
	}
	const mark = "…"
	n := MaxText - len(mark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}
