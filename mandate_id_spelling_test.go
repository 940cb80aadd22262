package billing

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// preApprovalIDSpellings returns every spelling of a mandate's id the SDK reads: each
// key of wirePreApprovalID (the spec's servicePreApprovalId, the provider's
// hubtelPreApprovalId), with a capital first letter (the callbacks' casing) and with
// "Preapproval" for "PreApproval" (the provider's status answer and callback).
func preApprovalIDSpellings(t *testing.T) []string {
	t.Helper()
	typ := reflect.TypeFor[wirePreApprovalID]()
	var spellings []string
	for i := range typ.NumField() {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		for _, k := range []string{key, strings.ReplaceAll(key, "PreApproval", "Preapproval")} {
			spellings = append(spellings, k, strings.ToUpper(k[:1])+k[1:])
		}
	}
	for _, provider := range []string{"hubtelPreApprovalId", "hubtelPreapprovalId", "HubtelPreapprovalId"} {
		require.Contains(t, spellings, provider, "the provider's own spelling")
	}
	return spellings
}

// isPreApprovalIDKey reports whether key names a mandate's id in any spelling.
func isPreApprovalIDKey(key string) bool {
	return strings.HasSuffix(strings.ToLower(key), "preapprovalid")
}

// preApprovalIDObject finds the object of body that holds a mandate's id: the body
// itself (a callback) or its data (an answer). It returns the object, its id key and
// whether the object is the whole body.
func preApprovalIDObject(body map[string]any) (obj map[string]any, key string, top bool) {
	for k := range body {
		if isPreApprovalIDKey(k) {
			return body, k, true
		}
	}
	for k, v := range body {
		if inner, ok := v.(map[string]any); ok && strings.EqualFold(k, "data") {
			for ik := range inner {
				if isPreApprovalIDKey(ik) {
					return inner, ik, false
				}
			}
		}
	}
	return nil, "", false
}

// Every recorded mandate answer and callback of both wires, its id re-spelled in each
// spelling the SDK knows, is read with the same id: by Mandate (answers and
// callbacks) and by ParseEvent (callbacks). The spec's wire and the provider's name the
// field differently, and a merchant meets both.
func TestMandateIDIsReadInEverySpellingOnBothWires(t *testing.T) {
	spellings := preApprovalIDSpellings(t)
	fixtures := 0
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") || strings.HasSuffix(path, "_request.json") {
			return err
		}
		raw := fixture(t, strings.TrimPrefix(filepath.ToSlash(path), "testdata/"))
		var body map[string]any
		if json.Unmarshal(raw, &body) != nil {
			return nil
		}
		obj, key, top := preApprovalIDObject(body)
		if obj == nil {
			return nil
		}
		fixtures++
		want, _ := obj[key].(string)
		require.NotEmpty(t, want, "%s: %s", path, key)
		for _, spelling := range spellings {
			delete(obj, key)
			obj[spelling] = want
			key = spelling
			respelled, err := json.Marshal(body)
			require.NoError(t, err)
			inner, err := json.Marshal(obj)
			require.NoError(t, err)

			var m Mandate
			require.NoError(t, json.Unmarshal(inner, &m), "%s as %s", path, spelling)
			assert.Equal(t, want, m.ServicePreApprovalID, "%s with the id as %s", path, spelling)
			if top {
				ev, err := ParseEvent(respelled)
				require.NoError(t, err, "%s as %s", path, spelling)
				cb, ok := ev.(*MandateCallback)
				require.True(t, ok, "%s is a mandate callback", path)
				assert.Equal(t, want, cb.ServicePreapprovalID, "%s with the id as %s", path, spelling)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, fixtures, 16, "the mandate fixtures of both wires")
}

// The SDK writes the spec's name whatever it reads: VerifyOTP sends servicePreApprovalId
// (strict writer), the recorded request.
func TestVerifyOTPWritesTheSpecsName(t *testing.T) {
	body, err := json.Marshal(&MandateVerifyOTPParams{CustomerMSISDN: "233201234567", ServicePreApprovalID: "pre1",
		ClientReferenceID: "m1", OTPCode: "ABCD-1234"})
	require.NoError(t, err)
	assert.True(t, bytes.Contains(body, []byte(`"servicePreApprovalId":"pre1"`)), "%s", body)
	assert.False(t, bytes.Contains(bytes.ToLower(body), []byte("hubtel")), "%s", body)
}
