package billing

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
)

// readStatus reads a kind's status check the way its row does, without comparing the
// reference its answer names: for tests of the wire reading alone, whose fixtures name
// their own references.
func readStatus(c *Client, kind Kind, ref string) (*Outcome, error) {
	return movements[kind].status(context.Background(), c, Movement{Kind: kind, ClientReference: ref})
}

// referenceField matches the fields a status check names its movement by.
var referenceField = regexp.MustCompile(`("(?i:clientReference|clientReferenceId|reference)"\s*:\s*)"[^"]*"`)

// fixtureAbout is fixtureResponder with every reference the fixture names set to ref:
// a status check answers about the reference it was asked, or its answer is no answer.
func fixtureAbout(t testing.TB, status int, name, ref string) httpmock.Responder {
	body := referenceField.ReplaceAll(fixture(t, name), []byte(`${1}"`+ref+`"`))
	return func(*http.Request) (*http.Response, error) {
		resp := httpmock.NewBytesResponse(status, body)
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	}
}

// fixtureAsked is fixtureAbout for the reference the request asks about: its
// clientReference query, else the last segment of its path (before /status).
func fixtureAsked(t testing.TB, status int, name string) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		ref := r.URL.Query().Get("clientReference")
		if ref == "" {
			segments := strings.Split(strings.TrimSuffix(r.URL.Path, "/status"), "/")
			ref = segments[len(segments)-1]
		}
		return fixtureAbout(t, status, name, ref)(r)
	}
}
