package rpcsize

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestAppendBatchLenFitsTheLimitAndTakesAtLeastOne(t *testing.T) {
	lens := []int{84, 84, 84, 4000, 10}
	envelopeLen := func(i int) int { return lens[i] }
	for _, tc := range []struct {
		name     string
		n, limit int
		want     int
	}{
		{"all fit", 3, 300, 3},
		{"exactly at the limit", 3, 3 * (84 + AppendEventOverhead), 3},
		{"one byte short cuts the last", 3, 3*(84+AppendEventOverhead) - 1, 2},
		{"an envelope over the limit goes alone", 5, 100, 1},
		{"stops before the one that does not fit", 5, 1000, 3},
		{"nothing to send", 0, 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AppendBatchLen(tc.n, tc.limit, envelopeLen); got != tc.want {
				t.Fatalf("AppendBatchLen(%d, %d) = %d, want %d", tc.n, tc.limit, got, tc.want)
			}
		})
	}
}

func TestMaxCopyBatchBytesIsCappedByTheRequestLimit(t *testing.T) {
	if got := MaxCopyBatchBytes(sdk.DefaultRPCMaxBytes); got != CopyBatchBytes {
		t.Errorf("default cap: %d, want CopyBatchBytes %d", got, CopyBatchBytes)
	}
	if got, want := MaxCopyBatchBytes(2<<20), 2<<20-RPCHeadroom; got != want {
		t.Errorf("2 MiB cap: %d, want %d", got, want)
	}
}
