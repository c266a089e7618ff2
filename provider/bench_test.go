package provider

import "testing"

// BenchmarkRequest converts the derived messages of a long session (the
// corpus session's 150 messages twenty times over: 3,000 messages) to each
// provider's request body, the two formats alternating iteration by
// iteration; it reports messages/s and MB/s of input.
func BenchmarkRequest(b *testing.B) {
	header, one := corpusRequest(b)
	var msgs [][]byte
	size := 0
	for range 20 {
		for _, m := range one {
			msgs = append(msgs, m)
			size += len(m)
		}
	}
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
