package server

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecodeSelect decodes a 1,000-candidate request with the service's
// decoder and, as the baseline it replaces, with encoding/json into the
// struct shape the CLI reads.
func BenchmarkDecodeSelect(b *testing.B) {
	body := string(benchBody(benchCandidates(1000), "adaptivek"))
	b.Run("server", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			r := getSelectRequest()
			if err := decodeSelect(body, r, testLimits); err != nil {
				b.Fatal(err)
			}
			putSelectRequest(r)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var r struct {
				Strategy   string `json:"strategy"`
				Candidates []struct {
					ID     json.RawMessage `json:"id"`
					Score  *float64        `json:"score"`
					Tokens *int            `json:"tokens"`
					Text   *string         `json:"text"`
				} `json:"candidates"`
			}
			if err := json.Unmarshal([]byte(body), &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
