package main

import (
	"fmt"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// seqFlag is an optional sequence-number flag (--at, --from, --to). A value
// that is not an integer in 0 … MaxSeq is a bad flag value, which cobra
// reports as a usage error.
type seqFlag struct {
	v   int64
	set bool
}

// String returns the value, or "" when the flag was not given.
func (f *seqFlag) String() string {
	if !f.set {
		return ""
	}
	return strconv.FormatInt(f.v, 10)
}

// Set parses s.
func (f *seqFlag) Set(s string) error {
	v, err := parseSeq(s)
	if err != nil {
		return err
	}
	f.v, f.set = v, true
	return nil
}

// Type names the value in help output.
func (f *seqFlag) Type() string { return "SEQ" }

// ptr returns the value as a *sdk.Seq, nil when the flag was not given.
func (f *seqFlag) ptr() *sdk.Seq {
	if !f.set {
		return nil
	}
	s := sdk.Seq(f.v)
	return &s
}

// parseSeq parses a sequence number given on the command line.
func parseSeq(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > sdk.MaxSeq {
		return 0, fmt.Errorf("%q is not a sequence number (an integer in 0 … %d)", s, int64(sdk.MaxSeq))
	}
	return v, nil
}
