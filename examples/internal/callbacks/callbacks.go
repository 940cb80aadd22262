// Package callbacks serves an example's callback or webhook handler on this machine, where
// the embedded sandbox can reach it.
package callbacks

import (
	"net"
	"net/http"
	"time"
)

// Serve serves h on a free loopback port and returns its base URL and a function that
// stops it. In production the service is given a public HTTPS URL instead.
func Serve(h http.Handler) (url string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}
