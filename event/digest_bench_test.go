package event

import (
	"encoding/base64"
	"strings"
	"testing"
)

// Run with: go test -run '^$' -bench . -benchmem ./event/
//
// Digest runs once per read on the event path: one allocation for the
// hex string it returns is the floor.
func BenchmarkDigest(b *testing.B) {
	text := strings.Repeat("x", 1024)
	b.Run("text-1KiB", func(b *testing.B) {
		c := []Content{{URI: "file:///a", MIMEType: "text/plain", Text: text}}
		b.ReportAllocs()
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			_, _, _ = Digest(c)
		}
	})
	b.Run("blob-1KiB", func(b *testing.B) {
		c := []Content{{URI: "file:///a", MIMEType: "application/octet-stream", Blob: base64.StdEncoding.EncodeToString([]byte(text))}}
		b.ReportAllocs()
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			_, _, _ = Digest(c)
		}
	})
}
