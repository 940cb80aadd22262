package billing

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file decodes a response body into its result in one pass over the bytes, as
// json.Unmarshal would decode it. encoding/json validates the whole body first, then
// decodes it, and hands each value with an UnmarshalJSON method (every wire field of the
// SDK's) to that method after skipping over it once more; a wire field that unmarshals
// its own text starts the same again. The result's fields are found by the same rules
// (exported or promoted from an embedded struct, named by the json tag, matched exactly
// and then ignoring case), and a value of a kind read here is read here; any other value
// is given to json.Unmarshal alone. Whatever this reader does not settle exactly as
// json.Unmarshal would, it hands to json.Unmarshal whole: a key written with an escape,
// a value of the wrong type, a type it does not plan for. decodeJSON therefore returns
// what json.Unmarshal returns, fed the same bytes; FuzzDecodeJSONAgreesWithEncodingJSON
// holds it to that.

// decodeJSON decodes data into v, a non-nil pointer, as json.Unmarshal does.
func decodeJSON(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		if p := planOf(rv.Type().Elem()); p != nil {
			if end, ok := p.decode(data, skipSpace(data, 0), rv.Elem(), 0); ok && skipSpace(data, end) == len(data) {
				return nil
			}
		}
	}
	return json.Unmarshal(data, v)
}

// A plan is how the reader decodes a value of one type.
type plan struct {
	kind   planKind
	fields []planField          // planStruct: the fields by json.Unmarshal's rules, in order
	exact  map[string]int       // planStruct: field index by exact name
	folded map[string]int       // planStruct: the first field by ASCII name in lower case; nil when a name is not ASCII
	elem   *plan                // planPointer: the pointed-to value's
	typ    reflect.Type         // the value's type
	newPtr func() reflect.Value // planPointer: a new value to point at
}

type planKind uint8

const (
	planDelegate    planKind = iota // json.Unmarshal of the value's bytes
	planUnmarshaler                 // the type's own UnmarshalJSON
	planString
	planBool
	planInt
	planStruct
	planPointer // a pointer to bool, string or int
	planAnyMap  // a map of strings to any (Metadata): its values read as json.Unmarshal reads into any
)

type planField struct {
	name  string
	index []int // as reflect.Value.FieldByIndex
	plan  *plan
}

var (
	mapOfAny         = reflect.TypeFor[map[string]any]()
	plans            sync.Map // reflect.Type → *plan, or a nil *plan for a type json.Unmarshal reads whole
	unmarshalerType  = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerT = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// planOf returns the plan of a value of type t, or nil when json.Unmarshal is to read
// such a value whole: a top-level type that is no struct and has no UnmarshalJSON, or a
// struct whose fields the rules below leave in doubt.
func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p := buildPlan(t, 0)
	if p != nil && p.kind != planStruct && p.kind != planUnmarshaler {
		p = nil
	}
	plans.Store(t, p)
	return p
}

// buildPlan plans a value of type t at struct depth depth; nil for a struct left to
// json.Unmarshal whole.
func buildPlan(t reflect.Type, depth int) *plan {
	p := &plan{typ: t}
	switch {
	case reflect.PointerTo(t).Implements(unmarshalerType) && t.Kind() != reflect.Pointer:
		p.kind = planUnmarshaler
	case reflect.PointerTo(t).Implements(textUnmarshalerT) || t.Implements(unmarshalerType) || t.Implements(textUnmarshalerT):
		p.kind = planDelegate
	case t.Kind() == reflect.String:
		p.kind = planString
	case t.Kind() == reflect.Bool:
		p.kind = planBool
	case t.Kind() == reflect.Int64 || t.Kind() == reflect.Int || t.Kind() == reflect.Int32:
		p.kind = planInt
	case t.Kind() == reflect.Pointer && t.Name() == "":
		elem := t.Elem()
		switch elem.Kind() {
		case reflect.Bool, reflect.String, reflect.Int64, reflect.Int:
			if e := buildPlan(elem, depth); e != nil && e.kind != planDelegate && e.kind != planUnmarshaler {
				p.kind, p.elem = planPointer, e
				p.newPtr = func() reflect.Value { return reflect.New(elem) }
			}
		}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Key().NumMethod() == 0 &&
		t.Elem().Kind() == reflect.Interface && t.Elem().NumMethod() == 0:
		p.kind = planAnyMap
	case t.Kind() == reflect.Struct && depth < 8:
		fields, ok := structFields(t)
		if !ok {
			if depth == 0 {
				return nil
			}
			return p // the struct as a field: json.Unmarshal reads it
		}
		p.kind, p.exact, p.folded = planStruct, make(map[string]int, len(fields)), make(map[string]int, len(fields))
		for i := range fields {
			fields[i].plan = buildPlan(t.FieldByIndex(fields[i].index).Type, depth+1)
			p.exact[fields[i].name] = i
			var buf [maxFoldedKey]byte
			lower, ok := asciiLower(&buf, []byte(fields[i].name))
			if !ok {
				p.folded = nil
			} else if _, taken := p.folded[string(lower)]; !taken && p.folded != nil {
				p.folded[string(lower)] = i
			}
		}
		p.fields = fields
	}
	return p
}

// structFields lists the fields json.Unmarshal fills in a struct of type t: exported
// ones, and those of untagged embedded structs, promoted; named by their json tag, or
// their Go name. ok is false when a name is claimed twice, an embedded struct comes by
// pointer, or a tag carries an option that changes how the value reads: json.Unmarshal
// settles those itself.
func structFields(t reflect.Type) (fields []planField, ok bool) {
	type level struct {
		typ   reflect.Type
		index []int
	}
	seen := map[string]bool{}
	current := []level{{t, nil}}
	for len(current) > 0 {
		var next []level
		for _, l := range current {
			for i := range l.typ.NumField() {
				sf := l.typ.Field(i)
				index := append(append([]int(nil), l.index...), i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						return nil, false
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if opts != "" && opts != "omitempty" && opts != "omitzero" && opts != "omitempty,omitzero" && opts != "omitzero,omitempty" {
					return nil, false
				}
				if !plainTagName(name) {
					return nil, false
				}
				if name == "" && sf.Anonymous && sf.Type.Kind() == reflect.Struct {
					if reflect.PointerTo(sf.Type).Implements(unmarshalerType) || reflect.PointerTo(sf.Type).Implements(textUnmarshalerT) {
						return nil, false
					}
					next = append(next, level{sf.Type, index})
					continue
				}
				if name == "" {
					name = sf.Name
				}
				if seen[name] {
					return nil, false
				}
				seen[name] = true
				fields = append(fields, planField{name: name, index: index})
			}
		}
		current = next
	}
	// encoding/json orders the fields by their index sequence.
	slices.SortFunc(fields, func(a, b planField) int { return slices.Compare(a.index, b.index) })
	return fields, true
}

// plainTagName reports whether a json tag's name is one encoding/json takes as written:
// letters, digits and underscores (or none, for the Go name).
func plainTagName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// field returns the index of the field key names: the one named exactly so, else the
// first whose name equals key ignoring case, as json.Unmarshal matches; -1 for none.
func (p *plan) field(key []byte) int {
	if i, ok := p.exact[string(key)]; ok {
		return i
	}
	if p.folded != nil {
		// Between ASCII texts, equal ignoring case is equal in lower case.
		var buf [maxFoldedKey]byte
		if lower, ok := asciiLower(&buf, key); ok {
			if i, ok := p.folded[string(lower)]; ok {
				return i
			}
			return -1
		}
	}
	for i := range p.fields {
		if equalFold(p.fields[i].name, key) {
			return i
		}
	}
	return -1
}

// maxFoldedKey is the longest key looked up in lower case; a longer one is compared
// with each field's name.
const maxFoldedKey = 64

// asciiLower writes s in lower case into buf and returns it; false when s is longer than
// buf or not all ASCII.
func asciiLower(buf *[maxFoldedKey]byte, s []byte) ([]byte, bool) {
	if len(s) > len(buf) {
		return nil, false
	}
	for i, c := range s {
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(s)], true
}

// equalFold reports whether name and key are equal ignoring case, as bytes.EqualFold
// (and so json.Unmarshal's key matching) has it.
func equalFold(name string, key []byte) bool {
	if len(name) != len(key) {
		// Unicode folds may differ in length (K and the Kelvin sign).
		return bytes.EqualFold([]byte(name), key)
	}
	for i := 0; i < len(name); i++ {
		a, b := name[i], key[i]
		if a >= utf8.RuneSelf || b >= utf8.RuneSelf {
			return bytes.EqualFold([]byte(name[i:]), key[i:])
		}
		if a == b {
			continue
		}
		if c := a | 0x20; c != b|0x20 || c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// maxDecodeDepth is how deep the reader follows objects and arrays; deeper bodies are
// json.Unmarshal's.
const maxDecodeDepth = 64

// decode reads the value at data[i:] into v by p and returns where it ends; ok is false
// when json.Unmarshal is to decode the whole body instead.
func (p *plan) decode(data []byte, i int, v reflect.Value, depth int) (end int, ok bool) {
	if i >= len(data) {
		return 0, false
	}
	switch p.kind {
	case planStruct:
		return p.decodeObject(data, i, v, depth)
	case planAnyMap:
		return p.decodeAnyMap(data, i, v, depth)
	case planUnmarshaler:
		end, ok = scanValue(data, i, depth)
		if !ok {
			return 0, false
		}
		err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data[i:end])
		return end, err == nil
	}
	end, ok = scanValue(data, i, depth)
	if !ok {
		return 0, false
	}
	return end, p.literal(data[i:end], v)
}

// literal sets v from the scalar value raw by p; false when json.Unmarshal must.
func (p *plan) literal(raw []byte, v reflect.Value) bool {
	null := raw[0] == 'n'
	switch p.kind {
	case planString:
		if null {
			return true
		}
		s, ok := plainString(raw)
		if !ok {
			break // escapes or bytes to replace: json.Unmarshal reads it, or refuses a non-string
		}
		v.SetString(s)
		return true
	case planBool:
		switch raw[0] {
		case 'n':
			return true
		case 't', 'f':
			v.SetBool(raw[0] == 't')
			return true
		}
		return false
	case planInt:
		if null {
			return true
		}
		if raw[0] != '-' && !isDigit(raw[0]) {
			return false
		}
		n, err := strconv.ParseInt(string(raw), 10, v.Type().Bits())
		if err != nil {
			return false
		}
		v.SetInt(n)
		return true
	case planPointer:
		if null {
			v.SetZero()
			return true
		}
		target := v
		if v.IsNil() {
			target = p.newPtr()
		}
		if !p.elem.literal(raw, target.Elem()) {
			return false
		}
		v.Set(target)
		return true
	}
	return json.Unmarshal(raw, v.Addr().Interface()) == nil
}

// plainString returns the text of the JSON string raw when it holds no escape and only
// valid UTF-8: its bytes as they are.
func plainString(raw []byte) (string, bool) {
	if raw[0] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// unquote returns the text of the JSON string b, as json.Unmarshal into a string
// returns it; without allocating beyond the string when b holds no escape.
func unquote(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' {
		if end, ok := scanString(b, 0); ok && end == len(b) {
			if s, ok := plainString(b); ok {
				return s, nil
			}
		}
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// decodeObject reads the object at data[i:] into the struct v.
func (p *plan) decodeObject(data []byte, i int, v reflect.Value, depth int) (int, bool) {
	switch data[i] {
	case 'n':
		return literalEnd(data, i, "null")
	case '{':
	default:
		return 0, false
	}
	if depth >= maxDecodeDepth {
		return 0, false
	}
	return members(data, i, func(key []byte, at int) (int, bool) {
		if bytes.IndexByte(key, '\\') >= 0 {
			return 0, false // an escaped key: json.Unmarshal unescapes it
		}
		if f := p.field(key); f >= 0 {
			field := p.fields[f]
			return field.plan.decode(data, at, v.FieldByIndex(field.index), depth+1)
		}
		return scanValue(data, at, depth+1)
	})
}

// members reads the object whose brace is data[i], calling value with each member's
// key, as written between its quotes, and where its value begins; value reads the value
// and returns where it ends. members returns where the object ends; false when data
// holds no object there, or value refused one.
func members(data []byte, i int, value func(key []byte, at int) (int, bool)) (int, bool) {
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return 0, false
		}
		keyEnd, ok := scanString(data, i)
		if !ok {
			return 0, false
		}
		key := data[i+1 : keyEnd-1]
		i = skipSpace(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return 0, false
		}
		end, ok := value(key, skipSpace(data, i+1))
		if !ok {
			return 0, false
		}
		var more bool
		if i, more, ok = afterElement(data, end, '}'); !more {
			return i, ok
		}
	}
}

// afterElement reads what follows an element of an object or array that ends at end: a
// comma, after which more follow from i, or closing, after which the container ends at
// i; ok is false for anything else.
func afterElement(data []byte, end int, closing byte) (i int, more, ok bool) {
	i = skipSpace(data, end)
	switch {
	case i >= len(data):
		return 0, false, false
	case data[i] == ',':
		return skipSpace(data, i+1), true, true
	case data[i] == closing:
		return i + 1, false, true
	}
	return 0, false, false
}

// decodeAnyMap reads the object at data[i:] into the map v, of strings to any, as
// json.Unmarshal does: into the map v holds, or a new one; null sets it to nil. A value
// that is a string without escapes, a number, true, false or null is read here; when one
// is not, or a key holds an escape, json.Unmarshal reads the whole object.
func (p *plan) decodeAnyMap(data []byte, i int, v reflect.Value, depth int) (int, bool) {
	end, ok := scanValue(data, i, depth)
	if !ok {
		return 0, false
	}
	if data[i] == 'n' {
		v.SetZero()
		return end, true
	}
	if data[i] != '{' || !p.anyMapMembers(data[i:end], v) {
		return end, json.Unmarshal(data[i:end], v.Addr().Interface()) == nil
	}
	return end, true
}

// anyMapMembers sets each member of the scanned object obj into the map v; false,
// having set nothing, when a member is one json.Unmarshal must read.
func (p *plan) anyMapMembers(obj []byte, v reflect.Value) bool {
	type member struct {
		key   string
		value any
	}
	var members [16]member
	read := members[:0]
	for i := skipSpace(obj, 1); obj[i] != '}'; {
		keyEnd, _ := scanString(obj, i)
		key, ok := plainString(obj[i:keyEnd])
		if !ok {
			return false
		}
		i = skipSpace(obj, skipSpace(obj, keyEnd)+1)
		end, _ := scanValue(obj, i, 0)
		raw := obj[i:end]
		var value any
		switch c := raw[0]; {
		case c == 'n':
		case c == 't' || c == 'f':
			value = c == 't'
		case c == '"':
			if value, ok = plainString(raw); !ok {
				return false
			}
		case c == '-' || isDigit(c):
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				return false
			}
			value = f
		default:
			return false // an object or an array: json.Unmarshal builds it
		}
		read = append(read, member{key, value})
		i = skipSpace(obj, end)
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(p.typ, len(read)))
	}
	if p.typ.ConvertibleTo(mapOfAny) {
		// Metadata: the map itself, without a reflect call per member.
		m := v.Convert(mapOfAny).Interface().(map[string]any)
		for _, r := range read {
			m[r.key] = r.value
		}
		return true
	}
	for _, m := range read {
		value := reflect.New(p.typ.Elem()).Elem()
		if m.value != nil {
			value.Set(reflect.ValueOf(m.value))
		}
		v.SetMapIndex(reflect.ValueOf(m.key).Convert(p.typ.Key()), value)
	}
	return true
}

// skipSpace returns the index of the first byte at or after i that is no JSON space.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanValue returns the end of the JSON value that begins at data[i]; ok is false when
// there is none there, or it is deeper than maxDecodeDepth.
func scanValue(data []byte, i, depth int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch c := data[i]; {
	case c == '"':
		return scanString(data, i)
	case c == '{' || c == '[':
		return scanContainer(data, i, depth)
	case c == 't':
		return literalEnd(data, i, "true")
	case c == 'f':
		return literalEnd(data, i, "false")
	case c == 'n':
		return literalEnd(data, i, "null")
	case c == '-' || isDigit(c):
		return scanNumber(data, i)
	}
	return 0, false
}

func literalEnd(data []byte, i int, word string) (int, bool) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return 0, false
	}
	return i + len(word), true
}

// scanString returns the end of the string that begins at data[i] (its quote).
func scanString(data []byte, i int) (int, bool) {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			j++
			if j >= len(data) {
				return 0, false
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(data)-j < 5 || !isHex4(data[j+1:j+5]) {
					return 0, false
				}
				j += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// scanNumber returns the end of the number that begins at data[i], by JSON's grammar.
func scanNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return 0, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || !isDigit(data[i]) {
			return 0, false
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return 0, false
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	return i, true
}

// scanContainer returns the end of the object or array that begins at data[i].
func scanContainer(data []byte, i, depth int) (int, bool) {
	if depth >= maxDecodeDepth {
		return 0, false
	}
	if data[i] == '{' {
		return members(data, i, func(_ []byte, at int) (int, bool) { return scanValue(data, at, depth+1) })
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := scanValue(data, i, depth+1)
		if !ok {
			return 0, false
		}
		var more bool
		if i, more, ok = afterElement(data, end, ']'); !more {
			return i, ok
		}
	}
}
