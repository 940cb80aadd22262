package billing

import (
	"bytes"
	"encoding/json"
)

// Nullable is an optional field that can also be cleared. Its zero value is omitted from
// the request; Value(v) sends v; Null[T]() sends JSON null, which the service reads as
// "clear this field" (customer phone and description, license expiresAt).
//
// Fields of this type are tagged omitzero, so the zero value never reaches the wire.
type Nullable[T any] struct {
	value T
	set   bool
	null  bool
}

// Value returns a Nullable that sends v.
func Value[T any](v T) Nullable[T] { return Nullable[T]{value: v, set: true} }

// Null returns a Nullable that sends JSON null, clearing the field.
func Null[T any]() Nullable[T] { return Nullable[T]{set: true, null: true} }

// IsZero reports whether the field is omitted. It makes the omitzero tag work.
func (n Nullable[T]) IsZero() bool { return !n.set }

// IsNull reports whether the field is an explicit null.
func (n Nullable[T]) IsNull() bool { return n.set && n.null }

// Get returns the value and whether one is set (false for omitted and for null).
func (n Nullable[T]) Get() (T, bool) { return n.value, n.set && !n.null }

// MarshalJSON writes the value, or null.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.set || n.null {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

// UnmarshalJSON reads a value or null; either way the field counts as set.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*n = Null[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Value(v)
	return nil
}
