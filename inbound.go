package billing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// This file is the inbound gate (DESIGN "One gate per boundary"): every JSON body that
// comes in from the network, an answer to any call or a webhook or callback, is read
// through readInbound before anything decodes it. The decoders downstream are tolerant:
// encoding/json matches keys without regard to case and keeps the last of two, and
// wireCode reads the response code under responseCode or code. A sender who writes one
// field twice, or in two spellings those readers take for one, could otherwise choose
// which value the SDK acts on. The gate sees every key of every object first: spellings
// of one field whose values agree are harmless (any reader of them reads the same
// value), and values that disagree are a contradiction, refused whole. The body that
// passes is given back in its canonical form: every key and every string with its JSON
// escapes decoded (and text that is no UTF-8 replaced as encoding/json replaces it), so
// that "\u0052esponseCode" is ResponseCode and "payment\u002esucceeded" is
// payment.succeeded to every reader downstream, the shape scanner and the event-name
// reader as much as encoding/json; and no field of it has two values, so every reader of
// it reads one truth. Nothing downstream reads the bytes as they came.

// receiveBody reads the body of a delivery, the first thing the gate does: POST only
// (405 otherwise), at most MaxEventBytes (413 beyond). It reports false when it has
// answered the sender itself.
func receiveBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhooks are delivered with POST", http.StatusMethodNotAllowed)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxEventBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "body larger than 1 MiB", http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "reading the body failed", http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// ErrContradiction is matched (errors.Is) by the error of a body that names one field
// twice with values that disagree: the same key twice, two casings of one key, or two
// keys the SDK reads as one (responseCode and code). For a money movement the answer is
// no answer, and the error matches ErrOutcomeUnknown too; a webhook or callback is
// refused with 403 and settles nothing.
var ErrContradiction = errors.New("billing: a field written twice with values that disagree")

// contradictionError names the field a body wrote twice.
type contradictionError struct {
	first, second string // the two spellings, as written (escapes left as they are)
}

func (e *contradictionError) Error() string {
	return fmt.Sprintf("%v: %q and %q", ErrContradiction, e.first, e.second)
}

func (e *contradictionError) Unwrap() error { return ErrContradiction }

// fieldAliases are the keys that the tolerant readers read as one field although they
// are no casings of one another, each where a reader folds them: the response code of
// an envelope or a webhook (wireCode.code) at the top level, and the acceptance of a
// receive or a send (acceptedWire.read) in the top-level data, and a mandate's id
// (wirePreApprovalID) in either. Each reader reads the
// first spelling of its group that holds a value. Keys are compared without regard to
// case, as encoding/json compares them.
var fieldAliases = [...]struct {
	names [2]string
	scope inboundScope
}{
	{[2]string{"responseCode", "code"}, scopeRoot},
	{[2]string{"id", "TransactionId"}, scopeData},
	{[2]string{"reference", "ClientReference"}, scopeData},
	{[2]string{"name", "RecipientName"}, scopeData},
	{[2]string{"fee", "Charges"}, scopeData},
	// A mandate's id (wirePreApprovalID): in the data of an answer, at the top of the
	// provider's callback.
	{[2]string{"servicePreApprovalId", "hubtelPreApprovalId"}, scopeData},
	{[2]string{"servicePreApprovalId", "hubtelPreApprovalId"}, scopeRoot},
}

// inboundScope says where an object lies in the body: the aliases of fieldAliases
// apply where their reader reads.
type inboundScope uint8

const (
	scopeOther inboundScope = iota
	scopeRoot               // the top-level object
	scopeData               // the object under the top-level data key
)

// maxInboundDepth is how deeply the gate follows nested arrays and objects: the bound
// encoding/json applies, so the gate refuses nothing it would read.
const maxInboundDepth = 10000

// readInbound checks that body is one JSON value, with nothing but white space after it,
// in which no object names a field twice with values that disagree, and returns its
// canonical form (see canonicalBody): body itself when no string of it holds an escape
// or text that is no UTF-8, which is what the service writes. The error is a syntax
// error or one matching ErrContradiction. It reads each byte once, and allocates only
// for a key written with escapes or outside ASCII, for an object of more than
// smallObject members, or for the canonical copy of a body that needs one.
func readInbound(body []byte) ([]byte, error) {
	r := inboundReaders.Get().(*inboundReader)
	defer r.release()
	r.b, r.pos = body, 0
	if err := r.value(0, scopeRoot); err != nil {
		return nil, err
	}
	r.space()
	if r.pos != len(r.b) {
		return nil, r.syntax("after the top-level value")
	}
	if r.contradiction != nil {
		return nil, r.contradiction
	}
	return r.canonicalBody(), nil
}

// canonicalBody returns the body read, each string listed in r.escaped written again
// decoded: its text as encoding/json reads it (escapes decoded, text that is no UTF-8
// replaced by U+FFFD), escaped only where JSON requires it (a quote, a backslash, a
// control character). Everything else is copied as it came, so a reader of the
// canonical form finds every value encoding/json finds in the body, spelled one way.
func (r *inboundReader) canonicalBody() []byte {
	if len(r.escaped) == 0 {
		return r.b
	}
	out := make([]byte, 0, len(r.b))
	last := 0
	for _, span := range r.escaped {
		out = append(out, r.b[last:span[0]]...)
		out = appendCanonicalString(out, r.b[span[0]+1:span[1]-1])
		last = span[1]
	}
	return append(out, r.b[last:]...)
}

// appendCanonicalString appends the contents of a JSON string the gate read (between its
// quotes, valid JSON) in its canonical spelling: decoded as encoding/json decodes it (a
// surrogate pair is one rune; a lone surrogate, and a byte that is no UTF-8, U+FFFD),
// then escaped only where JSON requires it: a quote, a backslash, a control character.
func appendCanonicalString(out, s []byte) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			var r rune
			r, i = unescape(s, i)
			out = appendCanonicalRune(out, r)
		case c < utf8.RuneSelf:
			out = appendCanonicalRune(out, rune(c))
			i++
		default:
			r, size := utf8.DecodeRune(s[i:]) // utf8.RuneError for a byte that is no UTF-8
			out = utf8.AppendRune(out, r)
			i += size
		}
	}
	return append(out, '"')
}

// unescape decodes the escape at s[i] (valid JSON) and returns its rune and where the
// text after it starts.
func unescape(s []byte, i int) (rune, int) {
	r, n := jsonEscape(s[i:])
	return r, i + n
}

// appendCanonicalRune appends r as the canonical form writes it inside a string.
func appendCanonicalRune(out []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	switch {
	case r == '"' || r == '\\':
		return append(out, '\\', byte(r))
	case r == '\n':
		return append(out, '\\', 'n')
	case r == '\r':
		return append(out, '\\', 'r')
	case r == '\t':
		return append(out, '\\', 't')
	case r < 0x20:
		return append(out, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
	}
	return utf8.AppendRune(out, r)
}

// inboundReaders keeps readers, with the room their member lists grew, for the next
// body.
var inboundReaders = sync.Pool{New: func() any { return new(inboundReader) }}

// release returns r to the pool, holding no part of the body it read.
func (r *inboundReader) release() {
	clear(r.members[:cap(r.members)])
	r.b, r.members, r.escaped, r.contradiction = nil, r.members[:0], r.escaped[:0], nil
	r.folds.Reset() // its strings were this body's keys: the next body folds into a buffer of its own
	if cap(r.members) <= 1024 && cap(r.escaped) <= 1024 {
		inboundReaders.Put(r)
	}
}

// inboundReader walks one body. members holds the members of the objects being read,
// innermost last: each object's frame starts where members was when it began.
type inboundReader struct {
	b       []byte
	pos     int
	members []inboundMember
	// escaped lists, in order, the start and end (quotes included) of every string
	// whose canonical spelling differs from the one written: one holding an escape or
	// text that is no UTF-8.
	escaped [][2]int
	// contradiction is the first field found written twice, disagreeing: returned once
	// the whole body is known to be JSON, so that a body that is no JSON is refused as
	// such whatever it repeats.
	contradiction error
	// folds holds the folded keys of the large objects' members, end to end: one
	// growing buffer for them all rather than a string each.
	folds strings.Builder
	// indexes are emptied indexes of large objects read, for the next (takeIndex).
	indexes []map[fieldName]int
}

// inboundMember is one key of an object, with where its value lies.
type inboundMember struct {
	key        []byte // between the quotes, escapes as written
	plain      bool   // key is ASCII without escapes: compared without folding it first
	alias      int8   // 1 + the index of its group in fieldAliases, or 0
	value      [2]int // start and end of the value in the body
	folded     string // the key folded as encoding/json folds it; computed when needed
	foldedDone bool
}

// smallObject is how many members an object may have before the gate indexes them in a
// map instead of comparing each new key with every earlier one. Comparing is cheaper up
// to about this many: two plain keys differ at their length or within their first bytes,
// while the index hashes and folds every key. Measured on keys alike in length and
// prefix ("field_name_12"), the two cost the same at 32 members and comparing is ahead
// below; on the 31 members of a wide customer comparing took 2.2 µs, the index 3.1 µs.
const smallObject = 32

func (r *inboundReader) syntax(where string) error {
	return fmt.Errorf("billing: invalid JSON at offset %d: %s", r.pos, where)
}

func (r *inboundReader) space() {
	for r.pos < len(r.b) {
		switch r.b[r.pos] {
		case ' ', '\t', '\r', '\n':
			r.pos++
		default:
			return
		}
	}
}

// value reads one value at depth; an object there lies in scope.
func (r *inboundReader) value(depth int, scope inboundScope) error {
	r.space()
	if r.pos >= len(r.b) {
		return r.syntax("a value is missing")
	}
	switch c := r.b[r.pos]; {
	case c == '{':
		if depth >= maxInboundDepth {
			return r.syntax("nested too deeply")
		}
		return r.object(depth+1, scope)
	case c == '[':
		if depth >= maxInboundDepth {
			return r.syntax("nested too deeply")
		}
		return r.array(depth + 1)
	case c == '"':
		_, err := r.str()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	}
	return r.syntax("not the start of a value")
}

func (r *inboundReader) literal(word string) error {
	if !bytes.HasPrefix(r.b[r.pos:], []byte(word)) {
		return r.syntax("not a literal")
	}
	r.pos += len(word)
	return nil
}

// number reads a number as RFC 8259 writes one.
func (r *inboundReader) number() error {
	b, i := r.b, r.pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return r.syntax("a number without digits")
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return r.syntax("a fraction without digits")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return r.syntax("an exponent without digits")
		}
	}
	r.pos = i
	return nil
}

// str reads a string whose opening quote is at r.pos, reporting whether its contents are
// plain: ASCII without escapes. A string whose canonical spelling differs from the one
// written (an escape, or text that is no UTF-8) is listed in r.escaped.
func (r *inboundReader) str() (plain bool, err error) {
	b := r.b
	start := r.pos
	plain, rewrite := true, false
	for i := r.pos + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			r.pos = i + 1
			if rewrite {
				r.escaped = append(r.escaped, [2]int{start, r.pos})
			}
			return plain, nil
		case c == '\\':
			plain, rewrite = false, true
			i++
			if i >= len(b) {
				break
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex4(b[i+1:i+5]) {
					r.pos = i
					return false, r.syntax("a \\u escape without four hex digits")
				}
				i += 4
			default:
				r.pos = i
				return false, r.syntax("an unknown escape")
			}
		case c < 0x20:
			r.pos = i
			return false, r.syntax("a control character in a string")
		case c >= utf8.RuneSelf:
			plain = false
			rn, size := utf8.DecodeRune(b[i:])
			if rn == utf8.RuneError && size == 1 {
				rewrite = true // encoding/json reads it as U+FFFD
			}
			i += size - 1
		}
	}
	r.pos = len(b)
	return false, r.syntax("an unterminated string")
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func (r *inboundReader) array(depth int) error {
	r.pos++ // [
	r.space()
	if r.pos < len(r.b) && r.b[r.pos] == ']' {
		r.pos++
		return nil
	}
	for {
		if err := r.value(depth, scopeOther); err != nil {
			return err
		}
		r.space()
		if r.pos >= len(r.b) {
			return r.syntax("an unterminated array")
		}
		switch r.b[r.pos] {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return nil
		default:
			return r.syntax("no comma between array items")
		}
	}
}

// object reads an object, checking each key against the earlier keys of the same object.
func (r *inboundReader) object(depth int, scope inboundScope) error {
	r.pos++ // {
	frame := len(r.members)
	var index map[fieldName]int // field -> member, once the object is no longer small
	defer func() {
		r.members = r.members[:frame]
		r.putIndex(index)
	}()
	r.space()
	if r.pos < len(r.b) && r.b[r.pos] == '}' {
		r.pos++
		return nil
	}
	for {
		r.space()
		if r.pos >= len(r.b) || r.b[r.pos] != '"' {
			return r.syntax("an object key must be a string")
		}
		keyStart := r.pos + 1
		plain, err := r.str()
		if err != nil {
			return err
		}
		m := inboundMember{key: r.b[keyStart : r.pos-1], plain: plain}
		m.alias = aliasOf(&m, scope)
		r.space()
		if r.pos >= len(r.b) || r.b[r.pos] != ':' {
			return r.syntax("no colon after an object key")
		}
		r.pos++
		r.space()
		m.value[0] = r.pos
		inner := scopeOther
		if scope == scopeRoot && keyIs(&m, "data") {
			inner = scopeData
		}
		if err := r.value(depth, inner); err != nil {
			return err
		}
		m.value[1] = r.pos
		r.addMember(frame, m, &index)
		r.space()
		if r.pos >= len(r.b) {
			return r.syntax("an unterminated object")
		}
		switch r.b[r.pos] {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return nil
		default:
			return r.syntax("no comma between object members")
		}
	}
}

// addMember records m in the object whose members start at frame, after checking that
// no earlier member is the same field with another value (see agree).
func (r *inboundReader) addMember(frame int, m inboundMember, index *map[fieldName]int) {
	siblings := r.members[frame:]
	if *index == nil && len(siblings) < smallObject {
		for i := range siblings {
			s := &siblings[i]
			if s.plain && m.plain && len(s.key) != len(m.key) && (m.alias == 0 || s.alias != m.alias) {
				continue // sameField at a glance: two plain keys of other lengths, no alias shared
			}
			if sameField(s, &m) {
				r.agree(s, &m)
			}
		}
		r.members = append(r.members, m)
		return
	}
	if *index == nil {
		*index = r.takeIndex()
		for i := range siblings {
			r.indexMember(*index, &siblings[i], frame+i)
		}
	}
	if at, ok := (*index)[fieldName{key: r.foldedKey(&m)}]; ok {
		r.agree(&r.members[at], &m)
	}
	if m.alias != 0 {
		if at, ok := (*index)[fieldName{alias: m.alias}]; ok {
			r.agree(&r.members[at], &m)
		}
	}
	r.members = append(r.members, m)
	at := len(r.members) - 1
	r.indexMember(*index, &r.members[at], at)
}

// maxKeptIndex is the most members an index of a large object may hold and still be
// kept for the next large object: a body of many wide objects (a page of customers)
// reuses a few maps rather than making one each.
const maxKeptIndex = 256

// takeIndex returns an empty index for a large object: one kept from an object read
// before, or a new one.
func (r *inboundReader) takeIndex() map[fieldName]int {
	if n := len(r.indexes); n > 0 {
		index := r.indexes[n-1]
		r.indexes = r.indexes[:n-1]
		return index
	}
	return make(map[fieldName]int, 2*smallObject)
}

// putIndex keeps index, emptied, for the next large object, unless it grew too large
// (or is nil: the object was small).
func (r *inboundReader) putIndex(index map[fieldName]int) {
	if index == nil || len(index) > maxKeptIndex || len(r.indexes) >= maxInboundIndexes {
		return
	}
	clear(index)
	r.indexes = append(r.indexes, index)
}

// maxInboundIndexes is how many emptied indexes a reader keeps: one per depth of wide
// objects nested in one another, which a body seldom has more than a few of.
const maxInboundIndexes = 8

// fieldName is a name under which a large object indexes its members: a folded key,
// or an alias group (key empty).
type fieldName struct {
	key   string
	alias int8
}

// indexMember records that the member m, at index at, answers to its folded key and,
// for an alias, to its group.
func (r *inboundReader) indexMember(index map[fieldName]int, m *inboundMember, at int) {
	index[fieldName{key: r.foldedKey(m)}] = at
	if m.alias != 0 {
		index[fieldName{alias: m.alias}] = at
	}
}

// agree records a contradiction unless the values of a and b, two spellings of one
// field, are the same JSON value.
func (r *inboundReader) agree(a, b *inboundMember) {
	if r.contradiction != nil {
		return
	}
	va, vb := r.b[a.value[0]:a.value[1]], r.b[b.value[0]:b.value[1]]
	if bytes.Equal(va, vb) {
		return
	}
	if a.alias != 0 && a.alias == b.alias && !sameKey(a, b) && (isEmptyValue(va) || isEmptyValue(vb)) {
		// The readers of an alias group read the first spelling that holds a value
		// (wireCode.code, firstText): an empty one competes with nothing.
		return
	}
	ca, errA := canonicalValue(va)
	cb, errB := canonicalValue(vb)
	if errA == nil && errB == nil && bytes.Equal(ca, cb) {
		return
	}
	r.contradiction = &contradictionError{first: string(a.key), second: string(b.key)}
}

// sameKey reports whether a and b are one key without regard to case.
func sameKey(a, b *inboundMember) bool {
	if a.plain && b.plain {
		return len(a.key) == len(b.key) && asciiEqualFold(a.key, b.key)
	}
	return foldedKey(a) == foldedKey(b)
}

// isEmptyValue reports whether v is null or the empty string: what the alias readers
// take for a missing value.
func isEmptyValue(v []byte) bool { return string(v) == "null" || string(v) == `""` }

// sameField reports whether two keys of one object are one field to the tolerant
// readers: equal without regard to case (as encoding/json folds them), or in one group
// of fieldAliases.
func sameField(a, b *inboundMember) bool {
	return (a.alias != 0 && a.alias == b.alias) || sameKey(a, b)
}

// aliasOf returns 1 + the index of m's group in fieldAliases, or 0, for a key of an
// object in scope.
func aliasOf(m *inboundMember, scope inboundScope) int8 {
	if m.plain && (len(m.key) >= 64 || aliasLengths[scope]&(1<<len(m.key)) == 0) {
		return 0 // no name of the scope's groups has the length of this plain key
	}
	// By index: ranging over the array by value would copy the whole table for every
	// key of the body.
	for i := range fieldAliases {
		group := &fieldAliases[i]
		if group.scope != scope {
			continue
		}
		for j := range group.names {
			if keyIs(m, group.names[j]) {
				return int8(i + 1)
			}
		}
	}
	return 0
}

// aliasLengths are, by scope, the lengths of the names in fieldAliases' groups, a bit
// each (every name is shorter than 64 bytes).
var aliasLengths = func() (by [scopeData + 1]uint64) {
	for _, group := range fieldAliases {
		for _, name := range group.names {
			if len(name) >= 64 {
				panic("billing: an alias of 64 bytes or more: aliasLengths cannot hold its length")
			}
			by[group.scope] |= 1 << len(name)
		}
	}
	return by
}()

// keyIs reports whether m's key is name to encoding/json.
func keyIs(m *inboundMember, name string) bool {
	if m.plain {
		return len(m.key) == len(name) && asciiEqualFold(m.key, []byte(name))
	}
	return foldedKey(m) == foldName(name)
}

func asciiEqualFold(a, b []byte) bool {
	for i := range a {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// foldedKey is the package's foldedKey, folding a plain ASCII key into r.folds.
func (r *inboundReader) foldedKey(m *inboundMember) string {
	if m.foldedDone || !m.plain {
		return foldedKey(m)
	}
	if r.folds.Cap() == 0 {
		r.folds.Grow(len(r.b) / 2)
	}
	start := r.folds.Len()
	for _, c := range m.key {
		if c >= utf8.RuneSelf {
			return foldedKey(m)
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		r.folds.WriteByte(c)
	}
	// A Builder only appends: what String returned before stays as it was.
	m.folded, m.foldedDone = r.folds.String()[start:], true
	return m.folded
}

// foldedKey returns m's key unescaped and folded as encoding/json folds keys.
func foldedKey(m *inboundMember) string {
	if !m.foldedDone {
		key := string(m.key)
		if !m.plain {
			var s string
			if err := json.Unmarshal(append(append([]byte{'"'}, m.key...), '"'), &s); err == nil {
				key = s
			}
		}
		m.folded, m.foldedDone = foldName(key), true
	}
	return m.folded
}

// foldName folds a key as encoding/json does when it matches keys to fields (ASCII
// letters upper-cased, any other rune mapped to the smallest rune it folds to), so that
// two keys fold alike exactly when encoding/json takes them for one.
func foldName(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			c := byte(r)
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			continue
		}
		out = utf8.AppendRune(out, foldRune(r))
	}
	return string(out)
}

// foldRune returns the smallest rune of r's fold orbit.
func foldRune(r rune) rune {
	for {
		next := unicode.SimpleFold(r)
		if next <= r {
			return next
		}
		r = next
	}
}

// canonicalValue writes a valid JSON value in one form: no white space, strings
// unescaped and written again the one way encoding/json writes them, numbers as
// written, objects' members in the order written. Two values with equal canonical forms
// read alike everywhere. It serves only spellings that differ, which are rare.
func canonicalValue(v []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	return appendCanonical(nil, dec)
}

func appendCanonical(out []byte, dec *json.Decoder) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		out = append(out, byte(t))
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out = append(out, ',')
			}
			if t == '{' {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				quoted, _ := json.Marshal(key)
				out = append(append(out, quoted...), ':')
			}
			if out, err = appendCanonical(out, dec); err != nil {
				return nil, err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return nil, err
		}
		return append(out, byte(end.(json.Delim))), nil
	case string:
		quoted, _ := json.Marshal(t)
		return append(out, quoted...), nil
	case json.Number:
		return append(out, t...), nil
	case bool:
		return strconv.AppendBool(out, t), nil
	}
	return append(out, "null"...), nil
}
