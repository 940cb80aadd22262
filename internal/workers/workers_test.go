package workers

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/billingsdk/billing-go/internal/goroutines"
)

// runAtOnce hands w n tasks that all wait until every one has started, so that none
// could have run after another, then waits until idle of their workers wait again.
func runAtOnce(w *Pool, n, idle int) {
	release := make(chan struct{})
	var started, done sync.WaitGroup
	started.Add(n)
	done.Add(n)
	for range n {
		w.Go(func() {
			started.Done()
			<-release
			done.Done()
		})
	}
	started.Wait()
	close(release)
	done.Wait()
	for w.Waiting() < idle {
		runtime.Gosched() // the workers park or end
	}
}

// Every task handed to the workers runs at once, none waiting for another to end (a
// status check must never queue behind a hung store call), and once they end at most
// maxIdle workers stay, one of which takes the next task.
func TestWorkersRunEveryTaskAtOnceAndKeepFewIdle(t *testing.T) {
	w := New(4)
	runAtOnce(w, 100, 4)
	assert.Equal(t, 4, w.Waiting())
	ran := make(chan struct{})
	w.Go(func() { close(ran) })
	<-ran
	for w.Waiting() < 4 {
		runtime.Gosched()
	}
	assert.Equal(t, 4, w.Waiting(), "the next task ran on an idle worker, which waits again")
}

// The worker that waited last takes the next task: under a steady load of one task at
// a time, one worker runs them all and the others wait untouched (the collector shrinks
// a waiting goroutine's stack, which a task on it then grows again).
func TestWorkersHandTheNextTaskToTheLatestIdle(t *testing.T) {
	w := New(8)
	runAtOnce(w, 8, 8)
	ran := map[string]int{}
	where := make(chan string)
	for range 100 {
		w.Go(func() { where <- goroutines.ID() })
		ran[<-where]++
		for w.Waiting() < 8 {
			runtime.Gosched() // the worker waits again
		}
	}
	assert.Len(t, ran, 1, "one worker ran every task: %v", ran)
}
