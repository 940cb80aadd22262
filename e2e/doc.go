// Package e2e holds the SDK's end-to-end tests: the browser tests, which drive Chromium
// (through chromedp) against the sandbox's hosted checkout page and web SDK, and the
// checks that shell out to the go command on behalf of a merchant's module. It is a
// module of its own so that the browser libraries never reach the go.sum of a module
// that imports the SDK. Run it from this directory with go test ./...; without Chromium
// the browser tests skip, except under CI=true, where they fail.
package e2e
