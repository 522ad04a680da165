package reconnect_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"

	"github.com/mcpwatch/watcher/reconnect"
)

func TestPermanent(t *testing.T) {
	base := errors.New("stat /usr/bin/nope: no such file or directory")
	p := reconnect.Permanent(base)

	assert.True(t, reconnect.IsPermanent(p))
	assert.ErrorIs(t, p, base, "Permanent unwraps to the error")
	assert.Equal(t, base.Error(), p.Error(), "Permanent does not change the text")
	assert.True(t, reconnect.IsPermanent(fmt.Errorf("server a: start: %w", p)), "seen through wrapping")
	assert.True(t, reconnect.IsPermanent(backoff.Permanent(base)), "backoff.Permanent counts too")
	assert.False(t, reconnect.IsPermanent(base))
	assert.False(t, reconnect.IsPermanent(nil))
	assert.NoError(t, reconnect.Permanent(nil))
}
