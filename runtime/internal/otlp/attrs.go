package otlp

import (
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
)

// The attributes logbook adds beside the semconv ones, and the semconv
// names the Go package no longer has a constant for.
const (
	// attrSession is the logbook session id (on the root span).
	attrSession = "logbook.session.id"
	// attrSeq is the seq of the event a span is keyed on.
	attrSeq = "logbook.seq"
	// attrTurn and attrStep are the turn and step numbers of the log.
	attrTurn = "logbook.turn"
	attrStep = "logbook.step"
	// attrEndReason is the kind of a turn/end's reason.
	attrEndReason = "logbook.turn.end_reason"
	// attrOpen marks a span the log leaves open (see the package doc).
	attrOpen = "logbook.open"
	// attrSystem is gen_ai.system, which semconv v1.37 renamed to
	// gen_ai.provider.name; it is still sent for the readers that predate
	// the rename.
	attrSystem = "gen_ai.system"
	// eventDetails is the semconv event that carries a model call's
	// messages.
	eventDetails = "gen_ai.client.inference.operation.details"
)

type kv = commonpb.KeyValue

func str(k, v string) *kv {
	return &kv{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func i64(k string, v int64) *kv {
	return &kv{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func f64(k string, v float64) *kv {
	return &kv{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
}

func boolean(k string, v bool) *kv {
	return &kv{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}}
}

func strs(k string, vs []string) *kv {
	a := &commonpb.ArrayValue{}
	for _, v := range vs {
		a.Values = append(a.Values, &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}})
	}
	return &kv{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: a}}}
}

// nanos converts Unix milliseconds to Unix nanoseconds (a negative time,
// which no valid event has, counts as 0).
func nanos(ms int64) uint64 {
	if ms < 0 {
		return 0
	}
	return uint64(ms) * 1e6
}
