package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
)

// KeepState makes the sandbox keep its state in the file at path, so that a
// restart (to change a flag, or after a crash) serves what it served before:
// records, money movements, the delivery log, its time and the work it had
// scheduled. A file there is loaded first, into a sandbox that holds nothing
// yet; loaded says whether there was one. From then on the file is written
// again after every request that changed the state, before the answer is
// sent, and after every scheduled job, so an answer the sandbox gave
// survives even SIGKILL.
//
// Each write goes to a temporary file beside it (mode 0600: the state holds
// phone numbers and callback URLs), synced, then renamed over the old, so
// the file is always one whole state. A file that is not a state this
// release wrote is refused with a *StateError and left as it is: move it
// away to start empty.
func (s *Server) KeepState(path string) (loaded bool, err error) {
	if s.keeper != nil {
		return false, errors.New("sandbox: KeepState was already called")
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, fmt.Errorf("sandbox: opening the state file: %w", err)
	default:
		err = s.LoadState(f)
		f.Close()
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		loaded = true
	}
	s.keeper = &keeper{path: path, loaded: loaded}
	s.sched.mu.Lock()
	s.sched.afterTask = func() { _ = s.keepState() }
	s.sched.mu.Unlock()
	return loaded, s.keepState()
}

// keeper writes the state file of KeepState.
type keeper struct {
	path   string
	loaded bool // the file held a state at start

	mu      sync.Mutex // serialises writes; guards last and failure
	last    []byte     // what the file holds
	failure error      // the last write's error, nil once one succeeds
}

// keepState writes the state file when the state differs from what it holds.
// A failure is logged and shown by GET /sandbox/identity; the sandbox goes on
// serving.
func (s *Server) keepState() error {
	k := s.keeper
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	state, err := s.marshalState()
	if err == nil && bytes.Equal(state, k.last) {
		return nil
	}
	if err == nil {
		err = writeAtomically(k.path, state)
	}
	if err != nil {
		if k.failure == nil || k.failure.Error() != err.Error() {
			s.cfg.Logger.Error("sandbox state not kept", slog.String("file", k.path), slog.String("error", err.Error()))
		}
		k.failure = err
		return err
	}
	k.last, k.failure = state, nil
	return nil
}

// stateView is what GET /sandbox/identity says of the state file.
type stateView struct {
	File     string `json:"file"`
	Restored bool   `json:"restored"`
	Error    string `json:"error,omitempty"`
}

// stateShown returns the identity's view of the state file, nil when none is kept.
func (s *Server) stateShown() *stateView {
	k := s.keeper
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	v := &stateView{File: k.path, Restored: k.loaded}
	if k.failure != nil {
		v.Error = k.failure.Error()
	}
	return v
}

// writeAtomically replaces the file at path with b: a temporary file in the
// same directory, synced, renamed over it, and the directory synced.
func writeAtomically(path string, b []byte) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("writing the state file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing by that name
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the state file: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the state file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the state file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing the state file: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself is durable once the directory is
		d.Close()
	}
	return nil
}

// heldResponse holds a handler's answer until the state it produced is
// kept: the status and body are sent by send, after the state file is written.
type heldResponse struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	hijacked bool
}

func (h *heldResponse) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return h.body.Write(b)
}

// Hijack hands over the connection, for the faults that cut it: nothing held
// is sent then.
func (h *heldResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hijacker, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("sandbox: the connection cannot be taken over")
	}
	h.hijacked = true
	return hijacker.Hijack()
}

// send writes what the handler answered.
func (h *heldResponse) send() {
	if h.hijacked {
		return
	}
	if h.status == 0 {
		h.status = http.StatusOK
	}
	h.ResponseWriter.WriteHeader(h.status)
	_, _ = h.ResponseWriter.Write(h.body.Bytes())
}
