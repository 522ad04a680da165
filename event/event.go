package event

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// Reason says why an event was produced.
type Reason string

const (
	// ReasonStart is the first read of a subscription in this process.
	ReasonStart Reason = "start"
	// ReasonUpdate follows a notifications/resources/updated from the server.
	ReasonUpdate Reason = "update"
	// ReasonReconnect follows a re-established session: updates during the
	// gap are lost, so the watcher re-reads and says it is back.
	ReasonReconnect Reason = "reconnect"
)

// Values of MCPResourceEvent.ContentOmitted.
const (
	// OmittedTooLarge: the content exceeded the server's max_content_bytes or
	// the NATS max payload; ContentBytes and ContentSHA256 still describe it.
	OmittedTooLarge = "too_large"
	// OmittedNotFound: the server says the resource does not exist (a
	// tombstone); ContentBytes is 0.
	OmittedNotFound = "not_found"
	// OmittedBufferFull: the watcher's publish buffer was over its byte
	// bound (a long NATS outage), so the event carries only the hash and
	// size; read the resource itself for its content.
	OmittedBufferFull = "buffer_full"
)

// NATS header names set on every published event.
const (
	HeaderMsgID       = "Nats-Msg-Id"
	HeaderServer      = "Mcp-Server"
	HeaderURI         = "Mcp-Uri"
	HeaderReason      = "Mcp-Reason"
	HeaderContentType = "Content-Type"
)

// MCPResourceEvent is one observed state of one resource of one MCP server.
//
// Events are state, not a log: for a (ClientName, URI) pair a later Seq
// always carries content at least as new as an earlier one, and intermediate
// versions may be coalesced away, never the newest.
type MCPResourceEvent struct {
	// ID is unique per event and stays the same across publish retries; it
	// is also the Nats-Msg-Id, so JetStream drops redelivered duplicates.
	ID string `json:"id"`
	// ClientName is the configured name of the MCP server.
	ClientName string `json:"client_name"`
	// URI is the subscribed URI (as configured), even when the server's
	// notification named a sub-resource of it.
	URI    string `json:"uri"`
	Reason Reason `json:"reason"`
	// Resource is what resources/read returned; nil when ContentOmitted is set.
	Resource *Resource `json:"resource,omitempty"`
	// Time is when the read completed (UTC).
	Time time.Time `json:"time"`
	// Seq counts the events made for (ClientName, URI) by this process, from 1.
	Seq uint64 `json:"seq"`
	// ContentSHA256 is the hex sha256 of the contents' bytes in order (text as
	// UTF-8, blobs base64-decoded).
	ContentSHA256 string `json:"content_sha256"`
	// ContentBytes is the size hashed into ContentSHA256; always set when
	// ContentOmitted is.
	ContentBytes int `json:"content_bytes,omitempty"`
	// ContentOmitted is empty when Resource carries the content, otherwise one
	// of the Omitted* values.
	ContentOmitted string `json:"content_omitted,omitempty"`
	// ContentObject names the JetStream Object Store object that holds the
	// content when it was too large to inline and an object store is set.
	ContentObject string `json:"content_object,omitempty"`
}

// Resource is the result of resources/read.
type Resource struct {
	Contents []Content `json:"contents"`
}

// Content is one item of a read result: either Text or Blob (base64) is set.
type Content struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// Digest returns the hex sha256 of contents (text as UTF-8, blobs decoded)
// and the number of bytes hashed. A blob that is not valid base64 is hashed
// as its raw string and reported in err; the digest is still usable.
func Digest(contents []Content) (sum string, n int, err error) {
	h := sha256.New()
	var buf []byte
	for _, c := range contents {
		if c.Blob != "" {
			need := base64.StdEncoding.DecodedLen(len(c.Blob))
			if cap(buf) < need {
				buf = make([]byte, need)
			}
			m, derr := base64.StdEncoding.Decode(buf[:need], []byte(c.Blob))
			if derr != nil {
				if err == nil {
					err = derr
				}
				h.Write([]byte(c.Blob))
				n += len(c.Blob)
				continue
			}
			h.Write(buf[:m])
			n += m
			continue
		}
		h.Write([]byte(c.Text))
		n += len(c.Text)
	}
	var out [sha256.Size]byte
	return hex.EncodeToString(h.Sum(out[:0])), n, err
}
