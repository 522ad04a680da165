package event

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends ev encoded as JSON to dst: byte for byte what
// json.Marshal(ev) produces, at a fraction of its cost (no reflection, and
// no second pass over the text). The publisher encodes every event with it.
func (ev *MCPResourceEvent) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, ev.ID)
	dst = append(dst, `,"client_name":`...)
	dst = appendString(dst, ev.ClientName)
	dst = append(dst, `,"uri":`...)
	dst = appendString(dst, ev.URI)
	dst = append(dst, `,"reason":`...)
	dst = appendString(dst, string(ev.Reason))
	if ev.Resource != nil {
		dst = append(dst, `,"resource":{"contents":`...)
		if ev.Resource.Contents == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, '[')
			for i := range ev.Resource.Contents {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = ev.Resource.Contents[i].appendJSON(dst)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"time":"`...)
	dst = ev.Time.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","seq":`...)
	dst = strconv.AppendUint(dst, ev.Seq, 10)
	dst = append(dst, `,"content_sha256":`...)
	dst = appendString(dst, ev.ContentSHA256)
	if ev.ContentBytes != 0 {
		dst = append(dst, `,"content_bytes":`...)
		dst = strconv.AppendInt(dst, int64(ev.ContentBytes), 10)
	}
	if ev.ContentOmitted != "" {
		dst = append(dst, `,"content_omitted":`...)
		dst = appendString(dst, ev.ContentOmitted)
	}
	if ev.ContentObject != "" {
		dst = append(dst, `,"content_object":`...)
		dst = appendString(dst, ev.ContentObject)
	}
	return append(dst, '}')
}

func (c *Content) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"uri":`...)
	dst = appendString(dst, c.URI)
	if c.MIMEType != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = appendString(dst, c.MIMEType)
	}
	if c.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, c.Text)
	}
	if c.Blob != "" {
		dst = append(dst, `,"blob":`...)
		dst = appendString(dst, c.Blob)
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes copied as they are: printable ASCII but the
// characters JSON or HTML need escaped.
var plain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = true
	}
	for _, b := range `"\<>&` {
		t[b] = false
	}
	return t
}()

// appendString quotes s as encoding/json does by default: HTML-sensitive
// <, > and & escaped, control characters escaped, invalid UTF-8 replaced
// by U+FFFD, and U+2028/U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if plain[s[i]] {
			i++
			continue
		}
		if b := s[i]; b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
