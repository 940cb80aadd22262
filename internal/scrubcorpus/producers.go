package scrubcorpus

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Help is a help text a service writes beside a planted value: a test asserts it reaches
// the merchant word for word, so that the scrubber masks data and never the words that
// explain it.
const Help = "this endpoint takes Basic client credentials or a Bearer API key"

// EchoServer is an http.Handler standing for the service as a producer of text: it
// answers every request with the status and message Set last, as the service's JSON
// envelope, with "{path}" in the message replaced by the request's path and "{query}" by
// its raw query, as a service quoting the request does.
type EchoServer struct {
	mu      sync.Mutex
	status  int
	message string
}

// Set makes the server answer status with message from now on.
func (e *EchoServer) Set(status int, message string) {
	e.mu.Lock()
	e.status, e.message = status, message
	e.mu.Unlock()
}

// ServeHTTP answers r as Set says.
func (e *EchoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	status, message := e.status, e.message
	e.mu.Unlock()
	message = strings.NewReplacer("{query}", r.URL.RawQuery, "{path}", r.URL.EscapedPath()).Replace(message)
	body, _ := json.Marshal(map[string]any{"success": false, "message": message, "responseCode": "4000"})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// HangUp returns the base URL of a loopback server that reads the start of every request
// and closes the connection: the transport's error, quoting the request's URL, is the
// producer. It stops when the test ends.
func HangUp(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("scrubcorpus: listen: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, _ = io.ReadAtLeast(conn, make([]byte, 1), 1)
				conn.Close()
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// Budget returns the seed and the number of plants of a generative scrub test: seed 35
// and n by default, the fixed budget CI runs; SCRUB_CORPUS_N draws more and
// SCRUB_CORPUS_SEED another draw. It logs both, so that a failure is replayed with them.
func Budget(t testing.TB, n int) (uint64, int) {
	t.Helper()
	seed := uint64(35)
	if v := os.Getenv("SCRUB_CORPUS_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SCRUB_CORPUS_SEED: %v", err)
		}
		seed = s
	}
	if v := os.Getenv("SCRUB_CORPUS_N"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("SCRUB_CORPUS_N: %v", err)
		}
		n = m
	}
	t.Logf("scrub corpus: SCRUB_CORPUS_SEED=%d SCRUB_CORPUS_N=%d", seed, n)
	return seed, n
}
