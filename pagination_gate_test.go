package billing

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// pageCalls are the SDK's page calls, by their method's name, each with a recorded page.
// TestEveryPageCallIsGated holds the list to every exported …Page method of the
// Client's services, so that a page call added later is driven through the gate too.
var pageCalls = map[string]struct {
	fixture string
	call    func(c *Client) (any, error)
}{
	"CustomersService.ListPage": {"customers/list_page1.json", func(c *Client) (any, error) {
		return c.Customers.ListPage(context.Background(), nil)
	}},
	"ProductsService.ListPage": {"products/list_page1.json", func(c *Client) (any, error) {
		return c.Products.ListPage(context.Background(), nil)
	}},
	"CreditsService.TransactionsPage": {"credits/transactions_page1.json", func(c *Client) (any, error) {
		return c.Credits.TransactionsPage(context.Background(), "cus_1", nil)
	}},
	"MetersService.EventsPage": {"meters/events_page1.json", func(c *Client) (any, error) {
		return c.Meters.EventsPage(context.Background(), "mtr_1", nil)
	}},
}

// TestEveryPageCallIsGated finds every exported method named …Page on the services the
// Client holds and requires pageCalls to drive it.
func TestEveryPageCallIsGated(t *testing.T) {
	c, _ := newMockClient(t)
	v := reflect.ValueOf(c).Elem()
	found := 0
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() || f.Kind() != reflect.Pointer || !strings.HasSuffix(f.Type().Elem().Name(), "Service") {
			continue
		}
		for j := range f.Type().NumMethod() {
			m := f.Type().Method(j)
			if !strings.HasSuffix(m.Name, "Page") {
				continue
			}
			name := f.Type().Elem().Name() + "." + m.Name
			_, ok := pageCalls[name]
			require.True(t, ok, "%s answers a page: add it to pageCalls", name)
			found++
		}
	}
	require.Equal(t, len(pageCalls), found, "pageCalls names a method that is no page call")
}

// TestPageEverySpelling answers every page call with its recorded page, every key of it
// written again in each spelling: disagreeing, the page is refused as a contradiction
// (a ledger entry's amount written twice must not be read either way); agreeing, it
// reads as recorded. A page is decoded as it arrives, so this holds the streamed path
// to the same gate as every other answer.
func TestPageEverySpelling(t *testing.T) {
	c, mock := newMockClient(t)
	var answer []byte
	mock.RegisterNoResponder(func(*http.Request) (*http.Response, error) {
		return httpmock.NewBytesResponse(http.StatusOK, answer), nil
	})
	var fixtures []fixtureFile
	owner := map[string]string{}
	recorded := map[string]any{}
	for name, pc := range pageCalls {
		fx := fixtureFile{name: pc.fixture, body: fixture(t, pc.fixture)}
		answer = fx.body
		page, err := pc.call(c)
		require.NoError(t, err, name)
		fixtures = append(fixtures, fx)
		owner[fx.name], recorded[fx.name] = name, page
	}
	cases := forEachSpelling(t, fixtures, func(t *testing.T, fx fixtureFile, desc string, body []byte, want spellingWant) {
		answer = body
		page, err := pageCalls[owner[fx.name]].call(c)
		switch want {
		case spellingContradicts:
			if !errors.Is(err, ErrContradiction) {
				t.Fatalf("%s: %+v (%v), want a contradiction", desc, page, err)
			}
		case spellingAgrees:
			// Metadata is a map, whose keys encoding/json keeps as written: a second
			// casing that agrees is a second entry there, and no contradiction.
			if err != nil || (!strings.Contains(desc, ".metadata.") && !reflect.DeepEqual(page, recorded[fx.name])) {
				t.Fatalf("%s: %+v (%v), want %+v", desc, page, err, recorded[fx.name])
			}
		default:
			if errors.Is(err, ErrContradiction) {
				t.Fatalf("%s: %v", desc, err)
			}
		}
	})
	t.Logf("%d spellings of %d pages checked", cases, len(fixtures))
}

// A page whose items are written with escapes reads as the same page unescaped: the
// streamed path reads the canonical form as every other reader does.
func TestPageReadsItsCanonicalForm(t *testing.T) {
	c, mock := newMockClient(t)
	plain := fixture(t, "credits/transactions_page1.json")
	escaped := strings.NewReplacer(`"amount"`, `"\u0061mount"`, `"USAGE"`, `"US\u0041GE"`, `"items"`, `"it\u0065ms"`).Replace(string(plain))
	var answer []byte
	mock.RegisterNoResponder(func(*http.Request) (*http.Response, error) {
		return httpmock.NewBytesResponse(http.StatusOK, answer), nil
	})
	answer = plain
	want, err := c.Credits.TransactionsPage(context.Background(), "cus_1", nil)
	require.NoError(t, err)
	answer = []byte(escaped)
	got, err := c.Credits.TransactionsPage(context.Background(), "cus_1", nil)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.NotEmpty(t, got.Items)
}

// A real HTTP/2 server, not a mock, sends every recorded page with one of its items'
// fields written again, disagreeing, in small flushed pieces: the streamed reader sees
// the body arrive in frames, and every page is still refused as a contradiction; sent
// whole and unchanged, it reads.
func TestPageOverHTTP2InPiecesPassesTheGate(t *testing.T) {
	var answer atomic.Value
	var proto atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		body := answer.Load().([]byte)
		w.Header().Set("Content-Type", "application/json")
		for len(body) > 0 {
			n := min(len(body), 37)
			_, _ = w.Write(body[:n])
			w.(http.Flusher).Flush()
			body = body[n:]
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c, _ := newTestClient(t, srv.URL, WithHTTPClient(srv.Client()), WithRetry(1, time.Millisecond, time.Millisecond))
	for name, pc := range pageCalls {
		body := fixture(t, pc.fixture)
		answer.Store(body)
		_, err := pc.call(c)
		require.NoError(t, err, name)
		require.EqualValues(t, 2, proto.Load(), "the page came over HTTP/2")
		// The first item's first key, written again after it with another value.
		i := bytes.Index(body, []byte(`"items"`))
		j := i + bytes.IndexByte(body[i:], '{') + 1
		k := j + bytes.IndexByte(body[j:], ',')
		first := string(body[j:k]) // "key": value
		colon := strings.IndexByte(first, ':')
		forged := append(append(append([]byte{}, body[:k]...), []byte(`,`+strings.ToUpper(first[:colon])+`:"forged"`)...), body[k:]...)
		answer.Store(forged)
		_, err = pc.call(c)
		require.ErrorIs(t, err, ErrContradiction, "%s over HTTP/2: %s", name, forged[:min(len(forged), 200)])
	}
}
