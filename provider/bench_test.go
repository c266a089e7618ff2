package provider

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/runtime/session"
)

// BenchmarkRequest converts the derived messages of a long session (3,000
// messages) to each provider's request body, the two formats alternating
// iteration by iteration; it reports messages/s and MB/s of input.
func BenchmarkRequest(b *testing.B) {
	s, err := session.Restore(context.Background(), session.Options{}, session.RestoreOptions{}, corpus.LongSession(5, 3000))
	if err != nil {
		b.Fatal(err)
	}
	ml, err := s.Messages()
	if err != nil {
		b.Fatal(err)
	}
	var msgs [][]byte
	size := 0
	for _, m := range ml.All() {
		msgs = append(msgs, m.JSON())
		size += len(m.JSON())
	}
	header := s.AppendRequestHeaderJSON(nil)
	b.SetBytes(int64(size))
	for i := 0; b.Loop(); i++ {
		convert := OpenAIRequest
		if i%2 == 1 {
			convert = AnthropicRequest
		}
		if _, err := convert(header, msgs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(msgs)*b.N)/b.Elapsed().Seconds(), "messages/s")
}
