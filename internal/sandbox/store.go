package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"time"
)

// entropy is where the sandbox's ids, keys, codes and references come from.
// Tests that compare two sandboxes give both the same stream.
var entropy io.Reader = rand.Reader

// random fills b from entropy.
func random(b []byte) {
	if _, err := io.ReadFull(entropy, b); err != nil {
		panic("sandbox: no randomness: " + err.Error())
	}
}

// randomBelow returns a uniform number in [0, n) drawn from entropy.
func randomBelow(n int64) int64 {
	k, err := rand.Int(entropy, big.NewInt(n))
	if err != nil {
		panic("sandbox: no randomness: " + err.Error())
	}
	return k.Int64()
}

// newID returns prefix (the spec's identifier prefix, e.g. "cust_") followed
// by 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	random(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// timeLayout writes timestamps as ISO 8601 in UTC with milliseconds (SPEC "Conventions").
const timeLayout = "2006-01-02T15:04:05.000Z"

// timestamp is a moment written on the wire in timeLayout. Records hold
// timestamps; a nullable one is a *timestamp (nil encodes as null).
type timestamp struct{ time.Time }

// MarshalJSON writes the moment in UTC with milliseconds.
func (t timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(timeLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timeLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads a moment written by MarshalJSON, as the state file keeps it.
func (t *timestamp) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return err
	}
	parsed, err := time.Parse(timeLayout, text)
	if err != nil {
		return err
	}
	t.Time = parsed
	return nil
}

// table holds the records of one kind in creation order with an index from id
// to position, so a lookup is a map access and a list resumes from a cursor
// without scanning what came before. Records are never removed (archiving and
// revoking are states), which keeps positions stable. Its zero value is empty
// and ready; it is guarded by the Server's mu like all resource state.
//
// Handlers change records in place under the lock and hand copies of them to
// the response writer, so a map inside a record (metadata) must be replaced
// whole, never modified in place.
type table[T any] struct {
	rows  []*T
	ids   []string
	index map[string]int
}

// insert appends the record with its id.
func (t *table[T]) insert(id string, row *T) {
	if t.index == nil {
		t.index = make(map[string]int)
	}
	t.index[id] = len(t.rows)
	t.rows = append(t.rows, row)
	t.ids = append(t.ids, id)
}

// get returns the record with id.
func (t *table[T]) get(id string) (*T, bool) {
	i, ok := t.index[id]
	if !ok {
		return nil, false
	}
	return t.rows[i], true
}

// len returns the number of records.
func (t *table[T]) len() int { return len(t.rows) }
