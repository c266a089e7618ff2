package host

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Request returns the request a model would be sent right after the last
// event of sess, in format (one of provider.RequestFormats): logbook's
// {header, context, messages}, or the provider's body. Every door answers
// it from here: the /v1 request route, Connect's Request, the CLI's
// `request` and package logbook.
//
// A provider format needs the folded request header (it names the model):
// a session with none as of its last event is REQUEST_HEADER_MISSING, a
// state of the log rather than a bad payload; the logbook format shows the
// header as null. Another format is USAGE.
func Request(format string, sess *session.Session) ([]byte, error) {
	if err := provider.CheckFormat("request", "format", format, provider.RequestFormats()); err != nil {
		return nil, err
	}
	header := sess.AppendRequestHeaderJSON(nil)
	if format != provider.FormatLogbook && string(header) == "null" {
		return nil, headerMissing(sess, format)
	}
	ml, err := sess.Messages()
	if err != nil {
		return nil, err
	}
	return provider.Request(format, provider.RequestParts{
		Header:   header,
		Context:  sess.AppendRequestContextJSON(nil),
		Messages: ml.JSON(),
	})
}

// headerMissing is the REQUEST_HEADER_MISSING of a request for sess in
// provider format: Meta "format", and "at" (the last event's seq) when
// the log has events.
func headerMissing(sess *session.Session, format string) *sdk.Error {
	e := &sdk.Error{Code: sdk.CodeRequestHeaderMissing, Op: "request", SessionID: sess.ID(), Meta: map[string]string{"format": format}}
	if n := sess.Len(); n > 0 {
		at := strconv.FormatInt(int64(n)-1, 10)
		e.Meta["at"] = at
		e.Detail = "no request/header event up to seq " + at + ", and format " + format + " needs the model it sets; append a request/header, or ask for format logbook"
	} else {
		e.Detail = "the session holds no events yet, and format " + format + " needs the model a request/header sets; append one, or ask for format logbook"
	}
	return e
}
