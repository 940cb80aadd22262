package billing

import "testing"

// BenchmarkScrub measures the scrubber on the texts it sees: a path and a message with
// nothing to mask (the common case, which must not allocate), and a service message
// quoting a number, an email and a credential, percent-encoded.
func BenchmarkScrub(b *testing.B) {
	s := NewScrubber("cid-7f3a9c21", "cs-Qm4xT9vLp2", "cid-7f3a9c21:cs-Qm4xT9vLp2", "sk_live_9d8c7b6a5f4e")
	for name, text := range map[string]string{
		"clean":   "billing: customer get GET /v1/customers/cust_8f3a2b1c9d0e4f5a6b7c8d9e: HTTP 404 code 4000: customer not found (request id req_01H8X2)",
		"planted": "billing: GET /v1/customers?email=ama.mensah%2Bvip%40example.com: HTTP 401: unknown key sk_live_9d8c7b6a5f4e for msisdn=%2B233241239876",
	} {
		b.Run("text="+name+"/scrubber=client", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Text(text)
			}
		})
		b.Run("text="+name+"/scrubber=nil", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Scrub(text)
			}
		})
	}
}

// TestScrubCleanTextDoesNotAllocate: text with nothing to mask costs no allocation, so
// scrubbing every error and log line adds nothing to the garbage a call makes.
func TestScrubCleanTextDoesNotAllocate(t *testing.T) {
	s := NewScrubber("cid-7f3a9c21", "cs-Qm4xT9vLp2", "sk_live_9d8c7b6a5f4e")
	text := "billing: customer get GET /v1/customers/cust_8f3a2b1c9d0e4f5a6b7c8d9e: HTTP 404 code 4000: customer not found (request id req_01H8X2)"
	if n := testing.AllocsPerRun(100, func() { _ = s.Text(text) }); n != 0 {
		t.Fatalf("Scrubber.Text of clean text allocates %v times", n)
	}
}
