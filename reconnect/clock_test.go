package reconnect_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpwatch/watcher/reconnect"
)

func TestRealClock(t *testing.T) {
	c := reconnect.RealClock()
	assert.WithinDuration(t, time.Now(), c.Now(), time.Minute)

	select {
	case <-c.NewTimer(0).C():
	case <-time.After(waitFor):
		t.Fatal("a zero timer did not fire")
	}
	tm := c.NewTimer(time.Hour)
	assert.True(t, tm.Stop())
	assert.False(t, tm.Stop())
}
