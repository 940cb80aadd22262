package pgstore_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// pgProxy stands between Tracker instances and the test's PostgreSQL, as the network
// does: it listens on 127.0.0.1 and forwards each connection to the cluster's unix
// socket, and it fails on command. It reads the client's side of the protocol frame by
// frame, so that its faults fall between messages and it knows a COMMIT when it sees one.
type pgProxy struct {
	t      testing.TB
	ln     net.Listener
	socket string

	mu    sync.Mutex
	conns map[*proxyConn]struct{}
	// thaw is closed when a freeze ends; nil when not frozen.
	thaw chan struct{}
	// thawOpen is closed when a freeze of the connections then open ends (FreezeOpen).
	thawOpen chan struct{}
	// resetEvery resets every connection at one round trip (a Sync or a simple Query)
	// of any client in resetEvery, picked at random from a fixed seed, so that the
	// resets fall at no fixed point of the instances' cycles; 0 never.
	resetEvery int
	rng        *rand.Rand
	// loseCommits is how many more COMMITs have their answer lost; loseEvery picks one
	// COMMIT in loseEvery.
	loseCommits, loseEvery, commits int
	// loseOf is how many more transactions of a statement holding loseFragment, run
	// alone (its own transaction), have their answer lost.
	loseFragment string
	loseOf       int

	stats proxyStats
}

// proxyStats counts what the proxy did.
type proxyStats struct {
	Conns, Resets, Frozen, AnswersLost int
}

type proxyConn struct {
	client  net.Conn
	server  net.Conn // nil while frozen before it was dialled
	swallow bool     // drop what the server says next, then close: a COMMIT's answer lost
	// prepared holds the text of the statements the client prepared, by name; bound says
	// that a statement holding the proxy's loseFragment was bound since the last Sync.
	prepared map[string]string
	bound    bool
	closed   bool
	held     chan struct{} // closed when FreezeOpen's freeze of this connection ends; nil when not held
}

// startProxy starts a proxy to the PostgreSQL of databaseURL, which must listen on a
// unix socket (scripts/pgtest.sh's does), and returns it with its own database URL.
func startProxy(t testing.TB) (*pgProxy, *pgx.ConnConfig) {
	t.Helper()
	cfg, err := pgx.ParseConfig(databaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cfg.Host, "/") {
		t.Fatalf("the proxy dials PostgreSQL's unix socket; the test database is at host %q", cfg.Host)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{t: t, ln: ln, socket: fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port), conns: map[*proxyConn]struct{}{}}
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.Thaw()
		p.ResetAll()
	})
	addr := ln.Addr().(*net.TCPAddr)
	through := cfg.Copy()
	through.Host, through.Port = "127.0.0.1", uint16(addr.Port)
	return p, through
}

func (p *pgProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		pc := &proxyConn{client: c}
		p.mu.Lock()
		p.conns[pc] = struct{}{}
		p.stats.Conns++
		thaw := p.thaw
		p.mu.Unlock()
		go p.serve(pc, thaw)
	}
}

// serve dials the server for pc, once no freeze holds it, and forwards both ways.
func (p *pgProxy) serve(pc *proxyConn, thaw chan struct{}) {
	if thaw != nil {
		<-thaw // a connection made while frozen goes nowhere; the thaw closes it
		return
	}
	s, err := net.Dial("unix", p.socket)
	if err != nil {
		p.close(pc)
		return
	}
	p.mu.Lock()
	if pc.closed {
		p.mu.Unlock()
		_ = s.Close()
		return
	}
	pc.server = s
	p.mu.Unlock()
	go p.fromServer(pc)
	p.fromClient(pc)
}

// fromClient forwards the client's messages to the server one at a time.
func (p *pgProxy) fromClient(pc *proxyConn) {
	defer p.close(pc)
	r := bufio.NewReader(pc.client)
	startup := true
	for {
		msg, err := readMessage(r, startup)
		if err != nil {
			return
		}
		typed := !startup
		if startup {
			// An SSL or GSS encryption request is answered, then a startup follows.
			code := binary.BigEndian.Uint32(msg[4:8])
			startup = code == 80877103 || code == 80877104
		}
		if !p.before(pc, msg, typed) {
			return
		}
		if _, err := pc.server.Write(msg); err != nil {
			return
		}
	}
}

// before applies the faults due before msg (typed: not of the startup family) is
// forwarded; false when pc is gone.
func (p *pgProxy) before(pc *proxyConn, msg []byte, typed bool) bool {
	p.mu.Lock()
	thaw := p.frozenLocked(pc)
	p.mu.Unlock()
	if thaw != nil {
		<-thaw // frozen: nothing passes; the thaw closes every connection it held
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc.closed {
		return false
	}
	if !typed {
		return true
	}
	switch msg[0] {
	case 'S', 'Q':
		if p.resetEvery > 0 && p.rng.IntN(p.resetEvery) == 0 {
			p.resetAllLocked()
			return false
		}
	}
	p.loseAnswerOfLocked(pc, msg)
	if msg[0] == 'Q' && strings.EqualFold(strings.TrimRight(string(msg[5:]), "\x00; "), "commit") {
		p.commits++
		if p.loseCommits > 0 && p.commits%p.loseEvery == 0 {
			p.loseCommits--
			pc.swallow = true // set before the COMMIT leaves, so its answer is caught
		}
	}
	return true
}

// fromServer forwards what the server says, unless its answer is to be lost.
func (p *pgProxy) fromServer(pc *proxyConn) {
	defer p.close(pc)
	buf := make([]byte, 32<<10)
	for {
		n, err := pc.server.Read(buf)
		if n > 0 {
			p.mu.Lock()
			thaw, swallow := p.frozenLocked(pc), pc.swallow
			if swallow {
				p.stats.AnswersLost++
			}
			p.mu.Unlock()
			if swallow {
				return // the COMMIT was done; its answer goes nowhere
			}
			if thaw != nil {
				<-thaw
				return
			}
			if _, err := pc.client.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readMessage reads one message of the client's side of the protocol: the startup
// family has no type byte.
func readMessage(r *bufio.Reader, startup bool) ([]byte, error) {
	head := 5
	if startup {
		head = 4
	}
	msg := make([]byte, head, 512)
	if _, err := io.ReadFull(r, msg); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(msg[head-4:]))
	if n < 4 || n > 64<<20 {
		return nil, errors.New("pgproxy: bad message length")
	}
	msg = append(msg, make([]byte, n-4)...)
	if _, err := io.ReadFull(r, msg[head:]); err != nil {
		return nil, err
	}
	return msg, nil
}

// close shuts pc both ways; the client sees a reset, not a clean end.
func (p *pgProxy) close(pc *proxyConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLocked(pc)
}

func (p *pgProxy) closeLocked(pc *proxyConn) {
	if pc.closed {
		return
	}
	pc.closed = true
	delete(p.conns, pc)
	if tc, ok := pc.client.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = pc.client.Close()
	if pc.server != nil {
		_ = pc.server.Close()
	}
}

// ResetAll resets every connection open now.
func (p *pgProxy) ResetAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resetAllLocked()
}

func (p *pgProxy) resetAllLocked() {
	p.stats.Resets++
	for pc := range p.conns {
		p.closeLocked(pc)
	}
}

// ResetEvery resets every connection at one round trip in n, at random; 0 stops.
func (p *pgProxy) ResetEvery(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resetEvery, p.rng = n, rand.New(rand.NewPCG(20, uint64(n)))
}

// loseAnswerOfLocked follows the statements of pc that hold loseFragment: one run
// alone, by the extended protocol (Parse, Bind, ..., Sync, its transaction ending at the
// Sync) or as a simple query, has the answer of its commit lost.
func (p *pgProxy) loseAnswerOfLocked(pc *proxyConn, msg []byte) {
	if p.loseOf == 0 {
		return
	}
	cstrings := func(b []byte, n int) []string {
		var out []string
		for range n {
			i := bytes.IndexByte(b, 0)
			if i < 0 {
				break
			}
			out, b = append(out, string(b[:i])), b[i+1:]
		}
		return out
	}
	body := msg[5:]
	switch msg[0] {
	case 'P': // Parse: statement name, query
		if f := cstrings(body, 2); len(f) == 2 {
			if pc.prepared == nil {
				pc.prepared = map[string]string{}
			}
			pc.prepared[f[0]] = f[1]
		}
	case 'B': // Bind: portal name, statement name
		if f := cstrings(body, 2); len(f) == 2 && strings.Contains(pc.prepared[f[1]], p.loseFragment) {
			pc.bound = true
		}
	case 'S':
		if pc.bound {
			p.loseOf--
			pc.swallow = true
		}
		pc.bound = false
	case 'Q':
		if strings.Contains(string(body), p.loseFragment) {
			p.loseOf--
			pc.swallow = true
		}
	}
}

// LoseAnswersOf loses the answer of the next n statements holding fragment that run in
// a transaction of their own (as a store's single statements do): the statement reaches
// the server and commits, then its connection closes before the answer is forwarded.
func (p *pgProxy) LoseAnswersOf(fragment string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loseFragment, p.loseOf = fragment, n
}

// LoseCommitAnswers loses the answer of one COMMIT in every, n times: the COMMIT reaches
// the server and is done, then its connection closes before the answer is forwarded.
func (p *pgProxy) LoseCommitAnswers(n, every int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loseCommits, p.loseEvery, p.commits = n, every, 0
}

// Freeze stops forwarding, both ways, on every connection open and every one made until
// Thaw, leaving them open: half-open connections, whose other end is silent.
func (p *pgProxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.thaw == nil {
		p.thaw = make(chan struct{})
		p.stats.Frozen++
	}
}

// FreezeOpen stops forwarding, both ways, on every connection open now, leaving them
// open, while new connections are forwarded: one pooled connection's peer gone silent (a
// NAT's timeout), not the database.
func (p *pgProxy) FreezeOpen() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.thawOpen == nil {
		p.thawOpen = make(chan struct{})
	}
	for pc := range p.conns {
		pc.held = p.thawOpen
	}
	p.stats.Frozen++
}

// frozenLocked is the channel whose closing ends the freeze holding pc; nil when none.
func (p *pgProxy) frozenLocked(pc *proxyConn) chan struct{} {
	if p.thaw != nil {
		return p.thaw
	}
	return pc.held
}

// Thaw ends a freeze. The connections it held are dead (the database side is gone, as
// after a failover) and are closed; new ones are forwarded again.
func (p *pgProxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.thawOpen != nil {
		for pc := range p.conns {
			if pc.held != nil {
				p.closeLocked(pc)
			}
		}
		close(p.thawOpen)
		p.thawOpen = nil
	}
	if p.thaw == nil {
		return
	}
	for pc := range p.conns {
		p.closeLocked(pc)
	}
	close(p.thaw)
	p.thaw = nil
}

// Stats returns what the proxy did so far.
func (p *pgProxy) Stats() proxyStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}
