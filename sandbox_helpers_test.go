package billing_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
