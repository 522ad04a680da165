// Package publish delivers MCP resource events to NATS, and can start the
// embedded NATS server the watcher uses when nats.url is empty.
//
// # Shape
//
// A Publisher is the final handler of every subscription's chain. Publish
// never blocks on NATS: it encodes the event and puts it in a bounded buffer
// keyed by (server, uri), one slot per key. A slot holds at most two events:
// cur, the one being delivered, and next, the newest one waiting behind it.
// A newer event replaces next, or cur while cur is not on the wire (waiting
// to be sent or backing off after a failure): that is "superseded". Events
// are state, not a log, so superseding keeps the buffer bounded through an
// outage without ever losing a URI's newest state.
//
// Run owns the connection and a single send loop. The loop takes ready slots
// and publishes their cur with JetStream async publish (at most
// publish.max_in_flight awaiting acks), one in flight per slot, so events of
// one URI reach the stream in seq order while different URIs never wait on
// each other. nats.go reports acks and failures through callbacks that only
// update the slot and wake the loop; nothing calls into nats.go with the
// publisher's lock held. A failed event (ack timeout, disconnect, no
// responders) is republished unchanged, with the same Nats-Msg-Id, after a
// jittered backoff (immediately after a reconnect). It is superseded by a
// newer event of its URI only when the failure proves it was not stored (no
// responders, a JetStream rejection); after an ack timeout or a disconnect a
// copy may still land late, so it is retried until acked, and the newer
// event follows. JetStream's duplicate window absorbs the copies a lost ack
// causes; acks flagged duplicate are counted.
//
// Events too large for the server's max_payload lose their content
// (content_omitted "too_large", content_bytes and content_sha256 kept) or,
// with publish.object_store set, have it uploaded to that Object Store bucket
// by a worker goroutine and carry content_object.
//
// With nats.jetstream.enabled false the loop publishes with core NATS:
// delivered means written to the connection, so an event can be lost in a
// disconnect (at most once), but order per URI holds.
//
// See docs/delivery.md for the guarantee, the buffer bounds and the metrics.
package publish
