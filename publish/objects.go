package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpwatch/watcher/event"
)

// objectTimeout bounds one object store upload.
const objectTimeout = 30 * time.Second

// ObjectName is the Object Store name under which the content of an
// oversize event is stored: "<server>/<uri_hash>/<content_sha256>". Equal
// content of a URI maps to the same object, so a retried upload is a no-op.
func ObjectName(ev *event.MCPResourceEvent) string {
	return ev.ClientName + "/" + URIHash(ev.URI) + "/" + ev.ContentSHA256
}

// objectLoop uploads the content of events too large for a message to the
// Object Store bucket publish.object_store, then hands each event back to the
// send loop carrying content_object. It runs while ctx lives; the send loop
// owns the slots it is handed (state stLarge).
func (p *Publisher) objectLoop(ctx context.Context) {
	var obs jetstream.ObjectStore
	for {
		var s *slot
		var e *entry
		p.mu.Lock()
		if len(p.objq) > 0 && p.connected.Load() {
			s = p.objq[0]
			p.objq[0] = nil
			p.objq = p.objq[1:]
			e = s.cur
		}
		p.mu.Unlock()
		if s == nil {
			select {
			case <-ctx.Done():
				return
			case <-p.objWake:
				continue
			}
		}

		var name string
		var err error
		if obs == nil {
			obs, err = p.objectStore(ctx)
		}
		if err == nil {
			name, err = p.putObject(ctx, obs, e)
		}

		p.mu.Lock()
		switch {
		case err != nil:
			p.failedLocked(s, fmt.Errorf("object store %s: %w", p.opts.Publish.ObjectStore, err), false)
		case s.next != nil:
			p.st.Superseded++
			p.m.superseded.Inc()
			p.buf.advance(s)
		default:
			p.omitLocked(s, event.OmittedTooLarge, name)
			p.buf.enqueue(s)
		}
		p.setGaugesLocked()
		p.mu.Unlock()
		if err != nil {
			p.log.Warn("cannot store oversize content in the object store; retrying",
				"server", e.ev.ClientName, "uri", e.ev.URI, "bucket", p.opts.Publish.ObjectStore, "err", err)
		}
		signal(p.wake)
	}
}

// objectStore opens the bucket, creating it when missing.
func (p *Publisher) objectStore(ctx context.Context) (jetstream.ObjectStore, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	bucket := p.opts.Publish.ObjectStore
	obs, err := p.js.ObjectStore(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = p.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      bucket,
			Description: "content of MCP resource events too large for a NATS message",
			Storage:     jetstream.FileStorage,
		})
		if err == nil {
			p.log.Info("created object store bucket", "bucket", bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open bucket %s: %w", bucket, err)
	}
	return obs, nil
}

// putObject stores e's resource as JSON ({"contents": [...]}) unless an
// object of that name exists, and returns the name.
func (p *Publisher) putObject(ctx context.Context, obs jetstream.ObjectStore, e *entry) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, objectTimeout)
	defer cancel()
	ev := *e.ev
	if ev.ContentSHA256 == "" {
		ev.ContentSHA256, _, _ = event.Digest(ev.Resource.Contents)
	}
	name := ObjectName(&ev)
	if _, err := obs.GetInfo(ctx, name); err == nil {
		return name, nil
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return "", err
	}
	data, err := json.Marshal(ev.Resource)
	if err != nil {
		return "", err
	}
	// Chunks must fit the server's max_payload, which may be below the
	// 128 KiB default chunk size.
	chunk := int64(128 << 10)
	if limit := p.maxPayload.Load() - 1024; limit > 0 && limit < chunk {
		chunk = limit
	}
	_, err = obs.Put(ctx, jetstream.ObjectMeta{
		Name:        name,
		Description: fmt.Sprintf("content of %s on %s, seq %d", ev.URI, ev.ClientName, ev.Seq),
		Headers:     map[string][]string{"Content-Type": {"application/json"}},
		Opts:        &jetstream.ObjectMetaOptions{ChunkSize: uint32(chunk)},
	}, bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	return name, nil
}
