package envelope_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
)

func TestSplitRoundTripsEveryMember(t *testing.T) {
	for _, ev := range []string{
		`{"seq":0,"time":0,"type":"turn/start","data":{"turn":1}}`,
		`{"seq":7,"time":9007199254740991,"type":"user/message","data":{"a":[1.50,-2e-3,"\u0001é\"\\"]},"surfaceOp":{"op":"replace","startSeq":1,"endSeq":2},"sourceEventSeqs":[1,2]}`,
		`{"seq":3,"time":5,"type":"x/y","data":null,"surfaceOp":"append"}`,
		`{"seq":3,"time":5,"type":"x/y","data":"s","sourceEventSeqs":[],"ignorable":true}`,
		`{"seq":3,"time":5,"type":"x/y","data":[[]],"ignorable":true}`,
	} {
		var c envelope.Checker
		if cp, err := c.Split("test", []byte(ev)); err != nil || string(cp.Append(nil)) != ev {
			t.Fatalf("Checker.Split(%s) = %v", ev, err)
		}
		p, err := envelope.Split("test", []byte(ev))
		if err != nil {
			t.Fatalf("Split(%s): %v", ev, err)
		}
		if got := string(p.Append(nil)); got != ev {
			t.Fatalf("round trip:\n got  %s\n want %s", got, ev)
		}
	}
}

func TestSplitRefusesWhatCannotRoundTrip(t *testing.T) {
	for what, ev := range map[string]string{
		"whitespace":         `{"seq":0, "time":0,"type":"t","data":1}`,
		"escaped name":       `{"seq":0,"time":0,"type":"t","d\u0061ta":1}`,
		"non-canonical data": `{"seq":0,"time":0,"type":"t","data":"\u0041"}`,
		"order":              `{"time":0,"seq":0,"type":"t","data":1}`,
		"unknown member":     `{"seq":0,"time":0,"type":"t","data":1,"extra":2}`,
		"missing data":       `{"seq":0,"time":0,"type":"t"}`,
		"ignorable false":    `{"seq":0,"time":0,"type":"t","data":1,"ignorable":false}`,
		"fractional time":    `{"seq":0,"time":1.5,"type":"t","data":1}`,
		"negative seq":       `{"seq":-1,"time":0,"type":"t","data":1}`,
		"type not a string":  `{"seq":0,"time":0,"type":7,"data":1}`,
		"not an object":      `[0]`,
		"not JSON":           `{"seq":0,`,
	} {
		_, err := envelope.Split("test", []byte(ev))
		if !errors.Is(err, sdk.CodeEnvelopeInvalid) {
			t.Errorf("%s: Split(%s) = %v; want ENVELOPE_INVALID", what, ev, err)
		}
		var c envelope.Checker
		if _, err := c.Split("test", []byte(ev)); !errors.Is(err, sdk.CodeEnvelopeInvalid) {
			t.Errorf("%s: Checker.Split(%s) = %v; want ENVELOPE_INVALID", what, ev, err)
		}
	}
}

func TestCheckerAllocatesOnlyTheTypeOnceWarm(t *testing.T) {
	ev := []byte(`{"seq":4,"time":17,"type":"user/message","data":{"text":"hi","n":[1,2,3]},"surfaceOp":"append"}`)
	var c envelope.Checker
	if _, err := c.Split("test", ev); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Split("test", ev) }); n > 1 {
		t.Fatalf("a warm Checker allocates %v times per envelope; want at most 1 (the type string)", n)
	}
}

func ExampleSplit() {
	p, err := envelope.Split("mybackend", []byte(`{"seq":4,"time":17,"type":"user/message","data":{"text":"hi"},"surfaceOp":"append"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Seq, p.Type, string(p.Data), string(p.SurfaceOp))
	fmt.Println(string(p.Append(nil)))
	_, err = envelope.Split("mybackend", []byte(`{"seq":4, "time":17,"type":"t","data":1}`))
	fmt.Println(sdk.CodeOf(err))
	// Output:
	// 4 user/message {"text":"hi"} "append"
	// {"seq":4,"time":17,"type":"user/message","data":{"text":"hi"},"surfaceOp":"append"}
	// ENVELOPE_INVALID
}
