package metrics

import (
	"net/http"
	"strconv"
)

// unmatchedRoute is the route label of a request no pattern serves.
const unmatchedRoute = "unmatched"

// InstrumentHTTP wraps next, whatever it does first (authentication, a
// refusal at shutdown), so that every request it answers is counted in
// logbook_http_requests_total by route and status. The route is the
// pattern of routes that served the request (Request.Pattern, as the
// ServeMux sets it), or that would have served it when next answered
// before reaching routes; "unmatched" when none matches. Patterns, not
// paths, keep the label's values bounded.
//
// It is written by hand rather than with promhttp's instrumentation,
// which labels by status and method only: the route is known only once
// the mux has matched the request.
func (m *Metrics) InstrumentHTTP(routes *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" {
			_, route = routes.Handler(r)
		}
		if route == "" {
			route = unmatchedRoute
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK // nothing written: net/http answers 200
		}
		m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	})
}

// statusWriter records the status of an answer. Unwrap lets
// http.ResponseController reach the connection's writer (deadlines,
// flushes), and Flush keeps streaming answers streaming.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 { // 1xx answers are informational
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what is buffered, as the wrapped writer's Flush does.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the wrapped writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
