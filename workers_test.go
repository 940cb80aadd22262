package billing

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every task handed to the workers runs at once, none waiting for another to end (a
// status check must never queue behind a hung store call), and once they end at most
// maxIdle workers stay, one of which takes the next task.
func TestWorkersRunEveryTaskAtOnceAndKeepFewIdle(t *testing.T) {
	w := newWorkers(4)
	release := make(chan struct{})
	var started, done sync.WaitGroup
	started.Add(100)
	done.Add(100)
	for range 100 {
		w.Go(func() {
			started.Done()
			<-release
			done.Done()
		})
	}
	started.Wait()
	close(release)
	done.Wait()
	for w.idle.Load() < 4 {
		runtime.Gosched() // the workers park or end
	}
	assert.Equal(t, int32(4), w.idle.Load())
	ran := make(chan struct{})
	w.Go(func() { close(ran) })
	<-ran
	for w.idle.Load() < 4 {
		runtime.Gosched()
	}
	assert.Equal(t, int32(4), w.idle.Load(), "the next task ran on an idle worker, which waits again")
}
